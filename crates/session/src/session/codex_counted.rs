//! A numbers-only read of a Codex rollout (`Detail::Numbers`, issue 36) counts each
//! `compacted` line's `replacement_history` while parsing the line, never building its
//! items as JSON values: most of a gigabyte rollout is those histories, and building them
//! was most of the time `inspect` took. Each item is read into a few borrowed fields
//! (`LiteItem`), sorted exactly as `codex_compaction::read_history` sorts a held item, and
//! the payload gets the counts under `COUNTED_KEY` in place of the history
//! (docs/pipeline.md, "Reading sessions"). A line this parser cannot read its way is
//! parsed whole as before, so its result (or its error) is the full parse's.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use super::codex_items::{Item, convert_item};
use super::lines::ParsedLine;

/// The payload key a counted history is put under (no Codex key starts with `ctxlab`).
pub(super) const COUNTED_KEY: &str = "ctxlab_counted_history";

/// Every non-empty line of `text` (its first line is line `first`), parsed with each
/// replacement history counted, not built.
pub(crate) fn parse_codex_counting_here(text: &str, first: usize) -> Vec<ParsedLine> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| ParsedLine {
            number: i + first,
            value: parse_line(l),
        })
        .collect()
}

/// One line: counted when it is an object whose payload is an object, else parsed whole.
pub(super) fn parse_line(line: &str) -> Result<Value, serde_json::Error> {
    if line.contains("\"replacement_history\"") {
        let mut de = serde_json::Deserializer::from_str(line);
        let counted = LineSeed
            .deserialize(&mut de)
            .and_then(|m| de.end().map(|()| m));
        if let Ok(map) = counted {
            return Ok(Value::Object(map));
        }
    }
    serde_json::from_str(line)
}

/// The visitor methods for every JSON value that is neither an object nor an array,
/// each giving `$v` (how a lenient reader treats a value of the wrong shape).
macro_rules! other_values {
    ($t:ty, $v:expr) => {
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
            Ok($v)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
            Ok($v)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
            Ok($v)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
            Ok($v)
        }
        fn visit_unit<E>(self) -> Result<$t, E> {
            Ok($v)
        }
    };
}

/// A string field read leniently: any other JSON value reads as absent, as `str_field`
/// treats it.
struct LenientStr<'de>(Option<Cow<'de, str>>);

impl<'de> serde::Deserialize<'de> for LenientStr<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientStr<'de>;
            other_values!(LenientStr<'de>, LenientStr(None));
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientStr(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A part of an item's `content`, as far as `codex_items` looks at one: its string
/// fields `type`, `text`, `refusal` and `image_url`; None for an element that is no object.
#[derive(Default)]
pub(super) struct Part<'de> {
    pub kind: Option<Cow<'de, str>>,
    pub text: Option<Cow<'de, str>>,
    pub refusal: Option<Cow<'de, str>>,
    pub image_url: Option<Cow<'de, str>>,
}

struct PartRead<'de>(Option<Part<'de>>);

