//! A fork in Codex's rollout format. `prefix`: the original's lines before the compaction's
//! `compacted` line, less the compaction's own call (its summary output, marked
//! `compaction_output`, and the usage record of its `compaction_response_id`), with the
//! thread id renamed. Codex rebuilds the history from the rollout's `response_item`s, so it
//! resumes exactly what it had. Where a summary stands in: the `session_meta` and a
//! `compacted` line whose `replacement_history` is the history (Codex starts from the last
//! such list): `with_summary_text` keeps Codex's own list and puts the user's summary in
//! the summary's place; `with_messages` lists the instructions and environment Codex had
//! put in it, then what a strategy left, as response items.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::lines::{Line, rename, to_line};
use super::{ForkError, Written};
use crate::message::{BlockKind, Message, Role};

/// The `compacted` line the reader placed at `cut_line` (the nearest one: the reader may
/// number a compaction by the event that announced it).
fn cut_index(lines: &[Line], cut_line: usize) -> Result<usize, ForkError> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.str_field("type") == Some("compacted"))
        .min_by_key(|(_, l)| l.number.abs_diff(cut_line))
        .map(|(i, _)| i)
        .ok_or(ForkError::CutNotFound(cut_line))
}

fn old_thread_id(lines: &[Line]) -> Option<String> {
    lines
        .iter()
        .find(|l| l.str_field("type") == Some("session_meta"))
        .and_then(|l| l.payload_str("id"))
        .map(str::to_string)
}

fn renamer(lines: &[Line], new_id: &str) -> HashMap<String, String> {
    old_thread_id(lines)
        .map(|old| (old, new_id.to_string()))
        .into_iter()
        .collect()
}

fn renamed(l: &Line, map: &HashMap<String, String>) -> Result<String, ForkError> {
    let mut v = Value::Object(l.value.clone());
    rename(&mut v, map);
    match v {
        Value::Object(m) => to_line(&m),
        _ => Ok(String::new()),
    }
}

