//! How a message reads in one line and in full, for every view of a timeline (the
//! workbench's rows, the exported page): what kind of message it is, a one-line label, the
//! files its `<persisted-output>` markers point at, and the fate of each tool result it
//! holds (kept, persisted to a path, placeholder), each named by its own `tool_use_id`.
//!
//! Pure text work on one message: no view state, no terminal, no files.

use serde_json::Value;

use crate::compact::SummaryLabel;
use crate::compact::markers::{Marker, persisted_path};
use crate::compact::s08::micro::MICRO_PLACEHOLDER;
use crate::message::{BlockKind, Content, Message, ResultContent, block_tool_id};

/// Chars of each kept result's preview in a label naming several results.
const MANY_PREVIEW_CHARS: usize = 24;

/// What a message is, for a collapsed row.
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

/// What became of one tool result inside a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultFate {
    /// The content is still there; `first_line` previews it.
    Kept { first_line: String, is_error: bool },
    /// tool_result_budget wrote it to `path`; the message keeps a marker.
    Persisted { path: String },
    /// micro_compact replaced it.
    Placeholder,
}

/// One tool result of a message: its id and its fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultInfo {
    pub tool_use_id: String,
    pub fate: ResultFate,
}

impl ResultInfo {
    /// `toolu_01 kept: first line`, `toolu_02 persisted -> PATH`, `toolu_03 placeholder`.
    pub fn describe(&self) -> String {
        let id = &self.tool_use_id;
        match &self.fate {
            ResultFate::Kept {
                first_line,
                is_error,
            } => {
                let err = if *is_error { " (error)" } else { "" };
                format!("{id} kept{err}: {first_line}")
            }
            ResultFate::Persisted { path } => format!("{id} persisted -> {path}"),
            ResultFate::Placeholder => format!("{id} placeholder"),
        }
    }
}

/// A message classified once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageLabel {
    pub kind: RowKind,
    /// The collapsed row's text after the role, e.g. `tool_use bash {"command":"ls"}`.
    pub label: String,
    /// Workspace-relative files this message's `<persisted-output>` markers point at.
    pub persisted_paths: Vec<String>,
    /// The tool results it holds, in order.
    pub results: Vec<ResultInfo>,
}

fn first_line(s: &str) -> &str {
    s.trim_start().lines().next().unwrap_or("")
}

/// Whether `s` is snip_compact's marker.
pub fn is_snip_marker(s: &str) -> bool {
    matches!(Marker::parse(s), Some(Marker::Snipped { .. }))
}

/// Classifies `m`; `clip` shortens the label (a view passes its widest useful width).
pub fn label(m: &Message, clip: impl Fn(&str) -> String) -> MessageLabel {
    let role = m.role();
    let plain = |kind: RowKind, label: String| MessageLabel {
        kind,
        label: clip(&label),
        persisted_paths: Vec::new(),
        results: Vec::new(),
    };
    match m.content() {
        Content::Text(s) if role == "user" => {
            if let Some(head) = SummaryLabel::of(s).map(SummaryLabel::text) {
                let request = crate::compact::request::authoritative_request(s)
                    .map(first_line)
                    .unwrap_or("");
                plain(
                    RowKind::Summary,
                    format!("{head} summary; request: {request}"),
                )
            } else if is_snip_marker(s) {
                plain(RowKind::Snip, s.to_string())
            } else {
                plain(RowKind::Request, format!("request {}", first_line(s)))
            }
        }
        Content::Text(s) => plain(RowKind::Text, format!("text {}", first_line(s))),
        Content::Blocks(blocks) if role == "assistant" => assistant_label(blocks, plain),
        Content::Blocks(blocks) => user_blocks_label(role, blocks, clip),
    }
}

fn assistant_label(
    blocks: &[Value],
    plain: impl Fn(RowKind, String) -> MessageLabel,
) -> MessageLabel {
    let uses: Vec<&Value> = blocks
        .iter()
        .filter(|b| BlockKind::of(b) == BlockKind::ToolUse)
        .collect();
    let text = blocks
        .iter()
        .filter(|b| BlockKind::of(b) == BlockKind::Text)
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .find(|t| !t.trim().is_empty())
        .map(first_line)
        .unwrap_or("");
    if uses.is_empty() {
        return plain(RowKind::Text, format!("text {text}"));
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
    plain(RowKind::ToolUse, label)
}

fn user_blocks_label(role: &str, blocks: &[Value], clip: impl Fn(&str) -> String) -> MessageLabel {
    let results: Vec<ResultInfo> = blocks
        .iter()
        .filter(|b| BlockKind::of(b) == BlockKind::ToolResult)
        .map(result_info)
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
        return MessageLabel {
            kind,
            label: clip(&format!("{} {text}", kind.name())),
            persisted_paths: Vec::new(),
            results,
        };
    }
    let persisted_paths: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.fate {
            ResultFate::Persisted { path } => Some(path.clone()),
            _ => None,
        })
        .collect();
    let placeholders = results
        .iter()
        .filter(|r| r.fate == ResultFate::Placeholder)
        .count();
    let kind = if !persisted_paths.is_empty() {
        RowKind::Persisted
    } else if placeholders == results.len() {
        RowKind::Placeholder
    } else {
        RowKind::ToolResult
    };
    // One result reads `persisted toolu_35 -> PATH`; several name each result with its
    // own fate, so no id ever stands next to another result's fate.
    let label = match results.as_slice() {
        [one] => {
            let id = &one.tool_use_id;
            match &one.fate {
                ResultFate::Kept {
                    first_line,
                    is_error,
                } => {
                    let err = if *is_error { "(error) " } else { "" };
                    format!("tool_result {id} {err}{first_line}")
                }
                ResultFate::Persisted { path } => {
                    format!("persisted {id} <persisted-output> -> {path}")
                }
                ResultFate::Placeholder => format!("placeholder {id} {MICRO_PLACEHOLDER}"),
            }
        }
        many => {
            // Short previews, so every result's id and fate fit on one row.
            let parts: Vec<String> = many
                .iter()
                .map(|r| match &r.fate {
                    ResultFate::Kept {
                        first_line,
                        is_error,
                    } => ResultInfo {
                        tool_use_id: r.tool_use_id.clone(),
                        fate: ResultFate::Kept {
                            first_line: crate::util::clip_chars(first_line, MANY_PREVIEW_CHARS),
                            is_error: *is_error,
                        },
                    }
                    .describe(),
                    _ => r.describe(),
                })
                .collect();
            format!("{} results: {}", many.len(), parts.join(" | "))
        }
    };
    MessageLabel {
        kind,
        label: clip(&label),
        persisted_paths,
        results,
    }
}

