//! One line of a Claude Code session, its header fields typed (issue 39: a million tiny
//! lines). The reader looks up a line's header (type, uuid, parent, timestamp, the session's
//! ids) on every line: held in a JSON map, each of those keys was its own allocation and
//! each look-up a hash of its name, more than the rest of a tiny line's read. The header is
//! now read into fields as the line is parsed; what the reader takes as JSON (the message,
//! the compaction's metadata, the request record's fields) stays in `rest`.
//!
//! A field means what the map's look-up meant: the last of repeated keys wins, and a value
//! of another JSON type than the one read is absent (a flag is set only by `true`).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A line's `parentUuid` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum ParentField {
    /// No `parentUuid` key, or one that is neither text nor null.
    #[default]
    Absent,
    Null,
    Text(String),
}

/// One Claude Code line.
#[derive(Debug, Default)]
pub(crate) struct ClaudeLine {
    /// `type`.
    pub kind: Option<String>,
    pub subtype: Option<String>,
    pub uuid: Option<String>,
    pub parent: ParentField,
    pub is_sidechain: bool,
    pub is_meta: bool,
    pub is_compact_summary: bool,
    pub timestamp: Option<String>,
    pub session_id: Option<String>,
    pub version: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub agent_id: Option<String>,
    pub request_id: Option<String>,
    pub request_ref: Option<String>,
    /// A `summary` line's title.
    pub summary: Option<String>,
    /// The API message of a `user` or `assistant` line.
    pub message: Option<MessageField>,
    /// The other keys the reader uses (`REST_KEYS`), as JSON.
    pub rest: Map<String, Value>,
}

/// The keys kept as JSON in `rest`.
const REST_KEYS: &[&str] = &[
    "compactMetadata",
    "microcompactMetadata",
    // The request record (`claude_requests`).
    "rendered",
    "shape",
    "shapeHash",
    "params",
    "id",
];

/// A line's `message` as written.
#[derive(Debug)]
pub(crate) enum MessageField {
    Object(MessageBody),
    /// Anything but an object.
    Other,
}

/// The fields of a line's message the reader uses, read as `header` fields are.
#[derive(Debug, Default)]
pub(crate) struct MessageBody {
    pub id: Option<String>,
    pub model: Option<String>,
    /// As written (`null` is there, as null).
    pub content: Option<Value>,
    /// Only when it is an object.
    pub usage: Option<UsageField>,
}

/// A message's `usage`: each count as `assemble::u64_field` reads it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UsageField {
    pub input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl MessageBody {
    fn of_value(value: Value) -> MessageField {
        let Value::Object(o) = value else {
            return MessageField::Other;
        };
        let mut body = MessageBody::default();
        for (key, value) in o {
            body.set(&key, value);
        }
        MessageField::Object(body)
    }

    fn set(&mut self, key: &str, value: Value) {
        let text = |v: Value| match v {
            Value::String(t) => Some(t),
            _ => None,
        };
        match key {
            "id" => self.id = text(value),
            "model" => self.model = text(value),
            "content" => self.content = Some(value),
            "usage" => self.usage = UsageField::of_value(&value),
            _ => {}
        }
    }
}

impl UsageField {
    /// The counts read.
    const COUNTS: &[&str] = &[
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    ];

    fn of_value(value: &Value) -> Option<UsageField> {
        let Value::Object(o) = value else {
            return None;
        };
        let mut usage = UsageField::default();
        for (key, value) in o {
            usage.set(key, value);
        }
        Some(usage)
    }

    fn set(&mut self, key: &str, value: &Value) {
        let count = value
            .as_u64()
            .or_else(|| value.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64));
        match key {
            "input_tokens" => self.input_tokens = count,
            "cache_read_input_tokens" => self.cache_read_input_tokens = count,
            "cache_creation_input_tokens" => self.cache_creation_input_tokens = count,
            "output_tokens" => self.output_tokens = count,
            _ => {}
        }
    }
}