/// A line of the compaction's own call: its summary output.
fn is_compaction_output(l: &Line) -> bool {
    l.value
        .get("metadata")
        .and_then(|m| m.get("compaction_output"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// The original's lines before the `compacted` line at `cut_line`, renamed, less this
/// compaction's own call (earlier compactions' stay as they were: Codex starts from the
/// last `compacted` line anyway).
pub fn prefix(lines: &[Line], cut_line: usize, new_id: &str) -> Result<Written, ForkError> {
    let cut = cut_index(lines, cut_line)?;
    let compaction_call = lines[cut].payload_str("compaction_response_id");
    // This compaction's output comes after the previous one's `compacted` line.
    let since = lines[..cut]
        .iter()
        .rposition(|l| l.str_field("type") == Some("compacted"))
        .map_or(0, |i| i + 1);
    let map = renamer(lines, new_id);
    let mut text = String::new();
    for (i, l) in lines[..cut].iter().enumerate() {
        let own_usage = l.str_field("type") == Some("token_usage_record")
            && compaction_call.is_some()
            && l.payload_str("response_id") == compaction_call;
        if (i >= since && is_compaction_output(l)) || own_usage {
            continue;
        }
        text.push_str(&renamed(l, &map)?);
    }
    Ok(Written {
        text,
        holds: String::new(),
    })
}

/// The text of a response item's message content.
fn item_text(item: &Value) -> Option<String> {
    let parts = item.get("content")?.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.concat())
}

/// The words Codex put before the summary in its summary message.
fn summary_opening(lines: &[Line], cut: usize) -> String {
    let message = lines[cut].payload_str("message").unwrap_or("");
    let own = lines[..cut]
        .iter()
        .rev()
        .find(|l| is_compaction_output(l))
        .and_then(|l| l.value.get("payload").and_then(item_text));
    match own {
        Some(s) if !s.is_empty() && message.ends_with(&s) => {
            message[..message.len() - s.len()].to_string()
        }
        _ => message
            .find('\n')
            .map(|i| message[..=i].to_string())
            .unwrap_or_default(),
    }
}

fn user_item(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// The session_meta line, renamed.
fn meta_line(lines: &[Line], map: &HashMap<String, String>) -> Result<String, ForkError> {
    match lines
        .iter()
        .find(|l| l.str_field("type") == Some("session_meta"))
    {
        Some(l) => renamed(l, map),
        None => Ok(String::new()),
    }
}

/// `session_meta` and Codex's own `compacted` line with the user's summary in its
/// summary's place.
pub fn with_summary_text(
    lines: &[Line],
    cut_line: usize,
    summary: &str,
    new_id: &str,
) -> Result<Written, ForkError> {
    let cut = cut_index(lines, cut_line)?;
    let map = renamer(lines, new_id);
    let mut compacted = lines[cut].clone();
    let old_message = compacted.payload_str("message").unwrap_or("").to_string();
    let message = format!("{}{}", summary_opening(lines, cut), summary.trim_end());
    if let Some(Value::Object(p)) = compacted.value.get_mut("payload") {
        p.insert("message".into(), json!(message));
        let history = p.entry("replacement_history").or_insert_with(|| json!([]));
        if let Value::Array(items) = history {
            let at = items.iter().rposition(|i| {
                i.get("role").and_then(Value::as_str) == Some("user")
                    && item_text(i).as_deref() == Some(old_message.as_str())
            });
            match at {
                Some(at) => {
                    if let Some(Value::Array(parts)) = items[at].get_mut("content") {
                        *parts = vec![json!({"type": "input_text", "text": message})];
                    }
                }
                None => items.push(user_item(&message)),
            }
        }
    }
    let mut text = meta_line(lines, &map)?;
    text.push_str(&renamed(&compacted, &map)?);
    text.push_str(&state_after(lines, cut, &map)?);
    Ok(Written {
        text,
        holds: String::new(),
    })
}

/// The state lines Codex wrote right after the compaction (`world_state`, `turn_context`):
/// with them Codex knows its context items are in the replacement history and does not
/// inject them a second time on resume.
fn state_after(
    lines: &[Line],
    cut: usize,
    map: &HashMap<String, String>,
) -> Result<String, ForkError> {
    let mut text = String::new();
    for l in lines[cut + 1..]
        .iter()
        .take_while(|l| matches!(l.str_field("type"), Some("world_state" | "turn_context")))
    {
        text.push_str(&renamed(l, map)?);
    }
    Ok(text)
}

/// An item Codex put in its replacement history that is not the conversation: its
/// developer instructions and the environment and instruction blocks it injects.
fn is_context_item(item: &Value) -> bool {
    match item.get("role").and_then(Value::as_str) {
        Some("developer" | "system") => true,
        Some("user") => item_text(item).is_some_and(|t| t.trim_start().starts_with('<')),
        _ => false,
    }
}

/// A ctxlab message as the response items Codex records.
pub fn items_of(m: &Message) -> Vec<Value> {
    let assistant = m.role_kind() == Role::Assistant;
    let text_item = |t: &str| {
        if assistant {
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]})
        } else {
            user_item(t)
        }
    };
    if let Some(t) = m.text() {
        return vec![text_item(t)];
    }
    let mut out = Vec::new();
    for b in m.blocks() {
        match BlockKind::of(b) {
            BlockKind::Text => {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    out.push(text_item(t));
                }
            }
            BlockKind::ToolUse => {
                let args = b.get("input").map(Value::to_string).unwrap_or_default();
                out.push(json!({
                    "type": "function_call",
                    "name": b.get("name").cloned().unwrap_or(json!("")),
                    "arguments": args,
                    "call_id": b.get("id").cloned().unwrap_or(json!("")),
                }));
            }
            BlockKind::ToolResult => {
                let output = match b.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": b.get("tool_use_id").cloned().unwrap_or(json!("")),
                    "output": output,
                }));
            }
            // Thinking and blocks Codex has no item for are left out.
            _ => {}
        }
    }
    out
}

/// `session_meta` and a `compacted` line whose replacement history is Codex's context
/// items and then `messages` (the first of which is the summary).
pub fn with_messages(
    lines: &[Line],
    cut_line: usize,
    messages: &[Message],
    new_id: &str,
) -> Result<Written, ForkError> {
    let cut = cut_index(lines, cut_line)?;
    let map = renamer(lines, new_id);
    let mut compacted = lines[cut].clone();
    let summary = messages
        .first()
        .map(|m| {
            items_of(m)
                .iter()
                .filter_map(item_text)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    if let Some(Value::Object(p)) = compacted.value.get_mut("payload") {
        let context: Vec<Value> = p
            .get("replacement_history")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter(|i| is_context_item(i))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut history = context;
        history.extend(messages.iter().flat_map(items_of));
        p.insert("message".into(), json!(summary));
        p.insert("replacement_history".into(), Value::Array(history));
        // They describe Codex's own list item by item; this list is another.
        p.remove("replacement_history_metadata");
        p.remove("retained_context");
    }
    let mut text = meta_line(lines, &map)?;
    text.push_str(&renamed(&compacted, &map)?);
    text.push_str(&state_after(lines, cut, &map)?);
    Ok(Written {
        text,
        holds: String::new(),
    })
}
