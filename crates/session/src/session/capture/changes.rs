//! What changed between two exact requests of one agent thread (docs/capture.md, "The
//! requests view"): the structural diff of call N-1 to call N, labelled with what it most
//! likely was. A tool result whose content was replaced in place is a cleared result; a
//! `<system-reminder>` text (a block, or a message of nothing else) present before and
//! absent now is a dropped reminder; any other loss of the earlier messages is a summary
//! replacing the history; the system prompt and the tool schemas are compared apart. The
//! capture reader's fold takes an in-place edit by the same rule (`edited_in_place`).
//!
//! Pure: two requests in, typed changes out. Ids and tool names come from the capture:
//! they are clipped here and sanitized by whatever prints them.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::request::ExactRequest;
use crate::message::{BlockKind, Content, Message, ResultContent, tool_names};
use crate::util::{group_digits, plural};

/// Ids and tool names longer than this are clipped: they come from a capture.
const NAME_CHARS: usize = 64;
/// Tools named per added/removed/changed list; the rest are counted.
const TOOLS_LISTED: usize = 8;
const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

/// One thing the agent's client changed between two requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequestChange {
    /// New messages after everything the earlier request held.
    Appended { messages: usize },
    /// A tool result's content replaced in place (message index in the earlier request).
    ClearedToolResult {
        id: String,
        tool: Option<String>,
        message: usize,
        chars_before: usize,
        chars_after: usize,
    },
    /// The earlier messages after the first `kept_start` are gone and a new message (the
    /// summary, `summary_chars` long) stands in their place.
    SummaryReplacingHistory {
        removed: usize,
        kept_start: usize,
        summary_chars: usize,
    },
    /// A `<system-reminder>` text of message `message` (earlier request) is gone; the
    /// whole message when it held nothing else.
    DroppedSystemReminder {
        message: usize,
        chars: usize,
        whole_message: bool,
    },
    SystemPromptChanged {
        chars_before: usize,
        chars_after: usize,
    },
    /// Tools added, removed, or sent with another schema under the same name.
    ToolsChanged {
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
    },
}

impl RequestChange {
    /// The label: what the change most likely was.
    pub fn label(&self) -> &'static str {
        match self {
            RequestChange::Appended { .. } => "appended",
            RequestChange::ClearedToolResult { .. } => "cleared tool result",
            RequestChange::SummaryReplacingHistory { .. } => "summary replacing history",
            RequestChange::DroppedSystemReminder { .. } => "dropped system reminder",
            RequestChange::SystemPromptChanged { .. } => "system prompt changed",
            RequestChange::ToolsChanged { .. } => "tool schemas changed",
        }
    }

    /// One line for people (names from the capture: sanitize before printing).
    pub fn describe(&self) -> String {
        match self {
            RequestChange::Appended { messages } => {
                format!("appended {}", plural(*messages, "message"))
            }
            RequestChange::ClearedToolResult {
                id,
                tool,
                message,
                chars_before,
                chars_after,
            } => format!(
                "cleared tool result: {} {id} (message {message}), {} -> {} chars",
                tool.as_deref().unwrap_or("(unknown tool)"),
                group_digits(*chars_before),
                group_digits(*chars_after)
            ),
            RequestChange::SummaryReplacingHistory {
                removed,
                kept_start,
                summary_chars,
            } => format!(
                "summary replacing history: {} removed, first {kept_start} kept, summary {} chars",
                plural(*removed, "message"),
                group_digits(*summary_chars)
            ),
            RequestChange::DroppedSystemReminder {
                message,
                chars,
                whole_message,
            } => format!(
                "dropped system reminder: {} chars {} message {message}",
                group_digits(*chars),
                if *whole_message { "(the whole)" } else { "of" },
            ),
            RequestChange::SystemPromptChanged {
                chars_before,
                chars_after,
            } => format!(
                "system prompt changed: {} -> {} chars",
                group_digits(*chars_before),
                group_digits(*chars_after)
            ),
            RequestChange::ToolsChanged {
                added,
                removed,
                changed,
            } => {
                let mut parts = Vec::new();
                for (what, names) in [
                    ("added", added),
                    ("removed", removed),
                    ("new schema", changed),
                ] {
                    if !names.is_empty() {
                        parts.push(format!("{what} {}", names.join(", ")));
                    }
                }
                format!("tool schemas changed: {}", parts.join("; "))
            }
        }
    }
}

/// Everything that changed from `before` to `after`: the system prompt, the tools, then
/// the messages.
pub fn request_changes(before: &ExactRequest, after: &ExactRequest) -> Vec<RequestChange> {
    let mut out = Vec::new();
    if before.system != after.system {
        out.push(RequestChange::SystemPromptChanged {
            chars_before: before.system.chars().count(),
            chars_after: after.system.chars().count(),
        });
    }
    if let Some(tools) = tool_changes(before, after) {
        out.push(tools);
    }
    out.extend(message_changes(&before.messages, &after.messages));
    out
}

