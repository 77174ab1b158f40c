//! A session read line by line as it is written, into the same model the whole-file
//! readers make: each line goes through the very reader `load_session` uses (Claude Code's
//! `claude::read_line`, Codex's `CodexReader::line`, with their `Builder`), and after each
//! line what the reader added is reported once as a `LiveItem`: a model call with its
//! usage, a compaction (and later detail of it, such as the summary line that follows a
//! boundary), a message, a tool call, a skipped line of a type the reader does not know.
//!
//! A call is reported when its usage is written (a Claude Code answer spans several lines
//! that share one request; the context size is on the first). Subagent lines of a Claude
//! Code file are their own conversations: counted apart, never on the main curve. A Codex
//! `token_count` that follows a compaction before the model wrote anything is the
//! compaction's own summary call: reported with `summary: true`, off the curve. A
//! `ctxlab proxy` capture goes through the capture reader's fold (`live_capture`).

use serde_json::Value;

use super::live_capture::LiveCapture;
use super::live_item::{
    CALLS_TAIL, FORGET_BATCH, SeenToolIds, UUID_TAIL, UUIDS_DROPPED, WHOLE_TAIL, cut_preview,
    push_tool_call, report_messages,
};
pub use super::live_item::{LiveCall, LiveItem, LiveMessage};
use crate::message::BlockKind;
use crate::session::assemble::fill_tokens_from_calls;
use crate::session::claude::{self, Thread};
use crate::session::claude_line::{ParsedClaudeLine, Unread, parse_claude_lines};
use crate::session::codex::CodexReader;
use crate::session::codex_counted::parse_codex_counting_here;
use crate::session::detail::Detail;
use crate::session::format_of_line;
use crate::session::lines::ParsedLine;
use crate::session::model::{
    Compaction, MessageKind, Session, SessionFormat, Summary, TokenCount, TokenSource,
};

/// Lines read before giving up on recognising the format (as `detect_lines` does).
const DETECT_LINES: usize = 200;

enum Reader {
    Detecting(Vec<(usize, String)>),
    Claude(Box<Thread>),
    Codex(Box<CodexReader>),
    /// A `ctxlab proxy` capture (`live_capture`).
    Capture(Box<LiveCapture>),
    /// Not a Claude Code or Codex file after `DETECT_LINES` lines.
    Unknown,
}

/// What was reported already, so that each item is reported once.
#[derive(Default)]
struct Reported {
    messages: usize,
    calls: usize,
    open_call: Option<String>,
    /// Blocks of the open call reported, and the call they were counted on.
    open_blocks: usize,
    blocks_of: Option<String>,
    tool_ids: SeenToolIds,
    /// Calls dropped off the front of the builder's list (`forget_reported`).
    calls_forgotten: usize,
    /// A cheap signature of each compaction as last reported.
    compactions: Vec<String>,
    warnings: usize,
    /// Counts of the unknown kinds skipped, as last reported.
    unknown: std::collections::BTreeMap<String, usize>,
    /// Calls (the forgotten ones included) when the compactions' token counts were last
    /// filled.
    filled_at: Option<usize>,
    /// Codex: a compaction came and the model has not answered since.
    after_compaction: bool,
    /// Codex: the line just read was a `token_usage_record`, so its call is held back a
    /// line (`report`).
    newest_is_record: bool,
    /// Answers whose text was reported while their call was open, not yet closed.
    early: usize,
    /// The open call whose text was reported early.
    early_of: Option<String>,
    /// Compactions before this one are settled: both token counts known and a later
    /// compaction after them, so no later line changes what was reported of them.
    settled: usize,
}

/// A session followed line by line.
pub struct LiveSession {
    reader: Reader,
    reported: Reported,
    sidechain_lines: usize,
    lines: usize,
    /// Claude Code: the line uuids indexed at most (`UUID_TAIL`; a test sets fewer), and
    /// whether dropping the oldest was said.
    uuid_cap: usize,
    uuids_dropped: bool,
    /// Forget nothing (a test compares the items with and without forgetting).
    #[cfg(test)]
    keep_all: bool,
}

