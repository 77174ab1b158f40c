//! The request side of the chat format: ctxlab's Anthropic-shaped history mapped into chat
//! messages. The history is read, never modified; nothing here knows HTTP.

use serde_json::{Map, Value, json};

use crate::message::{BlockKind, Content, Message, ResultContent, Role};

/// Maps the Anthropic-shaped history to chat messages.
///
/// - the system text becomes a leading `system` message;
/// - an assistant's text blocks become `content` (joined by newlines; `null` when it only
///   calls tools) and its `tool_use` blocks `tool_calls` with the input as a JSON string;
/// - a user's `tool_result` blocks become one `tool` message each, in order and before any
///   text of the same message, because the chat format wants tool answers right after the
///   call; the text blocks become one `user` message;
/// - other block types (images, documents) have no text form here and are left out.
pub fn to_chat_messages(system: &str, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in messages {
        let blocks = match m.content() {
            Content::Text(text) => {
                out.push(json!({"role": m.role(), "content": text}));
                continue;
            }
            Content::Blocks(blocks) => blocks,
        };
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| BlockKind::of(b) == BlockKind::Text)
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        if m.role_kind() == Role::Assistant {
            let calls: Vec<Value> = m
                .tool_uses()
                .map(|b| {
                    let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
                    let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                    json!({
                        "id": text("id"),
                        "type": "function",
                        "function": {"name": text("name"), "arguments": input.to_string()},
                    })
                })
                .collect();
            let content = if texts.is_empty() && !calls.is_empty() {
                Value::Null
            } else {
                Value::String(texts.join("\n"))
            };
            let mut msg = Map::new();
            msg.insert("role".into(), "assistant".into());
            msg.insert("content".into(), content);
            if !calls.is_empty() {
                msg.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(msg));
            continue;
        }
        for result in m.tool_results() {
            let id = result
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            out.push(json!({
                "role": "tool",
                "tool_call_id": id,
                "content": flatten_result(ResultContent::of(result)),
            }));
        }
        if !texts.is_empty() {
            out.push(json!({"role": m.role(), "content": texts.join("\n")}));
        }
    }
    out
}

/// A tool result as plain text: list content is its text items joined by newlines, other
/// items as compact JSON so nothing silently disappears.
fn flatten_result(content: ResultContent<'_>) -> String {
    match content {
        ResultContent::Text(s) => s.to_string(),
        ResultContent::Empty => String::new(),
        ResultContent::Blocks(items) => items
            .iter()
            .map(|item| match (BlockKind::of(item), item.get("text")) {
                (BlockKind::Text, Some(Value::String(t))) => t.clone(),
                _ => item.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;

    #[test]
    fn history_maps_to_chat_messages() {
        let history = vec![
            Message::user_text("fix it"),
            Message::assistant_blocks(vec![
                block::text("Looking."),
                block::tool_use("toolu_1", "bash", json!({"command": "ls"})),
                block::tool_use("toolu_2", "glob", json!({"pattern": "*.rs"})),
            ]),
            Message::user_blocks(vec![
                block::tool_result("toolu_1", "a\nb"),
                json!({"type": "tool_result", "tool_use_id": "toolu_2",
                       "content": [{"type": "text", "text": "x.rs"}, {"type": "text", "text": "y.rs"}]}),
                block::text("and hurry"),
            ]),
            Message::assistant_blocks(vec![block::tool_use("toolu_3", "compact", json!({}))]),
            Message::user_blocks(vec![
                json!({"type": "tool_result", "tool_use_id": "toolu_3"}),
            ]),
        ];
        let chat = to_chat_messages("be brief", &history);
        assert_eq!(
            Value::Array(chat),
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "fix it"},
                {"role": "assistant", "content": "Looking.", "tool_calls": [
                    {"id": "toolu_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                    {"id": "toolu_2", "type": "function", "function": {"name": "glob", "arguments": "{\"pattern\":\"*.rs\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a\nb"},
                {"role": "tool", "tool_call_id": "toolu_2", "content": "x.rs\ny.rs"},
                {"role": "user", "content": "and hurry"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "toolu_3", "type": "function", "function": {"name": "compact", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "toolu_3", "content": ""}
            ])
        );
        assert!(to_chat_messages("", &history[..1]).len() == 1);
    }
}
