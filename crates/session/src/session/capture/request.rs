//! A captured request body as the conversation it sends: the system prompt, the tool
//! schemas and the messages in the Anthropic shape, for the three APIs the proxy knows.
//! Anthropic bodies are taken as they are (only `cache_control` markers are dropped: the
//! client moves them from call to call, and they are not conversation); Chat Completions
//! messages and Responses input items are converted (Responses items by the Codex reader's
//! `codex_items`, since a Codex rollout holds the same items).

use serde_json::{Map, Value, json};

use super::format::ApiKind;
use crate::message::{Message, block};
use crate::session::codex_items::{Item, convert_item};

/// What one request sent, exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactRequest {
    pub model: Option<String>,
    /// The system prompt's text (Anthropic `system`, OpenAI system/developer messages,
    /// Responses `instructions`).
    pub system: String,
    /// The tool schemas as sent.
    pub tools: Vec<Value>,
    pub messages: Vec<Message>,
    /// Messages the reader could not take (counted, never fatal).
    pub unreadable: usize,
}

impl ExactRequest {
    /// The tools' names, in order: which agent thread a request belongs to.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter_map(|t| {
                t.get("name")
                    .or_else(|| t.pointer("/function/name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    }
}

/// The request of a model call, or None for a body that is not one.
pub fn exact_request(api: ApiKind, body: &Value) -> Option<ExactRequest> {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut req = ExactRequest {
        model,
        system: String::new(),
        tools,
        messages: Vec::new(),
        unreadable: 0,
    };
    match api {
        ApiKind::AnthropicMessages | ApiKind::AnthropicCountTokens => {
            req.system = crate::message::system_text(body.get("system"));
            for m in body.get("messages")?.as_array()? {
                match Message::from_value(without_cache_control(m.clone())) {
                    Ok(m) => req.messages.push(m),
                    Err(_) => req.unreadable += 1,
                }
            }
        }
        ApiKind::OpenaiChat => chat_messages(body.get("messages")?.as_array()?, &mut req),
        ApiKind::OpenaiResponses => {
            req.system = body
                .get("instructions")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            match body.get("input")? {
                Value::String(s) => req.messages.push(Message::user_text(s.clone())),
                Value::Array(items) => responses_messages(items, &mut req),
                _ => return None,
            }
        }
        ApiKind::Other => return None,
    }
    Some(req)
}

fn without_cache_control(mut m: Value) -> Value {
    if let Some(o) = m.as_object_mut() {
        o.remove("cache_control");
    }
    if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) {
        for b in blocks {
            if let Some(o) = b.as_object_mut() {
                o.remove("cache_control");
            }
        }
    }
    m
}

/// Appends blocks to the last message when it has `role`, else starts one.
fn push_blocks(messages: &mut Vec<Message>, role: &str, blocks: Vec<Value>) {
    if let Some(last) = messages.last_mut()
        && last.role() == role
        && let Some(existing) = last.blocks_mut()
    {
        existing.extend(blocks);
        return;
    }
    messages.push(if role == "assistant" {
        Message::assistant_blocks(blocks)
    } else {
        Message::user_blocks(blocks)
    });
}

fn text_of_content(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn chat_messages(messages: &[Value], req: &mut ExactRequest) {
    let mut system = Vec::new();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content");
        match role {
            "system" | "developer" => system.push(text_of_content(content)),
            "user" => {
                let text = text_of_content(content);
                push_blocks(
                    &mut req.messages,
                    "user",
                    vec![json!({"type": "text", "text": text})],
                );
            }
            "assistant" => {
                let mut blocks = Vec::new();
                let text = text_of_content(content);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    let f = call.get("function");
                    let name = f
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let args = f
                        .and_then(|f| f.get("arguments"))
                        .and_then(Value::as_str)
                        .unwrap_or("{}");
                    let input = serde_json::from_str(args)
                        .unwrap_or_else(|_| Value::String(args.to_string()));
                    blocks.push(block::tool_use(id, name, input));
                }
                push_blocks(&mut req.messages, "assistant", blocks);
            }
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let mut b = Map::new();
                b.insert("type".into(), "tool_result".into());
                b.insert("tool_use_id".into(), Value::String(id.to_string()));
                b.insert("content".into(), Value::String(text_of_content(content)));
                push_blocks(&mut req.messages, "user", vec![Value::Object(b)]);
            }
            _ => req.unreadable += 1,
        }
    }
    req.system = system.join("\n\n");
}

fn responses_messages(items: &[Value], req: &mut ExactRequest) {
    for item in items {
        let Some(o) = item.as_object() else {
            req.unreadable += 1;
            continue;
        };
        let role = o.get("role").and_then(Value::as_str);
        if matches!(role, Some("system" | "developer")) {
            let text = text_of_content(o.get("content"));
            if !req.system.is_empty() {
                req.system.push_str("\n\n");
            }
            req.system.push_str(&text);
            continue;
        }
        match convert_item(o) {
            Item::User { content, .. } => match content {
                Value::Array(blocks) => push_blocks(&mut req.messages, "user", blocks),
                Value::String(s) => push_blocks(
                    &mut req.messages,
                    "user",
                    vec![json!({"type": "text", "text": s})],
                ),
                _ => req.unreadable += 1,
            },
            Item::Assistant(blocks) => push_blocks(&mut req.messages, "assistant", blocks),
            Item::ToolResult(b) => push_blocks(&mut req.messages, "user", vec![b]),
            Item::EncryptedSummary | Item::Skip(_) => {}
        }
    }
}
