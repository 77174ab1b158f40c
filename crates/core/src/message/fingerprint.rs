//! A message's fingerprint: 128 bits of hash over its fields, for code that meets the same
//! message again and again (a Codex rollout's compactions repeat most of their history:
//! `forgot` analyses each distinct message once, issue 36). Object keys are hashed in their
//! order, so two messages read from the same text have the same fingerprint; equal
//! messages whose keys come in another order may not (a caller then does the work twice,
//! never wrongly). Two different messages sharing 128 bits is not a case to plan for.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value};

/// Two hashers fed the same bytes, one of them salted first: 128 bits.
struct Pair(DefaultHasher, DefaultHasher);

impl Hasher for Pair {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

fn feed(v: &Value, h: &mut Pair) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => {
            2u8.hash(h);
            n.as_u64().hash(h);
            n.as_i64().hash(h);
            n.as_f64().map(f64::to_bits).hash(h);
        }
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                feed(x, h);
            }
        }
        Value::Object(o) => feed_map(o, h),
    }
}

fn feed_map(o: &Map<String, Value>, h: &mut Pair) {
    (5u8, o.len()).hash(h);
    for (k, x) in o {
        k.hash(h);
        feed(x, h);
    }
}

pub(super) fn of(raw: &Map<String, Value>) -> u128 {
    let mut salted = DefaultHasher::new();
    0x5eed_u64.hash(&mut salted);
    let mut h = Pair(DefaultHasher::new(), salted);
    feed_map(raw, &mut h);
    (u128::from(h.0.finish()) << 64) | u128::from(h.1.finish())
}

/// A field of a small JSON object, found by a scan (cheaper than hashing the name).
fn field<'v>(o: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    o.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// `Message::text_key`: the role and the content's texts fed to the hasher as they are, so
/// no string is built.
pub(super) fn text_key(o: &Map<String, Value>) -> u64 {
    let mut h = DefaultHasher::new();
    field(o, "role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .hash(&mut h);
    match field(o, "content") {
        Some(Value::String(t)) => t.hash(&mut h),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                if let Some(Value::String(t)) = b.as_object().and_then(|b| field(b, "text")) {
                    t.hash(&mut h);
                }
            }
        }
        _ => {}
    }
    h.finish()
}