/// The label of a request's row: the most telling of its changes.
pub fn headline(changes: &[RequestChange]) -> String {
    let count = |label: &str| changes.iter().filter(|c| c.label() == label).count();
    for c in changes {
        if let RequestChange::SummaryReplacingHistory { .. } = c {
            return c.label().to_string();
        }
    }
    let cleared = count("cleared tool result");
    if cleared > 1 {
        return format!("cleared {cleared} tool results");
    }
    for label in [
        "cleared tool result",
        "dropped system reminder",
        "system prompt changed",
        "tool schemas changed",
    ] {
        if count(label) > 0 {
            return label.to_string();
        }
    }
    match changes.iter().find_map(|c| match c {
        RequestChange::Appended { messages } => Some(*messages),
        _ => None,
    }) {
        Some(k) => format!("appended {k}"),
        None => "unchanged".to_string(),
    }
}

fn tool_key(t: &Value) -> Option<&str> {
    t.get("name")
        .or_else(|| t.pointer("/function/name"))
        .and_then(Value::as_str)
}

fn clip(s: &str) -> String {
    crate::util::clip_chars(s, NAME_CHARS)
}

/// A list of at most `TOOLS_LISTED` names, then `(+n more)`.
fn listed(mut names: Vec<String>) -> Vec<String> {
    if names.len() > TOOLS_LISTED {
        let more = names.len() - TOOLS_LISTED;
        names.truncate(TOOLS_LISTED);
        names.push(format!("(+{more} more)"));
    }
    names
}

fn tool_changes(before: &ExactRequest, after: &ExactRequest) -> Option<RequestChange> {
    if before.tools == after.tools {
        return None;
    }
    let by_name = |r: &ExactRequest| -> HashMap<String, Value> {
        r.tools
            .iter()
            .filter_map(|t| Some((tool_key(t)?.to_string(), t.clone())))
            .collect()
    };
    let (old, new) = (by_name(before), by_name(after));
    let names = |r: &ExactRequest, keep: &dyn Fn(&str, &Value) -> bool| -> Vec<String> {
        r.tools
            .iter()
            .filter_map(|t| {
                let name = tool_key(t)?;
                keep(name, t).then(|| clip(name))
            })
            .collect()
    };
    let added = names(after, &|n, _| !old.contains_key(n));
    let removed = names(before, &|n, _| !new.contains_key(n));
    let changed = names(after, &|n, t| old.get(n).is_some_and(|o| o != t));
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        // Only the order moved (or nameless entries changed): not worth a line of its own.
        return None;
    }
    Some(RequestChange::ToolsChanged {
        added: listed(added),
        removed: listed(removed),
        changed: listed(changed),
    })
}

/// The changes between two message lists: in place (results cleared, reminders dropped)
/// followed by appended messages; else a summary replacing the history.
pub fn message_changes(before: &[Message], after: &[Message]) -> Vec<RequestChange> {
    let names = tool_names(before.iter());
    let mut out = match in_place(before, after, &names) {
        Some((changes, appended_from)) => {
            let mut out = changes;
            let appended = after.len() - appended_from;
            if appended > 0 {
                out.push(RequestChange::Appended { messages: appended });
            }
            return out;
        }
        None => Vec::new(),
    };
    let common = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    out.push(RequestChange::SummaryReplacingHistory {
        removed: before.len() - common,
        kept_start: common,
        summary_chars: after
            .get(common)
            .map_or(0, |m| m.joined_text().chars().count()),
    });
    let appended = after.len().saturating_sub(common + 1);
    if appended > 0 {
        out.push(RequestChange::Appended { messages: appended });
    }
    out
}

/// What the capture reader keeps of an in-place edit between two calls (earlier messages
/// only had results cleared or reminders dropped; new ones may follow): the cleared
/// results' ids (its micro compaction, none when only reminders went) and where in `after`
/// the appended messages start (a reminder message that went shifts them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InPlace {
    pub cleared: Vec<String>,
    pub appended_from: usize,
}