fn result_info(block: &Value) -> ResultInfo {
    let tool_use_id = block_tool_id(block).unwrap_or("?").to_string();
    let text = match ResultContent::of(block) {
        ResultContent::Text(s) => std::borrow::Cow::Borrowed(s),
        other => std::borrow::Cow::Owned(other.to_text()),
    };
    let fate = if let Some(path) = persisted_path(&text) {
        ResultFate::Persisted {
            path: path.to_string(),
        }
    } else if text == MICRO_PLACEHOLDER {
        ResultFate::Placeholder
    } else {
        ResultFate::Kept {
            first_line: first_line(&text).chars().take(200).collect(),
            is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
        }
    };
    ResultInfo { tool_use_id, fate }
}

/// The full text of a message, block by block; each tool result is headed by its id and
/// its fate.
pub fn full_text(m: &Message) -> String {
    match m.content() {
        Content::Text(s) => s.to_string(),
        Content::Blocks(blocks) => {
            let parts: Vec<String> = blocks.iter().map(block_text).collect();
            parts.join("\n")
        }
    }
}

fn block_text(b: &Value) -> String {
    match BlockKind::of(b) {
        BlockKind::Text => b
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        BlockKind::ToolUse => format!(
            "[tool_use {} {}] {}",
            b.get("name").and_then(Value::as_str).unwrap_or("?"),
            block_tool_id(b).unwrap_or("?"),
            b.get("input").map(Value::to_string).unwrap_or_default()
        ),
        BlockKind::ToolResult => {
            let info = result_info(b);
            let fate = match &info.fate {
                ResultFate::Kept { is_error: true, .. } => "kept, error".to_string(),
                ResultFate::Kept { .. } => "kept".to_string(),
                ResultFate::Persisted { path } => format!("persisted to {path}"),
                ResultFate::Placeholder => "placeholder".to_string(),
            };
            format!(
                "[tool_result {} · {fate}]\n{}",
                info.tool_use_id,
                ResultContent::of(b).to_text()
            )
        }
        _ => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;

    fn no_clip(s: &str) -> String {
        s.to_string()
    }

    #[test]
    fn several_results_each_name_their_own_fate() {
        let marker = "<persisted-output>\nFull output: .task_outputs/tool-results/toolu_035.txt\nPreview:\nab\n</persisted-output>";
        let m = Message::user_blocks(vec![
            block::tool_result("toolu_032", "line one\nline two"),
            block::tool_result("toolu_035", marker),
            block::tool_result("toolu_036", MICRO_PLACEHOLDER),
        ]);
        let l = label(&m, no_clip);
        assert_eq!(l.kind, RowKind::Persisted);
        assert_eq!(
            l.label,
            "3 results: toolu_032 kept: line one | toolu_035 persisted -> \
             .task_outputs/tool-results/toolu_035.txt | toolu_036 placeholder"
        );
        // The label never puts the first id right after the word "persisted".
        assert!(!l.label.contains("persisted toolu_032"));
        assert_eq!(
            l.persisted_paths,
            vec![".task_outputs/tool-results/toolu_035.txt"]
        );
        let text = full_text(&m);
        assert!(text.contains("[tool_result toolu_032 · kept]"));
        assert!(text.contains(
            "[tool_result toolu_035 · persisted to .task_outputs/tool-results/toolu_035.txt]"
        ));
        assert!(text.contains("[tool_result toolu_036 · placeholder]"));
    }

    #[test]
    fn one_result_reads_as_before() {
        let m = Message::user_blocks(vec![block::tool_result("t", "out\nmore")]);
        assert_eq!(label(&m, no_clip).label, "tool_result t out");
        let p = Message::user_blocks(vec![block::tool_result("t", MICRO_PLACEHOLDER)]);
        assert_eq!(label(&p, no_clip).kind, RowKind::Placeholder);
        assert_eq!(
            label(&p, no_clip).label,
            format!("placeholder t {MICRO_PLACEHOLDER}")
        );
    }
}
