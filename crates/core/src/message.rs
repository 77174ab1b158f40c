//! Messages in the Anthropic Messages wire shape, kept losslessly.
//!
//! A message is stored as the JSON object it arrived as (key order, unknown fields and
//! unknown block types included) and read through typed views. The pipeline's size estimate
//! is the length of Python's `str()` of that object in key order, so a typed struct that
//! reorders fields would change the numbers; this module must never reorder or drop a key.
//! Each message caches its own estimate (and its JSON length, s08-latest's unit) so the
//! pre-call pipeline does not re-walk an unchanged history; every mutation goes through
//! `&mut self` methods that drop the caches. `block` builds blocks; `json` writes histories
//! as JSON text.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::pyrepr::{py_str_len, py_str_list, unicode_json_map_len};

mod fingerprint;
mod json;
mod kind;
mod outline;
mod tool_input;

pub use json::{
    ascii_json_history, ascii_json_history_prefix, ascii_json_message, json_size,
    unicode_json_history, unicode_json_message, write_ascii_json_message,
};
pub use kind::{BlockKind, Role, block_tool_id};
pub use tool_input::{Named, named_in};

/// Why a JSON value is not a message ctxlab can work with.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MessageError {
    #[error("a message must be a JSON object, found {0}")]
    NotAnObject(&'static str),
    #[error("a message needs a string \"role\"")]
    MissingRole,
    #[error("a message needs \"content\": a string or a list of blocks, found {0}")]
    BadContent(&'static str),
    #[error("content block {index} must be a JSON object, found {found}")]
    BadBlock { index: usize, found: &'static str },
    #[error(
        "tool_result block {index}: \"content\" must be a string, a list or null, found {found}"
    )]
    BadToolResultContent { index: usize, found: &'static str },
}

/// JSON type names as a user would say them, for error messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// One message of the history.
#[derive(Debug, Default)]
pub struct Message {
    /// Shared by its copies until one changes (`blocks_mut`): a copy costs a count, not a
    /// copy of every field (issue 36: `forgot` copies the messages each compaction keeps,
    /// hundreds at each of thousands of compactions).
    raw: Arc<Map<String, Value>>,
    size: OnceLock<usize>,
    /// The length of its unicode JSON (the s08-latest unit), cached like `size`.
    json_size: OnceLock<usize>,
    /// `(block index, lesson length)` of each tool_result block; see `tool_result_lens`.
    results: OnceLock<Box<[(usize, usize)]>>,
    /// Its fingerprint (`fingerprint`), cached like `size`.
    print: OnceLock<u128>,
    /// Its text key (`text_key`), cached like `size`.
    text_key: OnceLock<u64>,
}

impl Clone for Message {
    fn clone(&self) -> Self {
        let size = OnceLock::new();
        if let Some(n) = self.size.get() {
            let _ = size.set(*n);
        }
        let json_size = OnceLock::new();
        if let Some(n) = self.json_size.get() {
            let _ = json_size.set(*n);
        }
        let results = OnceLock::new();
        if let Some(r) = self.results.get() {
            let _ = results.set(r.clone());
        }
        let print = OnceLock::new();
        if let Some(p) = self.print.get() {
            let _ = print.set(*p);
        }
        let text_key = OnceLock::new();
        if let Some(k) = self.text_key.get() {
            let _ = text_key.set(*k);
        }
        Message {
            raw: Arc::clone(&self.raw),
            size,
            json_size,
            results,
            print,
            text_key,
        }
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

/// The content of a message, viewed.
#[derive(Debug, Clone, Copy)]
pub enum Content<'a> {
    Text(&'a str),
    Blocks(&'a [Value]),
}

/// The content of a `tool_result` block, viewed. Missing and null content read as empty.
#[derive(Debug, Clone, Copy)]
pub enum ResultContent<'a> {
    Text(&'a str),
    Blocks(&'a [Value]),
    Empty,
}

impl<'a> ResultContent<'a> {
    pub fn of(block: &'a Value) -> ResultContent<'a> {
        match block.get("content") {
            Some(Value::String(s)) => ResultContent::Text(s),
            Some(Value::Array(items)) => ResultContent::Blocks(items),
            _ => ResultContent::Empty,
        }
    }

    /// The text the lesson works with: the string itself, or Python's `str()` of a list.
    pub fn to_text(self) -> String {
        match self {
            ResultContent::Text(s) => s.to_string(),
            ResultContent::Blocks(items) => py_str_list(items),
            ResultContent::Empty => String::new(),
        }
    }
}

impl Message {
    /// Validates a JSON value as a message and keeps it as is.
    pub fn from_value(value: Value) -> Result<Message, MessageError> {
        let Value::Object(raw) = value else {
            return Err(MessageError::NotAnObject(json_kind(&value)));
        };
        match raw.get("role") {
            Some(Value::String(_)) => {}
            _ => return Err(MessageError::MissingRole),
        }
        match raw.get("content") {
            Some(Value::String(_)) => {}
            Some(Value::Array(blocks)) => {
                for (index, block) in blocks.iter().enumerate() {
                    let Value::Object(b) = block else {
                        return Err(MessageError::BadBlock {
                            index,
                            found: json_kind(block),
                        });
                    };
                    if BlockKind::of(block) == BlockKind::ToolResult {
                        match b.get("content") {
                            None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
                            Some(other) => {
                                return Err(MessageError::BadToolResultContent {
                                    index,
                                    found: json_kind(other),
                                });
                            }
                        }
                    }
                }
            }
            Some(other) => return Err(MessageError::BadContent(json_kind(other))),
            None => return Err(MessageError::BadContent("nothing")),
        }
        Ok(Message {
            raw: Arc::new(raw),
            size: OnceLock::new(),
            json_size: OnceLock::new(),
            results: OnceLock::new(),
            print: OnceLock::new(),
            text_key: OnceLock::new(),
        })
    }

    fn build(role: Role, content: Value) -> Message {
        // Room for exactly its two keys: a map grown on demand takes room for three, and a
        // session of a million tiny lines holds a million of these (issue 39).
        let mut raw = Map::with_capacity(2);
        raw.insert("role".into(), Value::String(role.as_str().into()));
        raw.insert("content".into(), content);
        Message {
            raw: Arc::new(raw),
            size: OnceLock::new(),
            json_size: OnceLock::new(),
            results: OnceLock::new(),
            print: OnceLock::new(),
            text_key: OnceLock::new(),
        }
    }

    /// A user message with string content (what a person types, or a pipeline marker).
    pub fn user_text(text: impl Into<String>) -> Message {
        Message::build(Role::User, Value::String(text.into()))
    }

    /// A user message with list content (tool results).
    pub fn user_blocks(blocks: Vec<Value>) -> Message {
        Message::build(Role::User, Value::Array(blocks))
    }

    /// An assistant message with list content.
    pub fn assistant_blocks(blocks: Vec<Value>) -> Message {
        Message::build(Role::Assistant, Value::Array(blocks))
    }

    /// Whether `other` is a copy of this message that still shares its fields (neither was
    /// changed since): one allocation of them, however many copies a read holds.
    pub fn shares_fields(&self, other: &Message) -> bool {
        Arc::ptr_eq(&self.raw, &other.raw)
    }

    /// 128 bits of hash over its fields, computed once and kept by its clones: equal
    /// fingerprints are the same message; different ones are almost always different
    /// messages (keys in another order differ). See `message/fingerprint.rs`.
    pub fn fingerprint(&self) -> u128 {
        *self.print.get_or_init(|| fingerprint::of(&self.raw))
    }

    /// A cheap key of the message: its role and the texts of its content (a string, or each
    /// block's `text`). Equal messages have equal keys, whatever the order of their keys
    /// (unlike `fingerprint`); computed once and kept by copies, since `forgot` keys every
    /// message before every compaction (`forgot::before_index`).
    pub fn text_key(&self) -> u64 {
        *self
            .text_key
            .get_or_init(|| fingerprint::text_key(&self.raw))
    }

    pub fn role(&self) -> &str {
        self.raw.get("role").and_then(Value::as_str).unwrap_or("")
    }

    pub fn role_kind(&self) -> Role {
        Role::of(self.role())
    }

    pub fn content(&self) -> Content<'_> {
        match self.raw.get("content") {
            Some(Value::String(s)) => Content::Text(s),
            Some(Value::Array(b)) => Content::Blocks(b),
            _ => Content::Blocks(&[]),
        }
    }

    /// The blocks of a list-content message; empty for string content.
    pub fn blocks(&self) -> &[Value] {
        match self.content() {
            Content::Blocks(b) => b,
            Content::Text(_) => &[],
        }
    }

    /// The string content, if the content is a string.
    pub fn text(&self) -> Option<&str> {
        match self.content() {
            Content::Text(s) => Some(s),
            Content::Blocks(_) => None,
        }
    }

    /// Mutable access to the blocks of a list-content message. Drops the cached size.
    pub fn blocks_mut(&mut self) -> Option<&mut Vec<Value>> {
        self.size = OnceLock::new();
        self.json_size = OnceLock::new();
        self.results = OnceLock::new();
        self.print = OnceLock::new();
        self.text_key = OnceLock::new();
        match Arc::make_mut(&mut self.raw).get_mut("content") {
            Some(Value::Array(b)) => Some(b),
            _ => None,
        }
    }

    /// The JSON object as stored.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.raw
    }

    pub fn to_value(&self) -> Value {
        Value::Object(Map::clone(&self.raw))
    }

    pub fn into_value(self) -> Value {
        Value::Object(Arc::try_unwrap(self.raw).unwrap_or_else(|shared| Map::clone(&shared)))
    }

    /// Role user, list content, at least one `tool_result` block (docs/pipeline.md,
    /// "Messages").
    pub fn is_tool_result_message(&self) -> bool {
        self.role_kind() == Role::User
            && self
                .blocks()
                .iter()
                .any(|b| BlockKind::of(b) == BlockKind::ToolResult)
    }

    /// Role assistant, list content, some `tool_use` block (docs/pipeline.md, "Messages").
    pub fn has_tool_use(&self) -> bool {
        self.role_kind() == Role::Assistant
            && self
                .blocks()
                .iter()
                .any(|b| BlockKind::of(b) == BlockKind::ToolUse)
    }

    /// The blocks of type `kind` when the message has role `role`, with their indices.
    fn typed_blocks<'a>(
        &'a self,
        role: Role,
        kind: BlockKind,
    ) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        let blocks = if self.role_kind() == role {
            self.blocks()
        } else {
            &[]
        };
        blocks
            .iter()
            .enumerate()
            .filter(move |(_, b)| BlockKind::of(b) == kind)
    }

    /// The `tool_use` blocks of an assistant message, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &Value> {
        self.typed_blocks(Role::Assistant, BlockKind::ToolUse)
            .map(|(_, b)| b)
    }

    /// The `tool_result` blocks of a user message with list content, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &Value> {
        self.typed_blocks(Role::User, BlockKind::ToolResult)
            .map(|(_, b)| b)
    }

    /// The text blocks joined by newlines (string content as is).
    pub fn joined_text(&self) -> String {
        match self.content() {
            Content::Text(s) => s.to_string(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter(|b| BlockKind::of(b) == BlockKind::Text)
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The tool_result blocks of a user message with list content, as `(block index,
    /// lesson length)`: the lesson's `len(content)` (chars of a string, items of a list,
    /// 0 when missing or null). Cached, because micro_compact asks before every call.
    pub fn tool_result_lens(&self) -> &[(usize, usize)] {
        self.results.get_or_init(|| {
            self.typed_blocks(Role::User, BlockKind::ToolResult)
                .map(|(i, b)| {
                    let len = match b.get("content") {
                        Some(Value::String(s)) => s.chars().count(),
                        Some(Value::Array(items)) => items.len(),
                        _ => 0,
                    };
                    (i, len)
                })
                .collect()
        })
    }

    /// The length of Python's `str()` of this message (docs/pipeline.md, "Units"), cached.
    pub fn estimate_size(&self) -> usize {
        *self.size.get_or_init(|| py_str_len(&self.raw))
    }

    /// The length of `json.dumps(message, ensure_ascii=False)`, cached: the s08-latest unit.
    pub fn json_size(&self) -> usize {
        *self
            .json_size
            .get_or_init(|| unicode_json_map_len(&self.raw))
    }
}

/// The size of a history in the lesson's unit: the length of Python's `str()` of the list,
/// from each message's cached size (docs/pipeline.md, "Units").
pub fn estimate_size(messages: &[Message]) -> usize {
    let items: usize = messages.iter().map(Message::estimate_size).sum();
    2 + items + 2 * messages.len().saturating_sub(1)
}

/// The `type` of a block, if it has a string one.
/// Anthropic's `system` field as one text: a string, or its text blocks joined by blank
/// lines (a capture's request and Claude Code's own record of one are sized alike).
pub fn system_text(system: Option<&Value>) -> String {
    match system {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

pub fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

pub mod block;

/// A tool the model may call, as both wire formats describe one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the tool's input object.
    pub input_schema: Value,
}

/// The tool names of the `tool_use` blocks of `messages`, by call id (what a result's
/// `tool_use_id` answers).
pub fn tool_names<'a>(
    messages: impl Iterator<Item = &'a Message>,
) -> std::collections::HashMap<String, String> {
    let mut names = std::collections::HashMap::new();
    for m in messages {
        for b in m.tool_uses() {
            if let (Some(id), Some(name)) = (
                b.get("id").and_then(Value::as_str),
                b.get("name").and_then(Value::as_str),
            ) {
                names.insert(id.to_string(), name.to_string());
            }
        }
    }
    names
}

/// The tool results of a history in document order: (message index, block index, block).
pub fn tool_results(messages: &[Message]) -> impl Iterator<Item = (usize, usize, &Value)> {
    messages.iter().enumerate().flat_map(|(mi, m)| {
        m.typed_blocks(Role::User, BlockKind::ToolResult)
            .map(move |(bi, b)| (mi, bi, b))
    })
}

/// The first break of the pairing rule, if any: a `tool_result` block must sit in a user
/// message right after the assistant message holding its `tool_use`, and every `tool_use`
/// must be answered in the message right after it. A history that breaks it is rejected
/// by the APIs, so every stage and the agent must keep it.
pub fn tool_pairing_error(messages: &[Message]) -> Option<String> {
    let blocks_of = |m: &'_ Message, kind: BlockKind| -> Vec<Option<String>> {
        m.blocks()
            .iter()
            .filter(|b| BlockKind::of(b) == kind)
            .map(|b| block_tool_id(b).map(str::to_string))
            .collect()
    };
    for (i, m) in messages.iter().enumerate() {
        let results = blocks_of(m, BlockKind::ToolResult);
        if !results.is_empty() && m.role_kind() != Role::User {
            return Some(format!(
                "message {i}: tool_result in a {} message",
                m.role()
            ));
        }
        let uses = blocks_of(m, BlockKind::ToolUse);
        if !uses.is_empty() && m.role_kind() != Role::Assistant {
            return Some(format!("message {i}: tool_use in a {} message", m.role()));
        }
        let before = match i.checked_sub(1) {
            Some(p) => blocks_of(&messages[p], BlockKind::ToolUse),
            None => Vec::new(),
        };
        if let Some(id) = results
            .iter()
            .find(|id| id.is_none() || !before.contains(id))
        {
            return Some(format!(
                "message {i}: tool_result {id:?} answers no tool_use in the message before it"
            ));
        }
        let after = messages
            .get(i + 1)
            .map(|n| blocks_of(n, BlockKind::ToolResult))
            .unwrap_or_default();
        if let Some(id) = uses.iter().find(|id| !after.contains(id)) {
            return Some(format!(
                "message {i}: tool_use {id:?} is not answered in the message after it"
            ));
        }
    }
    None
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Map::serialize(&self.raw, serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Message::from_value(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
