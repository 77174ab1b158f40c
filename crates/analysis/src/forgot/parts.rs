//! A message cut into the parts the forgot report counts and searches: user text, assistant
//! text, thinking, tool calls (with what they touched) and tool results (by tool). Pure: it
//! reads messages and never changes them.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::message::{BlockKind, Message, Named, ResultContent, named_in};

/// What kind of content a part is, as the report counts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "tool", rename_all = "snake_case")]
pub enum PartKind {
    UserText,
    /// Context the recording tool injected (nobody typed it).
    InjectedText,
    AssistantText,
    Thinking,
    ToolCall(String),
    ToolResult(String),
    /// Images, documents and blocks ctxlab does not know.
    Other,
}

/// What a tool call read, changed or ran, when its input says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Read(String),
    Changed(String),
    Ran(String),
}

impl Target {
    /// The path or command, as a re-read is matched on it.
    pub fn key(&self) -> &str {
        match self {
            Target::Read(p) | Target::Changed(p) | Target::Ran(p) => p,
        }
    }
}

/// One part of one message.
#[derive(Debug, Clone)]
pub struct Part {
    /// The message's number (its index in the session, or in the history for a replay).
    pub message: Option<usize>,
    pub role: &'static str,
    pub kind: PartKind,
    pub text: String,
    /// A tool call's or tool result's id.
    pub tool_id: Option<String>,
    /// A tool call's target.
    pub target: Option<Target>,
    /// A tool result of a call that failed: its error flag, or a non-zero exit code its
    /// output states.
    pub failed: bool,
}

impl Part {
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

/// A message with its number and whether the tool injected it.
#[derive(Debug, Clone)]
pub struct Numbered {
    pub number: Option<usize>,
    pub message: Message,
    pub injected: bool,
}

impl Numbered {
    pub fn new(number: Option<usize>, message: Message) -> Numbered {
        Numbered {
            number,
            message,
            injected: false,
        }
    }
}

pub use crate::message::tool_names;

fn role_of(m: &Message) -> &'static str {
    match m.role() {
        "assistant" => "assistant",
        "user" => "user",
        "system" => "system",
        _ => "other",
    }
}

/// The parts of one message, in order.
pub fn parts_of(n: &Numbered, names: &HashMap<String, String>) -> Vec<Part> {
    parts_of_message(n.number, &n.message, n.injected, names)
}

/// `parts_of` a message not wrapped in a `Numbered` (a kept message is not cloned to be).
pub fn parts_of_message(
    number: Option<usize>,
    message: &Message,
    injected: bool,
    names: &HashMap<String, String>,
) -> Vec<Part> {
    let role = role_of(message);
    let part = |kind: PartKind, text: String| Part {
        message: number,
        role,
        kind,
        text,
        tool_id: None,
        target: None,
        failed: false,
    };
    let text_kind = || match (role, injected) {
        (_, true) => PartKind::InjectedText,
        ("assistant", _) => PartKind::AssistantText,
        _ => PartKind::UserText,
    };
    if let Some(t) = message.text() {
        return vec![part(text_kind(), t.to_string())];
    }
    let mut out = Vec::new();
    for b in message.blocks() {
        match BlockKind::of(b) {
            BlockKind::Text => {
                let t = b.get("text").and_then(Value::as_str).unwrap_or("");
                out.push(part(text_kind(), t.to_string()));
            }
            BlockKind::Thinking => {
                let t = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                out.push(part(PartKind::Thinking, t.to_string()));
            }
            BlockKind::RedactedThinking => out.push(part(PartKind::Thinking, String::new())),
            BlockKind::ToolUse => {
                let name = b.get("name").and_then(Value::as_str).unwrap_or("?");
                let input = b.get("input").cloned().unwrap_or(Value::Null);
                let mut p = part(PartKind::ToolCall(name.to_string()), input.to_string());
                p.tool_id = b.get("id").and_then(Value::as_str).map(str::to_string);
                p.target = target_of(name, &input);
                out.push(p);
            }
            BlockKind::ToolResult => {
                let id = b.get("tool_use_id").and_then(Value::as_str);
                let name = id
                    .and_then(|id| names.get(id))
                    .map(String::as_str)
                    .unwrap_or("unknown");
                let mut p = part(
                    PartKind::ToolResult(name.to_string()),
                    result_text(ResultContent::of(b)),
                );
                p.tool_id = id.map(str::to_string);
                p.failed = b.get("is_error").and_then(Value::as_bool) == Some(true)
                    || exit_code_of(&p.text).is_some_and(|c| c != 0);
                out.push(p);
            }
            _ => out.push(part(PartKind::Other, String::new())),
        }
    }
    out
}

/// The exit code a command's output states in its first lines: Claude Code's `Exit code 1`,
/// Codex's `Process exited with code 1` or `Exit code: 1`.
pub fn exit_code_of(text: &str) -> Option<i64> {
    text.lines().take(6).find_map(|l| {
        let l = l.trim();
        ["Exit code:", "Exit code", "Process exited with code"]
            .iter()
            .find_map(|head| l.strip_prefix(head))
            .and_then(|rest| rest.trim().parse().ok())
    })
}

/// A result's text: a string as is, a list's text blocks joined (images count as nothing).
fn result_text(content: ResultContent<'_>) -> String {
    match content {
        ResultContent::Text(s) => s.to_string(),
        ResultContent::Blocks(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        ResultContent::Empty => String::new(),
    }
}

/// What a tool call touched, from the input keys the agents' tools use: a path
/// (`file_path`, `path`, `notebook_path`), a command (`command`, `cmd`, as a string or a
/// list of words). Writing tools are recognised by name.
pub fn target_of(name: &str, input: &Value) -> Option<Target> {
    let lower = name.to_ascii_lowercase();
    let changes = ["write", "edit", "patch", "create", "delete", "move"]
        .iter()
        .any(|w| lower.contains(w));
    Some(match named_in(input)? {
        Named::Path(p) if changes => Target::Changed(p),
        Named::Path(p) => Target::Read(p),
        Named::Command(c) => Target::Ran(c.trim().to_string()),
    })
}
