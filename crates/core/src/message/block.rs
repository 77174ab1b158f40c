//! Block constructors in the wire shape and key order the Anthropic API uses.

use serde_json::{Map, Value, json};

pub fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "tool_use".into());
    m.insert("id".into(), Value::String(id.into()));
    m.insert("name".into(), Value::String(name.into()));
    m.insert("input".into(), input);
    Value::Object(m)
}

pub fn tool_result(tool_use_id: impl Into<String>, content: impl Into<String>) -> Value {
    json!({"type": "tool_result", "tool_use_id": tool_use_id.into(), "content": content.into()})
}

/// A tool result that reports a failure to the model (`is_error: true`).
pub fn tool_error(tool_use_id: impl Into<String>, content: impl Into<String>) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": tool_use_id.into(),
        "content": content.into(),
        "is_error": true
    })
}