/// How a line could not be read.
#[derive(Debug)]
pub(crate) enum Unread {
    Malformed(serde_json::Error),
    /// JSON, but not an object.
    NotObject,
}

/// One non-empty line, numbered from 1.
#[derive(Debug)]
pub(crate) struct ParsedClaudeLine {
    pub number: usize,
    pub line: Result<ClaudeLine, Unread>,
}

impl ClaudeLine {
    /// Parses a line's text (a line that is no JSON object is malformed, as a parse that
    /// keeps some keys of an object said).
    pub(crate) fn parse(text: &str) -> Result<ClaudeLine, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let line = LineSeed.deserialize(&mut de)?;
        de.end()?;
        Ok(line)
    }

    /// The line of a parsed JSON value.
    pub(crate) fn of_value(value: Value) -> Result<ClaudeLine, Unread> {
        let Value::Object(o) = value else {
            return Err(Unread::NotObject);
        };
        let mut line = ClaudeLine::default();
        for (key, value) in o {
            line.set(&key, Field::Json(value));
        }
        Ok(line)
    }

    /// Sets the field of `key` (the last of repeated keys wins); false for a key the
    /// reader does not use.
    fn set(&mut self, key: &str, field: Field) -> bool {
        let text = |f: Field| match f {
            Field::Text(t) => Some(t),
            Field::Json(Value::String(t)) => Some(t),
            _ => None,
        };
        let flag = |f: Field| matches!(f, Field::Flag(true) | Field::Json(Value::Bool(true)));
        match key {
            "type" => self.kind = text(field),
            "subtype" => self.subtype = text(field),
            "uuid" => self.uuid = text(field),
            "parentUuid" => {
                self.parent = match field {
                    Field::Null | Field::Json(Value::Null) => ParentField::Null,
                    other => text(other).map_or(ParentField::Absent, ParentField::Text),
                }
            }
            "isSidechain" => self.is_sidechain = flag(field),
            "isMeta" => self.is_meta = flag(field),
            "isCompactSummary" => self.is_compact_summary = flag(field),
            "timestamp" => self.timestamp = text(field),
            "sessionId" => self.session_id = text(field),
            "version" => self.version = text(field),
            "cwd" => self.cwd = text(field),
            "gitBranch" => self.git_branch = text(field),
            "agentId" => self.agent_id = text(field),
            "requestId" => self.request_id = text(field),
            "requestRef" => self.request_ref = text(field),
            "summary" => self.summary = text(field),
            "message" => {
                self.message = match field {
                    Field::Json(v) => Some(MessageBody::of_value(v)),
                    Field::Message(m) => Some(m),
                    _ => Some(MessageField::Other),
                }
            }
            k if REST_KEYS.contains(&k) => {
                let value = match field {
                    Field::Json(v) => v,
                    // Rest keys are always parsed as JSON (`LineSeed`).
                    _ => Value::Null,
                };
                self.rest.insert(k.to_string(), value);
            }
            _ => return false,
        }
        true
    }
}

/// A header value as parsed: text, a flag, null, or anything else (ignored), or a rest
/// key's JSON.
enum Field {
    Message(MessageField),
    Text(String),
    Flag(bool),
    Null,
    Other,
    Json(Value),
}

