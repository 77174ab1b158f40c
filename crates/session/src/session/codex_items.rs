//! Codex's response items (the OpenAI Responses API's shapes) as Anthropic content: what a
//! Codex rollout's `response_item` lines, its legacy bare lines and a compaction's
//! `replacement_history` hold, converted one item at a time.
//!
//! `message` items become user text or assistant text blocks; `function_call`,
//! `custom_tool_call` and `local_shell_call` become `tool_use` blocks (the arguments string
//! parsed into the input object); their outputs become `tool_result` blocks; `reasoning`
//! with readable text becomes a `thinking` block; a `compaction` item is the summary the
//! provider encrypted. Nothing here knows about lines or files.

use serde_json::{Map, Value, json};

use super::assemble::str_field;
use crate::message::block;

/// Text a Codex harness injects as a user message (not typed by anyone).
pub(super) const INJECTED_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
];

/// One response item, converted.
#[derive(Debug, PartialEq)]
pub(crate) enum Item {
    /// A user message: its content (a string, or blocks), whether the harness injected it,
    /// and its role (`user`, or `developer` / `system` for the harness's instructions).
    User {
        content: Value,
        injected: bool,
        role: &'static str,
    },
    /// Blocks of the model's answer.
    Assistant(Vec<Value>),
    /// A tool result block.
    ToolResult(Value),
    /// The provider's encrypted compaction summary.
    EncryptedSummary,
    /// Nothing for the context; the reason is counted.
    Skip(String),
}

fn parts_text(content: &[Value], kinds: &[&str]) -> Vec<String> {
    content
        .iter()
        .filter(|p| kinds.contains(&str_field_v(p, "type").unwrap_or("")))
        .filter_map(|p| str_field_v(p, "text").map(str::to_string))
        .collect()
}

fn str_field_v<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn image_block(part: &Value) -> Option<Value> {
    let url = str_field_v(part, "image_url")?;
    Some(json!({"type": "image", "source": {"type": "url", "url": url}}))
}

fn message_item(o: &Map<String, Value>) -> Item {
    let role = str_field(o, "role").unwrap_or("");
    let content: &[Value] = match o.get("content") {
        Some(Value::Array(parts)) => parts,
        _ => &[],
    };
    match role {
        "assistant" => {
            let blocks: Vec<Value> = content
                .iter()
                .filter_map(|p| match str_field_v(p, "type") {
                    Some("output_text" | "text" | "input_text") => {
                        str_field_v(p, "text").map(block::text)
                    }
                    Some("refusal") => str_field_v(p, "refusal").map(block::text),
                    _ => None,
                })
                .collect();
            if blocks.is_empty() {
                Item::Skip("assistant message without text".into())
            } else {
                Item::Assistant(blocks)
            }
        }
        "user" | "developer" | "system" => {
            let texts = parts_text(content, &["input_text", "text", "output_text"]);
            let images: Vec<Value> = content.iter().filter_map(image_block).collect();
            let injected = role != "user"
                || texts.first().is_some_and(|t| {
                    INJECTED_PREFIXES
                        .iter()
                        .any(|p| t.trim_start().starts_with(p))
                });
            let content = if images.is_empty() && texts.len() == 1 {
                Value::String(texts.into_iter().next().unwrap_or_default())
            } else if texts.is_empty() && images.is_empty() {
                return Item::Skip(format!("{role} message without text"));
            } else {
                let mut blocks: Vec<Value> = texts.into_iter().map(block::text).collect();
                blocks.extend(images);
                Value::Array(blocks)
            };
            let role = match role {
                "developer" => "developer",
                "system" => "system",
                _ => "user",
            };
            Item::User {
                content,
                injected,
                role,
            }
        }
        other => Item::Skip(format!("message with role {other}")),
    }
}

/// The input object of a tool call whose arguments are a JSON string.
fn arguments_input(arguments: Option<&Value>) -> Value {
    match arguments {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Value::Object(m),
            _ => json!({"arguments": s}),
        },
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(other) => json!({"arguments": other}),
        None => json!({}),
    }
}