/// The in-place edit from `before` to `after`, or None when an earlier message was lost
/// or rewritten otherwise (a summary replacing the history).
pub fn edited_in_place(before: &[Message], after: &[Message]) -> Option<InPlace> {
    let (changes, appended_from) = in_place(before, after, &HashMap::new())?;
    let cleared = changes
        .into_iter()
        .filter_map(|c| match c {
            RequestChange::ClearedToolResult { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    Some(InPlace {
        cleared,
        appended_from,
    })
}

/// Walks `before` against `after`: equal messages match, a reminder-only message may be
/// gone, a differing message may differ only by cleared results and dropped reminders.
/// Returns the changes and where in `after` the appended messages start; None when any
/// earlier message was lost or rewritten otherwise.
fn in_place(
    before: &[Message],
    after: &[Message],
    names: &HashMap<String, String>,
) -> Option<(Vec<RequestChange>, usize)> {
    let mut changes = Vec::new();
    let mut j = 0;
    for (i, a) in before.iter().enumerate() {
        if after.get(j) == Some(a) {
            j += 1;
            continue;
        }
        if let Some(chars) = reminder_message(a) {
            changes.push(RequestChange::DroppedSystemReminder {
                message: i,
                chars,
                whole_message: true,
            });
            continue;
        }
        let b = after.get(j)?;
        message_in_place(i, a, b, names, &mut changes)?;
        j += 1;
    }
    Some((changes, j))
}

/// The chars of a message that is nothing but `<system-reminder>` text.
fn reminder_message(m: &Message) -> Option<usize> {
    match m.content() {
        Content::Text(s) => is_reminder(s).then(|| s.chars().count()),
        Content::Blocks(blocks) if !blocks.is_empty() => {
            let mut chars = 0;
            for b in blocks {
                chars += reminder_block(b)?;
            }
            Some(chars)
        }
        Content::Blocks(_) => None,
    }
}

fn is_reminder(text: &str) -> bool {
    let t = text.trim();
    t.starts_with(REMINDER_OPEN) && t.ends_with(REMINDER_CLOSE)
}

/// The chars of a text block that is a reminder.
fn reminder_block(b: &Value) -> Option<usize> {
    let text = b.get("text").and_then(Value::as_str)?;
    (BlockKind::of(b) == BlockKind::Text && is_reminder(text)).then(|| text.chars().count())
}

/// `text` with its `<system-reminder>…</system-reminder>` spans taken out, trimmed.
fn without_reminders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(REMINDER_OPEN) {
        let Some(len) = rest[start..].find(REMINDER_CLOSE) else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + len + REMINDER_CLOSE.len()..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// A text that lost only reminder spans: the chars they took.
fn reminder_span_dropped(before: &str, after: &str) -> Option<usize> {
    (before.contains(REMINDER_OPEN) && without_reminders(before) == after.trim())
        .then(|| before.chars().count().saturating_sub(after.chars().count()))
}

fn text_of(b: &Value) -> &str {
    b.get("text").and_then(Value::as_str).unwrap_or("")
}

fn result_chars(b: &Value) -> usize {
    match ResultContent::of(b) {
        ResultContent::Text(s) => s.chars().count(),
        ResultContent::Blocks(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .map(|t| t.chars().count())
            .sum(),
        ResultContent::Empty => 0,
    }
}

/// One earlier message against its later self.
fn message_in_place(
    i: usize,
    a: &Message,
    b: &Message,
    names: &HashMap<String, String>,
    changes: &mut Vec<RequestChange>,
) -> Option<()> {
    if a.role() != b.role() {
        return None;
    }
    let dropped = |chars| RequestChange::DroppedSystemReminder {
        message: i,
        chars,
        whole_message: false,
    };
    let (xs, ys) = match (a.content(), b.content()) {
        (Content::Text(x), Content::Text(y)) => {
            changes.push(dropped(reminder_span_dropped(x, y)?));
            return Some(());
        }
        (Content::Blocks(xs), Content::Blocks(ys)) if !xs.is_empty() => (xs, ys),
        _ => return None,
    };
    let mut k = 0;
    for x in xs {
        let y = ys.get(k);
        if y == Some(x) {
            k += 1;
            continue;
        }
        if let Some(chars) = reminder_block(x) {
            changes.push(dropped(chars));
            continue;
        }
        let y = y?;
        k += 1;
        match (BlockKind::of(x), BlockKind::of(y)) {
            (BlockKind::ToolResult, BlockKind::ToolResult)
                if x.get("tool_use_id") == y.get("tool_use_id") =>
            {
                let id = x.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                changes.push(RequestChange::ClearedToolResult {
                    id: clip(id),
                    tool: names.get(id).map(|n| clip(n)),
                    message: i,
                    chars_before: result_chars(x),
                    chars_after: result_chars(y),
                });
            }
            (BlockKind::Text, BlockKind::Text) => {
                changes.push(dropped(reminder_span_dropped(text_of(x), text_of(y))?));
            }
            _ => return None,
        }
    }
    // A block added to an earlier message is a rewrite, not a removal.
    (k == ys.len()).then_some(())
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
