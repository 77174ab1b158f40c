//! What a followed session's lines added, as the follower reports it (`LiveItem`: a call,
//! a compaction, a message, a tool call, a skipped line, a warning), and the helpers both
//! readers (`live`, `live_capture`) report messages and tool calls with.

use std::collections::{HashSet, VecDeque};

use serde::Serialize;
use serde_json::Value;

use crate::message::{BlockKind, Named, block_tool_id, named_in};
use crate::session::model::{
    Compaction, LoadWarning, MessageKind, RecordedCall, RecordedUsage, Session,
};

/// Messages a follower keeps behind the last one it reported: the readers look back at
/// roles only (kept apart once forgotten, `Builder::forget_messages`), and the newest few
/// stay whole for a reader that looks further.
pub(super) const WHOLE_TAIL: usize = 64;

/// Calls a follower keeps behind the last one it reported: a Codex compaction takes its
/// own call back out of the calls a few records back (`codex_usage`).
pub(super) const CALLS_TAIL: usize = 16;

/// Line uuids a Claude Code follower indexes since the last compaction, at most (each
/// 16 bytes): a session that never compacts stays bounded, and a rewind further back than
/// this many lines is not marked (said once, `UUIDS_DROPPED`).
pub(super) const UUID_TAIL: usize = 1 << 18;

/// The warning a follower gives the first time it drops uuids past `UUID_TAIL`.
pub(super) const UUIDS_DROPPED: &str = "watch keeps the uuids of the newest lines since the last compaction only (262,144): a prompt that rewinds further back than that is not marked as a rewind here (ctxlab inspect reads the whole file)";

/// Messages and calls are forgotten this many at a time at least, so that dropping the
/// front of a list costs a constant time per item.
pub(super) const FORGET_BATCH: usize = 256;

/// Characters of a message's text kept for its event.
const PREVIEW_CHARS: usize = 160;
/// Characters of a tool call's path or command kept for its event.
pub(super) const SUBJECT_CHARS: usize = 120;

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
        /// The line that added this: the compaction's own when it first appears, a later
        /// line for an update (printed as that line's, so line numbers never go down).
        at: usize,
    },
    Message(LiveMessage),
    /// A tool call: `subject` is the path or command it names (`tool_subject`), empty
    /// when its input names neither.
    ToolCall {
        line: usize,
        id: String,
        name: String,
        subject: String,
    },
    /// A line of a kind the reader does not know (a newer agent's), counted and passed over.
    Skipped {
        line: usize,
        what: String,
    },
    Warning(LoadWarning),
}

impl LiveItem {
    /// Where the item sorts among those one line of the file added: by the line that
    /// wrote it, then a call before its answer's text, the text before its tool calls
    /// (the order the agent wrote them in). A compaction's later detail sorts at
    /// `now`, the line that added it.
    pub(super) fn order(&self, now: usize) -> (usize, u8) {
        match self {
            LiveItem::Call(c) => (c.line, 0),
            LiveItem::Compaction {
                update: true, at, ..
            } => (*at.max(&now), 1),
            LiveItem::Compaction { compaction, .. } => (compaction.line, 1),
            LiveItem::Message(m) => (m.line, 2),
            LiveItem::ToolCall { line, .. } => (*line, 3),
            LiveItem::Skipped { line, .. } => (*line, 4),
            LiveItem::Warning(w) => (w.line, 5),
        }
    }
}

/// Tool ids a follower remembers as reported: a call's tool use is seen twice, while its
/// call is open and when its message closes, a few lines apart. Beyond this many later tool calls an id is forgotten, so what
/// a follower holds does not grow with the calls it saw (issue 39, item 5).
const SEEN_TOOL_IDS: usize = 256;

/// The tool ids reported lately (`SEEN_TOOL_IDS`), each once.
#[derive(Debug, Default)]
pub(super) struct SeenToolIds {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl SeenToolIds {
    /// Whether `id` is new (then it is remembered, and the oldest forgotten past the cap).
    fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == SEEN_TOOL_IDS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.set.insert(id.to_string());
        self.order.push_back(id.to_string());
        true
    }

    /// How many ids are remembered.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }
}

pub(super) fn push_tool_call(
    seen: &mut SeenToolIds,
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
    if seen.insert(id) {
        out.push(LiveItem::ToolCall {
            line,
            id: id.to_string(),
            name: b
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            subject: b.get("input").map(tool_subject).unwrap_or_default(),
        });
    }
}

/// What a tool call's input names, for a reader of the live view: the path (`file_path`,
/// `path`, `notebook_path`, `filename`) or the command (`command`, `cmd`; a list of words
/// joined, `["bash", "-lc", SCRIPT]` as its script), on one line and cut at
/// `SUBJECT_CHARS` characters. Unsanitized: the front ends sanitize what they print.
pub fn tool_subject(input: &Value) -> String {
    let text = named_in(input).map(|named| match named {
        Named::Path(text) | Named::Command(text) => text,
    });
    let one_line = text
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match one_line.char_indices().nth(SUBJECT_CHARS) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

pub(super) fn preview(m: &crate::message::Message) -> String {
    let text = match m.text() {
        Some(t) => t.to_string(),
        None => m.joined_text(),
    };
    cut_preview(&text)
}

/// A message's text cut at `PREVIEW_CHARS` characters.
pub(super) fn cut_preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Reports the messages from `from` up to `to` (with their tool calls); the next to report.
/// Indices are the whole file's: `s.messages` starts at message `base` (the ones before
/// were reported and forgotten, `Builder::forget_messages`).
/// `early` counts the answers whose text was reported while their call was still open
/// (`LiveSession::report`): the next that many assistant messages are not reported again.
pub(super) fn report_messages(
    s: &Session,
    base: usize,
    from: usize,
    to: usize,
    tool_ids: &mut SeenToolIds,
    early: &mut usize,
    out: &mut Vec<LiveItem>,
) -> usize {
    let to = to.min(base + s.messages.len()).max(from);
    for index in from..to {
        let Some(m) = index.checked_sub(base).and_then(|i| s.messages.get(i)) else {
            continue;
        };
        let Some(info) = s.info.get(index - base) else {
            continue;
        };
        for b in m.tool_uses() {
            push_tool_call(tool_ids, b, info.line, out);
        }
        if *early > 0 && m.role() == "assistant" {
            *early -= 1;
            continue;
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