/// Parses a header value without building JSON for it.
struct FieldSeed;

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Field;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Field, E> {
        Ok(Field::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Field, E> {
        Ok(Field::Text(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Field, E> {
        Ok(Field::Flag(v))
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Null)
    }
    fn visit_none<E>(self) -> Result<Field, E> {
        Ok(Field::Null)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    // A list or an object where a header value belongs is read as JSON is (so a line is
    // malformed exactly when a JSON parse of it fails) and dropped.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field, A::Error> {
        Checked.visit_seq(seq).map(|_| Field::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field, A::Error> {
        Checked.visit_map(map).map(|_| Field::Other)
    }
}

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Parses a line's object into a `ClaudeLine`.
struct LineSeed;

impl<'de> DeserializeSeed<'de> for LineSeed {
    type Value = ClaudeLine;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ClaudeLine, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LineSeed {
    type Value = ClaudeLine;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        // The words of the map parse this replaced, which a malformed line's warning quotes.
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ClaudeLine, A::Error> {
        let mut line = ClaudeLine::default();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if key == "message" {
                let message = map.next_value_seed(MessageSeed)?;
                line.set(&key, Field::Message(message));
            } else if REST_KEYS.contains(&key.as_ref()) {
                let value: Value = map.next_value()?;
                line.set(&key, Field::Json(value));
            } else if is_header(&key) {
                let field = map.next_value_seed(FieldSeed)?;
                line.set(&key, field);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(line)
    }
}

/// Parses a line's `message` into the fields the reader uses, skipping the others.
struct MessageSeed;

impl<'de> DeserializeSeed<'de> for MessageSeed {
    type Value = MessageField;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<MessageField, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed {
    type Value = MessageField;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageField, A::Error> {
        let mut body = MessageBody::default();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            match key.as_ref() {
                "id" | "model" => {
                    let text = match map.next_value_seed(FieldSeed)? {
                        Field::Text(t) => Some(t),
                        _ => None,
                    };
                    if key == "id" {
                        body.id = text;
                    } else {
                        body.model = text;
                    }
                }
                "content" => body.content = Some(map.next_value()?),
                "usage" => body.usage = map.next_value_seed(UsageSeed)?,
                _ => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(MessageField::Object(body))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MessageField, A::Error> {
        Checked.visit_seq(seq).map(|_| MessageField::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
    fn visit_unit<E>(self) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<MessageField, E> {
        Ok(MessageField::Other)
    }
}

/// A value skipped as a JSON parse reads it (its strings checked, a lone surrogate escape
/// an error as it was when the message was parsed whole), without building it.
struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(Checked)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Checked;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// Parses a message's `usage`: its counts when it is an object, else None.
struct UsageSeed;

impl<'de> DeserializeSeed<'de> for UsageSeed {
    type Value = Option<UsageField>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<UsageField>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UsageSeed {
    type Value = Option<UsageField>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<UsageField>, A::Error> {
        let mut usage = UsageField::default();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if UsageField::COUNTS.contains(&key.as_ref()) {
                // A count is a number; anything else is read as JSON is, and counts as none.
                let value: Value = map.next_value()?;
                usage.set(&key, &value);
            } else {
                map.next_value::<Checked>()?;
            }
        }
        Ok(Some(usage))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<UsageField>, A::Error> {
        Checked.visit_seq(seq).map(|_| None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<UsageField>, E> {
        Ok(None)
    }
}

fn is_header(key: &str) -> bool {
    matches!(
        key,
        "type"
            | "subtype"
            | "uuid"
            | "parentUuid"
            | "isSidechain"
            | "isMeta"
            | "isCompactSummary"
            | "timestamp"
            | "sessionId"
            | "version"
            | "cwd"
            | "gitBranch"
            | "agentId"
            | "requestId"
            | "requestRef"
            | "summary"
    )
}

/// Every non-empty line of `text` (whose first line is line `first`), parsed on this
/// thread (`lines::parse_json_lines_here` says why).
pub(crate) fn parse_claude_lines(text: &str, first: usize) -> Vec<ParsedClaudeLine> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| ParsedClaudeLine {
            number: i + first,
            line: ClaudeLine::parse(l).map_err(Unread::Malformed),
        })
        .collect()
}

/// Lines parsed as JSON values, as the reader takes them.
pub(crate) fn of_values(
    lines: impl IntoIterator<Item = super::lines::ParsedLine>,
) -> impl Iterator<Item = ParsedClaudeLine> {
    lines.into_iter().map(|p| ParsedClaudeLine {
        number: p.number,
        line: match p.value {
            Ok(v) => ClaudeLine::of_value(v),
            Err(e) => Err(Unread::Malformed(e)),
        },
    })
}

#[cfg(test)]
#[path = "claude_line_tests.rs"]
mod tests;