/// A tool output as tool_result content: text, or blocks for structured output.
/// A shell tool's output as Codex writes it: a JSON string holding `{"output": "...",
/// "metadata": {"exit_code", "duration_seconds"}}`. The text, with the exit code and the
/// duration on a last line when recorded; None when the string is not that shape.
fn shell_output_text(s: &str) -> Option<String> {
    if !s.trim_start().starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(s).ok()?;
    let text = v.get("output")?.as_str()?;
    let meta = v.get("metadata");
    let mut facts = Vec::new();
    if let Some(code) = meta
        .and_then(|m| m.get("exit_code"))
        .and_then(Value::as_i64)
    {
        facts.push(format!("exit code {code}"));
    }
    if let Some(secs) = meta
        .and_then(|m| m.get("duration_seconds"))
        .and_then(Value::as_f64)
    {
        facts.push(format!("{secs:.1} s"));
    }
    if facts.is_empty() {
        return Some(text.to_string());
    }
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    Some(format!("{text}{sep}({})", facts.join(", ")))
}

fn output_content(output: Option<&Value>) -> Value {
    match output {
        Some(Value::String(s)) => Value::String(shell_output_text(s).unwrap_or_else(|| s.clone())),
        // Older rollouts: {"content": "...", "success": bool}.
        Some(Value::Object(m)) => match m.get("content") {
            Some(Value::String(s)) => Value::String(s.clone()),
            Some(other) => Value::String(other.to_string()),
            None => Value::String(Value::Object(m.clone()).to_string()),
        },
        Some(Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|p| match str_field_v(p, "type") {
                    Some("input_image") => image_block(p).unwrap_or_else(|| p.clone()),
                    _ => match str_field_v(p, "text") {
                        Some(t) => block::text(t),
                        None => p.clone(),
                    },
                })
                .filter(Value::is_object)
                .collect(),
        ),
        Some(Value::Null) | None => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    }
}

fn tool_result(call_id: &str, output: Option<&Value>) -> Item {
    let mut m = Map::new();
    m.insert("type".into(), "tool_result".into());
    m.insert("tool_use_id".into(), Value::String(call_id.to_string()));
    m.insert("content".into(), output_content(output));
    Item::ToolResult(Value::Object(m))
}