impl<'de> serde::Deserialize<'de> for PartRead<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PartRead<'de>;
            other_values!(PartRead<'de>, PartRead(None));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(PartRead(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(PartRead(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut p = Part::default();
                while let Some(Key(k)) = m.next_key::<Key>()? {
                    let slot = match k.as_ref() {
                        "type" => &mut p.kind,
                        "text" => &mut p.text,
                        "refusal" => &mut p.refusal,
                        "image_url" => &mut p.image_url,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = m.next_value::<LenientStr>()?.0;
                }
                Ok(PartRead(Some(p)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A value read as a list: anything but an array reads as None, as `codex_items` treats
/// a `content` that is no list.
pub(super) struct Listed<T>(pub Option<Vec<T>>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Listed<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Listed<T>;
            other_values!(Listed<T>, Listed(None));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Listed(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Listed(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                let mut all = Vec::new();
                while let Some(x) = s.next_element::<T>()? {
                    all.push(x);
                }
                Ok(Listed(Some(all)))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A key, borrowed from the line when it has no escapes.
pub(super) struct Key<'de>(pub Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Whether a value is Codex's summary mark: an object whose `content_item_kinds` list
/// holds `"compaction.summary"` (`codex_compaction::marked_summary`).
struct SummaryMark(bool);

impl<'de> serde::Deserialize<'de> for SummaryMark {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SummaryMark;
            other_values!(SummaryMark, SummaryMark(false));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(SummaryMark(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(SummaryMark(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                // The last of repeated keys wins, as in a parsed map.
                let mut marked = false;
                while let Some(Key(k)) = m.next_key::<Key>()? {
                    if k == "content_item_kinds" {
                        let kinds = m.next_value::<Listed<LenientStr>>()?.0;
                        marked = kinds.is_some_and(|k| {
                            k.iter()
                                .any(|s| s.0.as_deref() == Some("compaction.summary"))
                        });
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(SummaryMark(marked))
            }
        }
        d.deserialize_any(V)
    }
}

/// A replacement history item as far as the count needs it: a `message` is sorted from
/// these fields; any other kind is rebuilt from the fields `convert_item` reads (absent
/// from messages, so never built for them) and converted as before.
#[derive(Default)]
pub(super) struct LiteItem<'de> {
    pub kind: Option<Cow<'de, str>>,
    pub role: Option<Cow<'de, str>>,
    pub id: Option<Cow<'de, str>>,
    pub content: Option<Vec<Option<Part<'de>>>>,
    pub marked: bool,
    /// `call_id`, `name`, `arguments`, `input`, `action`, `output`, `summary`.
    pub other: Map<String, Value>,
}

/// The keys of an item other than a message that `convert_item` reads.
const OTHER_KEYS: &[&str] = &[
    "call_id",
    "name",
    "arguments",
    "input",
    "action",
    "output",
    "summary",
];

/// An item: None when it is no object.
pub(super) struct ItemRead<'de>(pub Option<LiteItem<'de>>);

impl<'de> serde::Deserialize<'de> for ItemRead<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ItemRead<'de>;
            other_values!(ItemRead<'de>, ItemRead(None));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ItemRead(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ItemRead(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut it = LiteItem::default();
                while let Some(Key(k)) = m.next_key::<Key>()? {
                    match k.as_ref() {
                        "type" => it.kind = m.next_value::<LenientStr>()?.0,
                        "role" => it.role = m.next_value::<LenientStr>()?.0,
                        "id" => it.id = m.next_value::<LenientStr>()?.0,
                        "content" => {
                            it.content = m
                                .next_value::<Listed<PartRead>>()?
                                .0
                                .map(|parts| parts.into_iter().map(|p| p.0).collect())
                        }
                        "internal_chat_message_metadata_passthrough" => {
                            it.marked = m.next_value::<SummaryMark>()?.0
                        }
                        other if OTHER_KEYS.contains(&other) => {
                            let v: Value = m.next_value()?;
                            it.other.insert(other.to_string(), v);
                        }
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ItemRead(Some(it)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A metadata entry: whether it names a `retained_source` that is not null.
pub(super) struct Retained(pub bool);

impl<'de> serde::Deserialize<'de> for Retained {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Retained;
            other_values!(Retained, Retained(false));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Retained(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Retained(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut retained = false;
                while let Some(Key(k)) = m.next_key::<Key>()? {
                    if k == "retained_source" {
                        retained = m.next_value::<Option<IgnoredAny>>()?.is_some();
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Retained(retained))
            }
        }
        d.deserialize_any(V)
    }
}

/// How one item is sorted (`codex_compaction::read_history`'s cases).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sorted {
    /// A user, developer or system message; its text when it is one text (a hash, to
    /// compare with the summary once the line is read), `injected` as `convert_item`
    /// says.
    User {
        text: Option<(u64, usize)>,
        injected: bool,
        marked: bool,
    },
    /// An answer or a tool result.
    Other,
    EncryptedSummary,
    Skip(String),
    NotObject,
}

pub(super) fn text_key(text: &str) -> (u64, usize) {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    (h.finish(), text.len())
}

const TEXT_KINDS: &[&str] = &["input_text", "text", "output_text"];

pub(super) fn sort_item(item: Option<LiteItem>) -> Sorted {
    let Some(it) = item else {
        return Sorted::NotObject;
    };
    if it.kind.as_deref() != Some("message") {
        return sort_other(it);
    }
    let parts: Vec<&Part> = it.content.iter().flatten().flatten().collect();
    let kind_in = |p: &Part, kinds: &[&str]| kinds.contains(&p.kind.as_deref().unwrap_or(""));
    match it.role.as_deref().unwrap_or("") {
        "assistant" => {
            let any = parts.iter().any(|p| match p.kind.as_deref() {
                Some("output_text" | "text" | "input_text") => p.text.is_some(),
                Some("refusal") => p.refusal.is_some(),
                _ => false,
            });
            if any {
                Sorted::Other
            } else {
                Sorted::Skip("assistant message without text".into())
            }
        }
        role @ ("user" | "developer" | "system") => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| kind_in(p, TEXT_KINDS))
                .filter_map(|p| p.text.as_deref())
                .collect();
            let images = parts.iter().filter(|p| p.image_url.is_some()).count();
            if texts.is_empty() && images == 0 {
                return Sorted::Skip(format!("{role} message without text"));
            }
            let injected = role != "user"
                || texts.first().is_some_and(|t| {
                    super::codex_items::INJECTED_PREFIXES
                        .iter()
                        .any(|p| t.trim_start().starts_with(p))
                });
            let text = (images == 0 && texts.len() == 1).then(|| text_key(texts[0]));
            Sorted::User {
                text,
                injected,
                marked: it.marked,
            }
        }
        other => Sorted::Skip(format!("message with role {other}")),
    }
}

/// An item other than a message, rebuilt from what `convert_item` reads and converted.
fn sort_other(it: LiteItem) -> Sorted {
    let mut o = it.other;
    if let Some(k) = it.kind {
        o.insert("type".into(), Value::String(k.into_owned()));
    }
    if let Some(id) = it.id {
        o.insert("id".into(), Value::String(id.into_owned()));
    }
    if let Some(parts) = it.content {
        let parts = parts
            .into_iter()
            .map(|p| match p {
                None => Value::Null,
                Some(p) => {
                    let mut m = Map::new();
                    let fields = [
                        ("type", p.kind),
                        ("text", p.text),
                        ("refusal", p.refusal),
                        ("image_url", p.image_url),
                    ];
                    for (k, v) in fields {
                        if let Some(v) = v {
                            m.insert(k.into(), Value::String(v.into_owned()));
                        }
                    }
                    Value::Object(m)
                }
            })
            .collect();
        o.insert("content".into(), Value::Array(parts));
    }
    match convert_item(&o) {
        Item::User { .. } => Sorted::User {
            text: None,
            injected: true,
            marked: it.marked,
        },
        Item::Assistant(_) | Item::ToolResult(_) => Sorted::Other,
        Item::EncryptedSummary => Sorted::EncryptedSummary,
        Item::Skip(reason) => Sorted::Skip(reason),
    }
}

/// What a counted history holds: `CodexReader` reads it back with `Counted::from_value`.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Counted {
    pub items: usize,
    pub kept: usize,
    pub reinjected: usize,
    pub encrypted: bool,
    /// Skip reasons, in order.
    pub skipped: Vec<String>,
    /// Items that were no object.
    pub not_objects: usize,
}

impl Counted {
    pub fn from_value(v: &Value) -> Option<Counted> {
        serde::Deserialize::deserialize(v).ok()
    }
}

/// Counts sorted items as `read_history` does without holding them.
pub(super) fn count(items: Vec<Sorted>, retained: Option<Vec<bool>>, summary: &str) -> Counted {
    let summary_key = (!summary.is_empty()).then(|| text_key(summary));
    let mut c = Counted {
        items: items.len(),
        ..Counted::default()
    };
    for (i, item) in items.into_iter().enumerate() {
        let retained = retained
            .as_ref()
            .map(|r| r.get(i).copied().unwrap_or(false));
        match item {
            Sorted::NotObject => c.not_objects += 1,
            Sorted::Skip(reason) => c.skipped.push(reason),
            Sorted::EncryptedSummary => c.encrypted = true,
            Sorted::Other => {
                let keep = retained.unwrap_or(true);
                c.kept += usize::from(keep);
                c.reinjected += usize::from(!keep);
            }
            Sorted::User {
                text,
                injected,
                marked,
            } => {
                // The summary is neither kept nor re-injected.
                let is_summary = marked || (summary_key.is_some() && text == summary_key);
                if is_summary {
                    continue;
                }
                if retained.unwrap_or(!injected) {
                    c.kept += 1;
                } else {
                    c.reinjected += 1;
                }
            }
        }
    }
    c
}

/// A line: an object whose `payload` is read by `PayloadSeed`.
struct LineSeed;

impl<'de> DeserializeSeed<'de> for LineSeed {
    type Value = Map<String, Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LineSeed {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(Key(k)) = m.next_key::<Key>()? {
            let v = if k == "payload" {
                Value::Object(m.next_value_seed(PayloadSeed)?)
            } else {
                m.next_value()?
            };
            out.insert(k.into_owned(), v);
        }
        Ok(out)
    }
}

/// A payload object with its `replacement_history` (and the metadata beside it) counted
/// under `COUNTED_KEY`; a history that is no list is left out, as the reader ignores one.
struct PayloadSeed;

impl<'de> DeserializeSeed<'de> for PayloadSeed {
    type Value = Map<String, Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PayloadSeed {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        let mut history: Option<Vec<Sorted>> = None;
        let mut retained: Option<Vec<bool>> = None;
        while let Some(Key(k)) = m.next_key::<Key>()? {
            match k.as_ref() {
                "replacement_history" => {
                    history = m
                        .next_value::<Listed<ItemRead>>()?
                        .0
                        .map(|items| items.into_iter().map(|i| sort_item(i.0)).collect());
                }
                "replacement_history_metadata" => {
                    retained = m
                        .next_value::<Listed<Retained>>()?
                        .0
                        .map(|r| r.into_iter().map(|r| r.0).collect());
                }
                _ => {
                    let v: Value = m.next_value()?;
                    out.insert(k.into_owned(), v);
                }
            }
        }
        if let Some(items) = history {
            let summary = out.get("message").and_then(Value::as_str).unwrap_or("");
            let counted = count(items, retained, summary);
            out.insert(COUNTED_KEY.into(), json!(counted));
        }
        Ok(out)
    }
}
