//! One message as the UI shows it: `MessageInfo` classifies a message once (role, kind,
//! one-line label, size, persisted paths) so that drawing a row is a few string copies, and
//! it caches the tokenizer's count. It also lays out a message's full text for an expanded
//! row. It owns no view state and never reads the clock or the disk.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use crate::compact::micro::MICRO_PLACEHOLDER;
use crate::message::{Content, Message, ResultContent, block_tool_id, block_type};

/// The widest label kept per row, in terminal columns; the pane clips further to its width.
const LABEL_MAX_COLS: usize = 240;

/// Every `MessageInfo` gets a distinct id so expansion state and diffs survive index
/// shifts when the history is replaced.
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// What a message is, for the collapsed row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Text the user typed.
    Request,
    /// Assistant text without tool calls.
    Text,
    ToolUse,
    ToolResult,
    /// A tool result whose content went to a file (`<persisted-output>`).
    Persisted,
    /// `[snipped N messages]`.
    Snip,
    /// micro_compact's placeholder.
    Placeholder,
    /// `[Compacted]` / `[Reactive compact]`.
    Summary,
    Other,
}

impl RowKind {
    pub fn name(self) -> &'static str {
        match self {
            RowKind::Request => "request",
            RowKind::Text => "text",
            RowKind::ToolUse => "tool_use",
            RowKind::ToolResult => "tool_result",
            RowKind::Persisted => "persisted",
            RowKind::Snip => "snip",
            RowKind::Placeholder => "placeholder",
            RowKind::Summary => "summary",
            RowKind::Other => "other",
        }
    }
}

/// A message plus what the UI needs to draw it cheaply. (`PartialEq` lets effects that
/// carry rows be compared in tests.)
#[derive(Debug, PartialEq)]
pub struct MessageInfo {
    pub uid: u64,
    pub message: Message,
    pub kind: RowKind,
    /// The collapsed row's text after the role, e.g. `tool_use bash {"command":"ls"}`.
    pub label: String,
    /// `message.estimate_size()`, the lesson's chars.
    pub chars: usize,
    /// Workspace-relative files this message's `<persisted-output>` markers point at.
    pub persisted_paths: Vec<String>,
    /// The tokenizer's estimate; set once by `App::update` when the encoder is ready.
    tokens: OnceLock<usize>,
}

impl MessageInfo {
    pub fn new(message: Message) -> Arc<MessageInfo> {
        let chars = message.estimate_size();
        let (kind, label, persisted_paths) = classify(&message);
        Arc::new(MessageInfo {
            uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
            message,
            kind,
            label,
            chars,
            persisted_paths,
            tokens: OnceLock::new(),
        })
    }

    pub fn role(&self) -> &str {
        self.message.role()
    }

    pub fn tokens(&self) -> Option<usize> {
        self.tokens.get().copied()
    }

    /// Counts tokens once; later calls are free.
    pub fn count_tokens(&self, count: impl FnOnce(&str) -> usize) -> usize {
        *self.tokens.get_or_init(|| {
            let text = serde_json::to_string(&self.message).unwrap_or_default();
            count(&text)
        })
    }

    /// The full text an expanded row shows, block by block.
    pub fn full_text(&self) -> String {
        match self.message.content() {
            Content::Text(s) => s.to_string(),
            Content::Blocks(blocks) => {
                let parts: Vec<String> = blocks.iter().map(block_text).collect();
                parts.join("\n")
            }
        }
    }
}

fn block_text(b: &Value) -> String {
    match block_type(b) {
        Some("text") => b
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        Some("tool_use") => format!(
            "[tool_use {} {}] {}",
            b.get("name").and_then(Value::as_str).unwrap_or("?"),
            block_tool_id(b).unwrap_or("?"),
            b.get("input").map(Value::to_string).unwrap_or_default()
        ),
        Some("tool_result") => format!(
            "[tool_result {}]\n{}",
            block_tool_id(b).unwrap_or("?"),
            ResultContent::of(b).to_text()
        ),
        _ => b.to_string(),
    }
}