impl Default for LiveSession {
    fn default() -> Self {
        LiveSession::new()
    }
}

impl LiveSession {
    pub fn new() -> LiveSession {
        LiveSession {
            reader: Reader::Detecting(Vec::new()),
            reported: Reported::default(),
            sidechain_lines: 0,
            lines: 0,
            uuid_cap: UUID_TAIL,
            uuids_dropped: false,
            #[cfg(test)]
            keep_all: false,
        }
    }

    /// The format, once a line said it.
    pub fn format(&self) -> Option<SessionFormat> {
        self.session().map(|s| s.format)
    }

    /// Whether enough lines were read to know this is no session ctxlab follows.
    pub fn is_unknown(&self) -> bool {
        matches!(self.reader, Reader::Unknown)
    }

    /// The session as read so far (its open call not yet closed).
    pub fn session(&self) -> Option<&Session> {
        match &self.reader {
            Reader::Claude(t) => Some(&t.builder.session),
            Reader::Codex(r) => Some(&r.b.session),
            Reader::Capture(c) => Some(c.session()),
            _ => None,
        }
    }

    /// Lines of a Claude Code file's subagents (their own conversations).
    pub fn sidechain_lines(&self) -> usize {
        self.sidechain_lines
    }

    /// Lines passed over, of every kind (the opened-session view's count).
    pub fn skipped(&self) -> usize {
        self.session()
            .map(|s| s.skipped.values().sum())
            .unwrap_or(0)
    }

