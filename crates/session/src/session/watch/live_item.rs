//! What a followed session's lines added, as the follower reports it (`LiveItem`: a call,
//! a compaction, a message, a tool call, a skipped line, a warning), and the helpers both
//! readers (`live`, `live_capture`) report messages and tool calls with.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use crate::message::{BlockKind, block_tool_id};
use crate::session::model::{
    Compaction, LoadWarning, MessageKind, RecordedCall, RecordedUsage, Session,
};

/// Characters of a message's text kept for its event.
const PREVIEW_CHARS: usize = 160;

/// One model call as it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveCall {
    pub line: usize,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub usage: RecordedUsage,
    /// Input + cache read + cache write: the size of the prompt it sent.
    pub context_tokens: u64,
    /// The window the file records with the call (Codex does).
    pub context_window: Option<u64>,
    /// A compaction's own call (its summary request): not on the context curve.
    pub summary: bool,
}

impl LiveCall {
    /// The event of a call the reader has closed (`summary`: the compaction's own call).
    pub(super) fn of(c: &RecordedCall, summary: bool) -> LiveCall {
        LiveCall {
            line: c.line,
            timestamp: c.timestamp.clone(),
            model: c.model.clone(),
            usage: c.usage,
            context_tokens: c.usage.context_tokens(),
            context_window: c.context_window,
            summary,
        }
    }
}

/// One message of the session, once the reader has closed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveMessage {
    pub index: usize,
    pub line: usize,
    pub role: String,
    pub kind: MessageKind,
    /// Its text blocks joined, cut at `PREVIEW_CHARS` characters.
    pub preview: String,
    pub tool_uses: usize,
    pub tool_results: usize,
}

/// What a line added to the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum LiveItem {
    Call(LiveCall),
    /// A compaction, when it first appears (`update` false) and each time the lines after
    /// it add to it (its summary, its trigger, the tokens after it).
    Compaction {
        index: usize,
        compaction: Box<Compaction>,
        update: bool,
    },
    Message(LiveMessage),
    ToolCall {
        line: usize,
        id: String,
        name: String,
    },
    /// A line of a kind the reader does not know (a newer agent's), counted and passed over.
    Skipped {
        line: usize,
        what: String,
    },
    Warning(LoadWarning),
}

pub(super) fn push_tool_call(
    seen: &mut HashSet<String>,
    b: &Value,
    line: usize,
    out: &mut Vec<LiveItem>,
) {
    if BlockKind::of(b) != BlockKind::ToolUse {
        return;
    }
    let Some(id) = block_tool_id(b) else {
        return;
    };
    if seen.insert(id.to_string()) {
        out.push(LiveItem::ToolCall {
            line,
            id: id.to_string(),
            name: b
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
}

pub(super) fn preview(m: &crate::message::Message) -> String {
    let text = match m.text() {
        Some(t) => t.to_string(),
        None => m.joined_text(),
    };
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Reports the messages from `from` up to `to` (with their tool calls); the next to report.
pub(super) fn report_messages(
    s: &Session,
    from: usize,
    to: usize,
    tool_ids: &mut HashSet<String>,
    out: &mut Vec<LiveItem>,
) -> usize {
    let to = to.min(s.messages.len()).max(from);
    for index in from..to {
        let m = &s.messages[index];
        let Some(info) = s.info.get(index) else {
            continue;
        };
        for b in m.tool_uses() {
            push_tool_call(tool_ids, b, info.line, out);
        }
        out.push(LiveItem::Message(LiveMessage {
            index,
            line: info.line,
            role: m.role().to_string(),
            kind: info.kind,
            preview: preview(m),
            tool_uses: m.tool_uses().count(),
            tool_results: m.tool_results().count(),
        }));
    }
    to
}