fn first_line(s: &str) -> &str {
    s.trim_start().lines().next().unwrap_or("")
}

fn clip(s: &str) -> String {
    crate::util::clip_width(s, LABEL_MAX_COLS)
}

fn is_snip_marker(s: &str) -> bool {
    s.strip_prefix("[snipped ")
        .and_then(|r| r.strip_suffix(" messages]"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `Full output: <path>` line of a persisted marker.
fn persisted_path(content: &str) -> Option<String> {
    if !content.starts_with("<persisted-output>") {
        return None;
    }
    content
        .lines()
        .find_map(|l| l.strip_prefix("Full output: "))
        .map(|p| p.trim().to_string())
}

fn classify(m: &Message) -> (RowKind, String, Vec<String>) {
    let role = m.role();
    match m.content() {
        Content::Text(s) if role == "user" => {
            if s.starts_with("[Compacted]") || s.starts_with("[Reactive compact]") {
                let label = if s.starts_with("[Compacted]") {
                    "[Compacted]"
                } else {
                    "[Reactive compact]"
                };
                let request = crate::compact::request::authoritative_request(s)
                    .map(first_line)
                    .unwrap_or("");
                (
                    RowKind::Summary,
                    clip(&format!("{label} summary; request: {request}")),
                    Vec::new(),
                )
            } else if is_snip_marker(s) {
                (RowKind::Snip, s.to_string(), Vec::new())
            } else {
                (
                    RowKind::Request,
                    clip(&format!("request {}", first_line(s))),
                    Vec::new(),
                )
            }
        }
        Content::Text(s) => (
            RowKind::Text,
            clip(&format!("text {}", first_line(s))),
            Vec::new(),
        ),
        Content::Blocks(blocks) => classify_blocks(role, blocks),
    }
}

fn classify_blocks(role: &str, blocks: &[Value]) -> (RowKind, String, Vec<String>) {
    if role == "assistant" {
        let uses: Vec<&Value> = blocks
            .iter()
            .filter(|b| block_type(b) == Some("tool_use"))
            .collect();
        let text = blocks
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .find(|t| !t.trim().is_empty())
            .map(first_line)
            .unwrap_or("");
        if uses.is_empty() {
            return (RowKind::Text, clip(&format!("text {text}")), Vec::new());
        }
        let calls: Vec<String> = uses
            .iter()
            .map(|u| {
                format!(
                    "{} {}",
                    u.get("name").and_then(Value::as_str).unwrap_or("?"),
                    u.get("input").map(Value::to_string).unwrap_or_default()
                )
            })
            .collect();
        let mut label = format!("tool_use {}", calls.join(" | "));
        if !text.is_empty() {
            label = format!("{label}  (text: {text})");
        }
        return (RowKind::ToolUse, clip(&label), Vec::new());
    }
    let results: Vec<&Value> = blocks
        .iter()
        .filter(|b| block_type(b) == Some("tool_result"))
        .collect();
    if results.is_empty() {
        let text = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .map(first_line)
            .next()
            .unwrap_or("");
        let kind = if role == "user" {
            RowKind::Request
        } else {
            RowKind::Other
        };
        return (kind, clip(&format!("{} {text}", kind.name())), Vec::new());
    }
    let mut paths = Vec::new();
    let mut placeholders = 0;
    let mut parts = Vec::new();
    for r in &results {
        let id = block_tool_id(r).unwrap_or("?");
        let text = match ResultContent::of(r) {
            ResultContent::Text(s) => s.to_string(),
            other => other.to_text(),
        };
        if let Some(p) = persisted_path(&text) {
            parts.push(format!("{id} <persisted-output> -> {p}"));
            paths.push(p);
        } else if text == MICRO_PLACEHOLDER {
            placeholders += 1;
            parts.push(format!("{id} {MICRO_PLACEHOLDER}"));
        } else {
            let err = if r.get("is_error").and_then(Value::as_bool) == Some(true) {
                "(error) "
            } else {
                ""
            };
            parts.push(format!("{id} {err}{}", first_line(&text)));
        }
    }
    let kind = if !paths.is_empty() {
        RowKind::Persisted
    } else if placeholders == results.len() {
        RowKind::Placeholder
    } else {
        RowKind::ToolResult
    };
    let label = format!("{} {}", kind.name(), parts.join(" | "));
    (kind, clip(&label), paths)
}

/// Hard-wraps `text` to `width` terminal columns, at most `max_lines` lines. The second
/// value says whether text was left over. Columns, not chars: a CJK character or an emoji
/// takes two, and a piece of `width` chars would overflow the pane. Stops early so a
/// 200,000-char result costs only what is shown.
pub fn wrap_lines(text: &str, width: usize, max_lines: usize) -> (Vec<String>, bool) {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        let mut chars = line.chars().map(expand_tab).peekable();
        // An empty line still takes a line.
        let mut first = true;
        while first || chars.peek().is_some() {
            first = false;
            if out.len() == max_lines {
                return (out, true);
            }
            let mut piece = String::new();
            let mut used = 0;
            while let Some(&c) = chars.peek() {
                let w = c.width().unwrap_or(0);
                // A wide char that does not fit starts the next line (unless the line is
                // empty: a 1-column pane still shows it).
                if used + w > width && !piece.is_empty() {
                    break;
                }
                piece.push(c);
                used += w;
                chars.next();
            }
            out.push(piece);
        }
    }
    (out, false)
}

/// Tabs would make the terminal jump; one space keeps columns predictable.
fn expand_tab(c: char) -> char {
    if c == '\t' { ' ' } else { c }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn kinds_are_recognized() {
        let k = |m: Message| MessageInfo::new(m).kind;
        assert_eq!(k(Message::user_text("hi")), RowKind::Request);
        assert_eq!(k(Message::user_text("[snipped 4 messages]")), RowKind::Snip);
        assert_eq!(
            k(Message::user_text(
                "[Compacted]\n\nAuthoritative request:\nx"
            )),
            RowKind::Summary
        );
        assert_eq!(
            k(Message::assistant_blocks(vec![block::tool_use(
                "t",
                "bash",
                json!({"command": "ls"})
            )])),
            RowKind::ToolUse
        );
        assert_eq!(
            k(Message::user_blocks(vec![block::tool_result(
                "t",
                MICRO_PLACEHOLDER
            )])),
            RowKind::Placeholder
        );
        let p = MessageInfo::new(Message::user_blocks(vec![block::tool_result(
            "t",
            "<persisted-output>\nFull output: .task_outputs/tool-results/t.txt\nPreview:\nab\n</persisted-output>",
        )]));
        assert_eq!(p.kind, RowKind::Persisted);
        assert_eq!(p.persisted_paths, vec![".task_outputs/tool-results/t.txt"]);
    }

    #[test]
    fn wrapping_stops_at_the_cap() {
        let (lines, more) = wrap_lines("abcdef\n\nxy", 4, 10);
        assert_eq!(lines, vec!["abcd", "ef", "", "xy"]);
        assert!(!more);
        let (lines, more) = wrap_lines(&"a".repeat(100), 10, 3);
        assert_eq!(lines.len(), 3);
        assert!(more);
    }

    #[test]
    fn wrapping_counts_columns_not_chars() {
        // Two columns each: three fit in 7 columns, the fourth starts the next line.
        let (lines, more) = wrap_lines("解析器です", 7, 10);
        assert_eq!(lines, vec!["解析器", "です"]);
        assert!(!more);
        let (lines, _) = wrap_lines("ab🚀cd", 3, 10);
        assert_eq!(lines, vec!["ab", "🚀c", "d"]);
        // A pane one column wide still shows a wide char, alone.
        let (lines, _) = wrap_lines("解a", 1, 10);
        assert_eq!(lines, vec!["解", "a"]);
        for l in wrap_lines(&"漢字とemoji🎉".repeat(20), 11, 100).0 {
            assert!(crate::util::display_width(&l) <= 11, "{l}");
        }
    }
}