    /// Non-empty lines read.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Reads one line (its 1-based number and text, without the newline) and appends what
    /// it added to `out`.
    pub fn push_line(&mut self, number: usize, text: &str, out: &mut Vec<LiveItem>) {
        if text.trim().is_empty() {
            return;
        }
        self.lines += 1;
        match &mut self.reader {
            Reader::Detecting(held) => {
                let format = serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|v| format_of_line(&v));
                match format {
                    Some(SessionFormat::ClaudeCode) => {
                        let held = std::mem::take(held);
                        self.reader = Reader::Claude(Box::new(Thread::new()));
                        self.replay(held, number, text, out);
                    }
                    Some(f @ (SessionFormat::Codex | SessionFormat::CodexLegacy)) => {
                        let held = std::mem::take(held);
                        // A follower shows a compaction's counts, never its whole new history.
                        let r = CodexReader::new(f, Detail::Numbers);
                        self.reader = Reader::Codex(Box::new(r));
                        self.replay(held, number, text, out);
                    }
                    Some(SessionFormat::ProxyCapture) => {
                        let held = std::mem::take(held);
                        #[allow(unused_mut)]
                        let mut capture = Box::<LiveCapture>::default();
                        #[cfg(test)]
                        {
                            capture.keep_all = self.keep_all;
                        }
                        self.reader = Reader::Capture(capture);
                        self.replay(held, number, text, out);
                    }
                    _ if held.len() + 1 >= DETECT_LINES => self.reader = Reader::Unknown,
                    _ => held.push((number, text.to_string())),
                }
            }
            Reader::Unknown => {}
            _ => self.read(number, text, out),
        }
    }

    fn replay(
        &mut self,
        held: Vec<(usize, String)>,
        number: usize,
        text: &str,
        out: &mut Vec<LiveItem>,
    ) {
        for (n, t) in held {
            self.read(n, &t, out);
        }
        self.read(number, text, out);
    }

    fn read(&mut self, number: usize, text: &str, out: &mut Vec<LiveItem>) {
        match &mut self.reader {
            Reader::Claude(thread) => {
                for ParsedClaudeLine { number, line } in parse_claude_lines(text, number) {
                    match line {
                        Ok(o) => {
                            if o.is_sidechain {
                                self.sidechain_lines += 1;
                                continue;
                            }
                            thread.builder.session.lines += 1;
                            claude::read_line(thread, number, o);
                        }
                        Err(Unread::NotObject) => thread
                            .builder
                            .warn(number, "line is JSON but not an object; skipped"),
                        Err(Unread::Malformed(e)) => thread
                            .builder
                            .warn(number, format!("malformed line skipped: {e}")),
                    }
                }
            }
            Reader::Codex(r) => {
                // Numbers only: each replacement history is counted as its line is parsed.
                for ParsedLine { number, value } in parse_codex_counting_here(text, number) {
                    r.b.session.lines += 1;
                    self.reported.newest_is_record = matches!(&value, Ok(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("token_usage_record"));
                    match value {
                        Ok(Value::Object(o)) => r.line(number, o),
                        Ok(_) => r.b.warn(number, "line is JSON but not an object; skipped"),
                        Err(e) => r.b.warn(number, format!("malformed line skipped: {e}")),
                    }
                }
            }
            Reader::Capture(c) => return c.read(number, text, out),
            _ => return,
        }
        self.report(number, out);
    }

    /// Appends what the last line added: calls, compactions, tool calls, messages, in the
    /// order the file wrote them (`LiveItem::order`; issue 38: a compaction came before
    /// the messages its line closed, a tool call before its call's text).
    fn report(&mut self, number: usize, out: &mut Vec<LiveItem>) {
        let start = out.len();
        self.report_unordered(number, out);
        out[start..].sort_by_key(|i| i.order(number));
        self.forget_reported(number);
    }

    fn report_unordered(&mut self, number: usize, out: &mut Vec<LiveItem>) {
        let r = &mut self.reported;
        let compaction_in_flight =
            matches!(&self.reader, Reader::Codex(c) if c.compaction_in_flight());
        let (builder, is_claude) = match &mut self.reader {
            Reader::Claude(t) => (&mut t.builder, true),
            Reader::Codex(c) => (&mut c.b, false),
            _ => return,
        };
        // Skipped lines of kinds the reader does not know: a newer agent's.
        for (what, n) in &builder.session.skipped {
            if !what.starts_with("unknown") {
                continue;
            }
            let before = r.unknown.get(what).copied().unwrap_or(0);
            if *n > before {
                out.push(LiveItem::Skipped {
                    line: number,
                    what: what.clone(),
                });
                r.unknown.insert(what.clone(), *n);
            }
        }
        for w in &builder.session.warnings[r.warnings..] {
            out.push(LiveItem::Warning(w.clone()));
        }
        r.warnings = builder.session.warnings.len();
        // Compactions first: a compaction closes the open call, whose message follows.
        let new_compaction = builder.session.compactions.len() > r.compactions.len();
        // Before 0.171 a Codex compaction's own call was recorded after its line; 0.171
        // records it before, and the line names it (`own_call`): nothing to wait for then.
        if new_compaction
            && builder
                .session
                .compactions
                .last()
                .is_some_and(|c| c.own_call.is_none())
        {
            r.after_compaction = true;
        }
        let missing = builder
            .session
            .compactions
            .last()
            .is_some_and(|c| c.tokens_before.is_none() || c.tokens_after.is_none());
        let calls_now = r.calls_forgotten + builder.session.calls.len();
        if new_compaction || (missing && r.filled_at != Some(calls_now)) {
            r.filled_at = Some(calls_now);
            // The whole-file reader's own fill, over the calls so far.
            fill_tokens_from_calls(&mut builder.session);
        }
        // The first call after a compaction may stay open to the file's end (the next line
        // closes it, and there may be none yet): its usage is known, and the whole-file read
        // closes it and takes it. A compaction closes the open call, so an open call now
        // came after the last compaction.
        let open_tokens = builder
            .open_call()
            .and_then(|c| c.usage.map(|(u, _)| u.context_tokens()));
        if let Some(tokens) = open_tokens
            && let Some(last) = builder.session.compactions.last_mut()
            && last.tokens_after.is_none()
        {
            last.tokens_after = Some(TokenCount {
                tokens,
                source: TokenSource::FirstCallAfter,
            });
        }
        // A call's model output since the compaction: later counts are the model's again.
        if builder.open_call().is_some_and(|c| !c.blocks.is_empty()) {
            r.after_compaction = false;
        }
        // Calls: Claude Code's when the open call's usage appears, Codex's as recorded.
        let mut calls = Vec::new();
        if is_claude {
            if let Some(open) = builder.open_call()
                && let Some((usage, line)) = open.usage
                && r.open_call.as_deref() != Some(open.key)
            {
                r.open_call = Some(open.key.to_string());
                calls.push(LiveCall {
                    line,
                    timestamp: builder.session.meta.ended.clone(),
                    model: open.model.map(str::to_string),
                    usage: *usage,
                    context_tokens: usage.context_tokens(),
                    context_window: None,
                    summary: false,
                });
            }
            r.calls = builder.session.calls.len();
        } else {
            // A call recorded by a `token_usage_record` waits for the next line: Codex 0.171
            // writes a server compaction's own call (over the WebSocket, with nothing
            // before it that says so) just before the `compacted` line that names it, and
            // that line takes it out of the calls, as the whole-file read does. Any other
            // line shows it was the model's.
            let len = builder.session.calls.len();
            let end = if r.newest_is_record && r.calls < len {
                len.saturating_sub(1)
            } else {
                len
            };
            // The `compacted` line takes its own call out of the calls: fewer than reported.
            let start = r.calls.min(end);
            for c in &builder.session.calls[start..end] {
                calls.push(LiveCall::of(c, r.after_compaction || compaction_in_flight));
                r.after_compaction = false;
            }
            r.calls = end;
        }
        // Compactions, new or with more said about them.
        // Only the unsettled ones are compared: a file of thousands of compactions is
        // followed in time that grows with its lines, not lines times compactions.
        let compactions = &builder.session.compactions;
        for (k, c) in compactions.iter().enumerate().skip(r.settled) {
            let sig = signature(c);
            match r.compactions.get_mut(k) {
                Some(old) if *old == sig => {}
                Some(old) => {
                    *old = sig;
                    out.push(LiveItem::Compaction {
                        index: k,
                        compaction: Box::new(c.clone()),
                        update: true,
                        at: number,
                    });
                }
                None => {
                    r.compactions.push(sig);
                    out.push(LiveItem::Compaction {
                        index: k,
                        compaction: Box::new(c.clone()),
                        update: false,
                        at: c.line,
                    });
                }
            }
        }
        while r.settled + 1 < compactions.len()
            && r.settled < r.compactions.len()
            && compactions[r.settled].tokens_before.is_some()
            && compactions[r.settled].tokens_after.is_some()
        {
            r.settled += 1;
        }
        out.extend(calls.into_iter().map(LiveItem::Call));
        // Messages, once closed (the open call's when the next piece closes it).
        let s = &builder.session;
        r.messages = report_messages(
            s,
            builder.forgotten(),
            r.messages,
            builder.end(),
            &mut r.tool_ids,
            &mut r.early,
            out,
        );
        // The open call's text and tool calls as soon as it holds them: a Claude Code
        // answer closes only when the next one starts, after its tools ran, and its text
        // was written before its tool calls.
        if let Some(open) = builder.open_call() {
            if r.open_blocks > open.blocks.len() || r.blocks_of.as_deref() != Some(open.key) {
                r.open_blocks = 0;
                r.blocks_of = Some(open.key.to_string());
            }
            // Codex's answer closes only after the token count that reports its call
            // (issue 38: its text printed after that call's line), so its text is
            // reported as soon as it is written too.
            if r.early_of.as_deref() != Some(open.key) {
                let text = open
                    .blocks
                    .iter()
                    .filter(|b| BlockKind::of(b) == BlockKind::Text)
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                if !text.trim().is_empty() {
                    r.early_of = Some(open.key.to_string());
                    r.early += 1;
                    out.push(LiveItem::Message(LiveMessage {
                        index: builder.end(),
                        // Claude Code's: the answer's first line; Codex's: this line.
                        line: if is_claude {
                            open.usage.map_or(number, |(_, line)| line)
                        } else {
                            number
                        },
                        role: "assistant".into(),
                        kind: MessageKind::Conversation,
                        preview: cut_preview(&text),
                        tool_uses: open
                            .blocks
                            .iter()
                            .filter(|b| BlockKind::of(b) == BlockKind::ToolUse)
                            .count(),
                        tool_results: 0,
                    }));
                }
            }
            for b in &open.blocks[r.open_blocks..] {
                push_tool_call(&mut r.tool_ids, b, number, out);
            }
            r.open_blocks = open.blocks.len();
        } else {
            r.open_blocks = 0;
        }
        if builder.open_call().is_some_and(|c| c.blocks.is_empty()) {
            r.open_blocks = 0;
        }
    }

    /// Drops what was reported and no later line needs (issue 39, item 5): messages
    /// behind the newest `WHOLE_TAIL` reported, calls behind the newest `CALLS_TAIL`
    /// reported that no compaction still missing a token count could take, the request
    /// record's matches. What a follower holds then follows what it shows (the summary
    /// numbers, the compactions, a window of messages), not the lines it read. Indices
    /// stay the whole file's (`Builder::forget_messages`), so every item reported is the
    /// one a follower that forgot nothing would report.
    fn forget_reported(&mut self, number: usize) {
        #[cfg(test)]
        if self.keep_all {
            return;
        }
        let r = &mut self.reported;
        let (builder, is_codex) = match &mut self.reader {
            Reader::Claude(t) => {
                let cut = r.messages.saturating_sub(WHOLE_TAIL);
                if cut >= t.builder.forgotten() + FORGET_BATCH {
                    t.forget_record();
                }
                if t.forget_uuids(self.uuid_cap) && !self.uuids_dropped {
                    self.uuids_dropped = true;
                    t.builder.warn(number, UUIDS_DROPPED);
                }
                (&mut t.builder, false)
            }
            Reader::Codex(c) => {
                let n = forgettable_calls(&c.b.session, r);
                if n >= FORGET_BATCH {
                    c.forget_calls(n);
                    r.calls -= n;
                    r.calls_forgotten += n;
                }
                (&mut c.b, true)
            }
            _ => return,
        };
        let cut = r.messages.saturating_sub(WHOLE_TAIL);
        let n = cut.saturating_sub(builder.forgotten());
        if n >= FORGET_BATCH {
            builder.forget_messages(n);
        }
        if !is_codex {
            // Claude Code's calls are reported as they open: every one in the list was.
            let n = forgettable_calls(&builder.session, r);
            if n >= FORGET_BATCH {
                builder.session.calls.drain(..n);
                r.calls = builder.session.calls.len();
                r.calls_forgotten += n;
            }
        }
    }

    /// What the follower holds, in items, for a test to check that it stays bounded:
    /// messages and their origins, calls, tool ids remembered.
    #[cfg(test)]
    pub(crate) fn held_items(&self) -> usize {
        let Some(s) = self.session() else {
            return 0;
        };
        let uuids = match &self.reader {
            Reader::Claude(t) => t.uuids_held(),
            _ => 0,
        };
        s.messages.len() + s.info.len() + s.calls.len() + self.reported.tool_ids.len() + uuids
    }
}

/// How many calls at the front of `s.calls` a follower may drop: reported and behind the
/// newest `CALLS_TAIL`. A compaction's missing token counts need none of them: the counts
/// were filled from the calls held before any is dropped (`report_unordered`), calls come
/// in file order (`fill_tokens_from_calls` takes the last call before a compaction and the
/// first after it), and a count still missing then is one no call so far can give.
fn forgettable_calls(s: &Session, r: &Reported) -> usize {
    r.calls.min(s.calls.len()).saturating_sub(CALLS_TAIL)
}

/// What a later line can add to a compaction, in a form cheap to compare.
fn signature(c: &Compaction) -> String {
    let summary = match &c.summary {
        Summary::Text(t) => format!("text {}", t.len()),
        other => format!("{other:?}"),
    };
    format!(
        "{} {:?} {:?} {:?} {summary} {:?} {:?} {}",
        c.line,
        c.trigger,
        c.tokens_before,
        c.tokens_after,
        c.summary_message,
        c.kept_messages(),
        c.cleared_tool_ids.len()
    )
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "live_held_tests.rs"]
mod held_tests;

#[cfg(test)]
#[path = "live_capture_tests.rs"]
mod capture_tests;