/// Converts one response item.
pub(crate) fn convert_item(o: &Map<String, Value>) -> Item {
    let kind = str_field(o, "type").unwrap_or("");
    let call_id = str_field(o, "call_id").or_else(|| str_field(o, "id"));
    match kind {
        "message" => message_item(o),
        "function_call" => match (call_id, str_field(o, "name")) {
            (Some(id), Some(name)) => Item::Assistant(vec![block::tool_use(
                id,
                name,
                arguments_input(o.get("arguments")),
            )]),
            _ => Item::Skip("function_call without call_id or name".into()),
        },
        "custom_tool_call" => match (call_id, str_field(o, "name")) {
            (Some(id), Some(name)) => {
                let input = match o.get("input") {
                    Some(Value::String(s)) => json!({"input": s}),
                    Some(other) => json!({"input": other}),
                    None => json!({}),
                };
                Item::Assistant(vec![block::tool_use(id, name, input)])
            }
            _ => Item::Skip("custom_tool_call without call_id or name".into()),
        },
        "local_shell_call" => match call_id {
            Some(id) => {
                let input = o.get("action").cloned().unwrap_or_else(|| json!({}));
                Item::Assistant(vec![block::tool_use(id, "local_shell", input)])
            }
            None => Item::Skip("local_shell_call without call_id".into()),
        },
        "function_call_output" | "custom_tool_call_output" => match str_field(o, "call_id") {
            Some(id) => tool_result(id, o.get("output")),
            None => Item::Skip(format!("{kind} without call_id")),
        },
        "web_search_call" => {
            // A server-side tool: no result comes back as an item, so it is no tool_use.
            let mut m = Map::new();
            m.insert("type".into(), "server_tool_use".into());
            m.insert(
                "id".into(),
                Value::String(str_field(o, "id").unwrap_or("web_search").to_string()),
            );
            m.insert("name".into(), "web_search".into());
            m.insert(
                "input".into(),
                o.get("action").cloned().unwrap_or_else(|| json!({})),
            );
            Item::Assistant(vec![Value::Object(m)])
        }
        "reasoning" => {
            let content: &[Value] = match o.get("content") {
                Some(Value::Array(c)) => c,
                _ => &[],
            };
            let summary: &[Value] = match o.get("summary") {
                Some(Value::Array(s)) => s,
                _ => &[],
            };
            let mut texts = parts_text(content, &["reasoning_text", "text"]);
            if texts.is_empty() {
                texts = parts_text(summary, &["summary_text", "text"]);
            }
            if texts.is_empty() {
                Item::Skip("reasoning without readable text".into())
            } else {
                Item::Assistant(vec![
                    json!({"type": "thinking", "thinking": texts.join("\n\n")}),
                ])
            }
        }
        "compaction" | "compaction_summary" => Item::EncryptedSummary,
        "ghost_snapshot" => Item::Skip("item ghost_snapshot".into()),
        "" => Item::Skip("item without a type".into()),
        other => Item::Skip(format!("unknown item type {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(v: Value) -> Item {
        match v {
            Value::Object(o) => convert_item(&o),
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn a_function_call_becomes_a_tool_use_with_parsed_arguments() {
        let got = item(
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}),
        );
        assert_eq!(
            got,
            Item::Assistant(vec![block::tool_use(
                "call_1",
                "shell",
                json!({"command": ["ls"]})
            )])
        );
        let bad = item(
            json!({"type": "function_call", "name": "x", "arguments": "not json", "call_id": "c"}),
        );
        assert_eq!(
            bad,
            Item::Assistant(vec![block::tool_use(
                "c",
                "x",
                json!({"arguments": "not json"})
            )])
        );
    }

    #[test]
    fn outputs_of_every_shape_become_tool_results() {
        let s = item(json!({"type": "function_call_output", "call_id": "c", "output": "ok"}));
        assert_eq!(s, Item::ToolResult(block::tool_result("c", "ok")));
        let shell = item(json!({"type": "function_call_output", "call_id": "c",
            "output": "{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.25}}"}));
        assert_eq!(
            shell,
            Item::ToolResult(block::tool_result("c", "a\nb\n(exit code 1, 0.2 s)"))
        );
        let bare = item(json!({"type": "function_call_output", "call_id": "c",
            "output": "{\"output\":\"plain\"}"}));
        assert_eq!(bare, Item::ToolResult(block::tool_result("c", "plain")));
        let old = item(
            json!({"type": "function_call_output", "call_id": "c", "output": {"content": "x", "success": true}}),
        );
        assert_eq!(old, Item::ToolResult(block::tool_result("c", "x")));
        let list = item(
            json!({"type": "custom_tool_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "t"}]}),
        );
        let Item::ToolResult(b) = list else {
            panic!("not a result")
        };
        assert_eq!(b["content"], json!([{"type": "text", "text": "t"}]));
    }

    #[test]
    fn user_messages_are_text_and_injected_context_is_marked() {
        let typed = item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
        );
        assert_eq!(
            typed,
            Item::User {
                content: json!("fix it"),
                injected: false,
                role: "user"
            }
        );
        let env = item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n<cwd>/x</cwd>"}]}),
        );
        assert!(matches!(env, Item::User { injected: true, .. }));
        let dev = item(
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
        );
        assert!(matches!(
            dev,
            Item::User {
                injected: true,
                role: "developer",
                ..
            }
        ));
    }

    #[test]
    fn reasoning_encryption_and_unknown_items() {
        let r = item(
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}], "encrypted_content": "gAAA"}),
        );
        assert_eq!(
            r,
            Item::Assistant(vec![json!({"type": "thinking", "thinking": "thinking"})])
        );
        let hidden = item(json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}));
        assert!(matches!(hidden, Item::Skip(_)));
        assert_eq!(
            item(json!({"type": "compaction", "encrypted_content": "gAAA"})),
            Item::EncryptedSummary
        );
        assert_eq!(
            item(json!({"type": "brand_new"})),
            Item::Skip("unknown item type brand_new".into())
        );
    }
}
