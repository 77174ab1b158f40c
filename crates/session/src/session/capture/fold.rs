//! The one fold of a capture into a session, line by line: the whole-file reader
//! (`read_capture`, here) and the follower (`watch::live_capture`) both push each line here in file
//! order, so a capture followed as the proxy writes it and the same file read whole give
//! the same calls and compactions (docs/capture.md, "A capture as a session").
//!
//! The main thread is chosen as lines come, never by looking ahead: the first model call
//! that offers tools fixes its tool names; a later call belongs to it when it offers all of
//! them (a client that gained tools, an MCP server connected late, is still the same
//! thread). Calls with other tools or none (a quota probe, a title, a subagent) are side
//! requests, counted and left out. Calls that offer no tools are held until a call says
//! what they were: a tooled call makes them side requests; a tool-less call that extends a
//! held one's messages shows a client without tools, whose thread they are. `finish` takes
//! whatever is still held as the thread (a capture of one tool-less request).
//!
//! Before that, `kind::request_kind` sets apart what is no call: a refused request (listed,
//! the client retries it) and the agent's compaction request, whose answer is the summary
//! the next call of the thread starts from. A request that does not extend the thread is a
//! compaction only when it is the same conversation: after a compaction request, or from
//! the same client and model; otherwise it is another conversation, left out like a side
//! request.

use std::collections::BTreeSet;

use super::changes::edited_in_place;
use super::compaction::{Before, PendingCompaction, full_compaction, push_all};
use super::format::{CaptureLine, Exchange};
use super::kind::{
    RequestKind, codex_thread, request_kind, summary_needle, without_summary_prompt,
};
use super::read::{NextChunk, TORN_LAST_LINE, answer_message, each_line, usage_of};
use super::request::{ExactRequest, exact_request};
use crate::message::{Message, Role};
use crate::session::SessionError;
use crate::session::lines::ParsedLine;
use crate::session::model::{
    Compaction, CompactionKind, LoadWarning, MessageKind, MessageOrigin, RecordedCall,
    RecordedUsage, Session, SessionFormat,
};

/// What a side request is counted as.
pub const SIDE_REQUEST: &str = "side request (other tools than the main thread's)";
/// What a request of another conversation than the thread's is counted as.
pub const OTHER_CONVERSATION: &str = "request of another conversation (other client or model)";
/// What the agent's compaction request is counted as: its answer is the summary.
pub const COMPACTION_REQUEST: &str = "compaction request (the agent asking for its summary)";
/// What Codex's prewarm (`"generate": false`) is counted as: nothing was generated.
pub const PREWARM: &str = "prewarm (the request sent ahead, nothing generated)";
/// What a request that got no answer is counted as (a 429, an error event).
pub const REFUSED: &str = "refused request (no answer: an error status or event)";
/// What an exchange that is no model call is counted as.
pub const NOT_A_CALL: &str = "exchange that is no model call with a readable body";
/// What a line that is no capture line is counted as.
pub const NOT_A_LINE: &str = "line not in the capture format";
/// Warnings kept at most.
const MAX_WARNINGS: usize = 20;
/// Tool-less calls held while the thread is not known; older ones go as side requests.
const MAX_HELD: usize = 32;

/// Reads a capture's parsed lines as a session: each line through the fold the follower
/// uses too (`fold`), in file order, as they come (a chunked read hands them a chunk at a
/// time: a capture repeats the whole history in every request, so its parsed lines are
/// never all held).
pub(crate) fn read_capture(lines: impl IntoIterator<Item = ParsedLine>) -> Session {
    let mut fold = CaptureFold::new();
    let mut lines = lines.into_iter().peekable();
    while let Some(ParsedLine { number, value }) = lines.next() {
        let last = lines.peek().is_none();
        fold.push(number, value, last);
    }
    fold.finish()
}

/// `read_capture` from a capture read a chunk of lines at a time (`chunked`): each line
/// parsed straight into a capture line (`read::parse_line`) and folded before the next
/// chunk is read.
pub(crate) fn read_capture_chunks(next: &mut NextChunk) -> Result<Session, SessionError> {
    let mut fold = CaptureFold::new();
    each_line(next, &mut |number, parsed, last| {
        fold.push_parsed(number, parsed, last)
    })?;
    Ok(fold.finish())
}

/// One model call, as much of its exchange as the fold needs.
struct Call {
    line: usize,
    started: String,
    model: Option<String>,
    /// The client's `user-agent`, when the capture kept it.
    client: Option<String>,
    /// The conversation the client names (Codex's `thread_id`).
    thread: Option<String>,
    usage: RecordedUsage,
    /// The assembled answer, for when no later request holds it.
    answer: Option<Message>,
    /// The answer held the server's own compaction (Anthropic's `compaction` block).
    server_compacted: bool,
    req: ExactRequest,
}

impl Call {
    fn of(line: usize, e: &Exchange, req: ExactRequest) -> Call {
        Call {
            line,
            started: e.started.clone(),
            model: e.response.model.clone().or_else(|| req.model.clone()),
            client: e
                .request
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("user-agent"))
                .and_then(|h| h.value.clone()),
            thread: codex_thread(e),
            usage: usage_of(e),
            answer: answer_message(e),
            server_compacted: e.response.server_compaction.is_some(),
            req,
        }
    }

    fn tools(&self) -> BTreeSet<String> {
        self.req.tool_names().into_iter().collect()
    }
}

/// A capture folded so far.
pub struct CaptureFold {
    session: Session,
    /// The main thread's tool names, once known.
    main: Option<BTreeSet<String>>,
    held: Vec<Call>,
    /// The messages the thread's last call sent.
    prev: Vec<Message>,
    /// The thread's last answer, until a later request holds it.
    last_answer: Option<(String, Message)>,
    /// The header's ctxlab version and start.
    started: Option<String>,
    /// The client, model and system prompt of the thread's last call.
    last: Option<Speaker>,
    /// A compaction request seen since the thread's last call.
    pending: Option<PendingCompaction>,
    /// The thread's last answer held the server's own compaction: the request after it
    /// that no longer extends the thread shows a compaction of kind "server".
    last_server_compacted: bool,
    /// Messages a follower dropped off the front of the session once reported (`forget`):
    /// every index the fold hands out (a call's message, a compaction's `at`) counts them,
    /// so indices stay those of the whole file. Always 0 for a whole-file read.
    base: usize,
}

/// Who made the thread's last call: a request that does not extend the thread comes from
/// the same conversation only when it is the same client, model and system prompt.
#[derive(Debug, Clone, PartialEq)]
struct Speaker {
    client: Option<String>,
    thread: Option<String>,
    model: Option<String>,
    system: String,
}

impl Default for CaptureFold {
    fn default() -> Self {
        CaptureFold::new()
    }
}

impl CaptureFold {
    pub fn new() -> CaptureFold {
        CaptureFold {
            session: Session::empty(SessionFormat::ProxyCapture),
            main: None,
            held: Vec::new(),
            prev: Vec::new(),
            last_answer: None,
            started: None,
            last: None,
            pending: None,
            last_server_compacted: false,
            base: 0,
        }
    }

    /// How many messages were folded so far, the forgotten ones included: the index the
    /// next message gets.
    pub fn end(&self) -> usize {
        self.base + self.session.messages.len()
    }

    /// How many messages the front of the session lost (`forget`).
    pub fn forgotten(&self) -> usize {
        self.base
    }

    /// Drops the first `messages` messages (with their origins) and `calls` calls of the
    /// session: what a follower does with what it reported (`watch::live_capture`), so that
    /// what it holds follows what it shows, not the capture's length. The fold looks back
    /// only at the thread's last request (`prev`), the last message and the last call.
    pub fn forget(&mut self, messages: usize, calls: usize) {
        let s = &mut self.session;
        // The last message and call stay: a compaction and the next call look at them.
        let messages = messages.min(s.messages.len().saturating_sub(1));
        s.messages.drain(..messages);
        s.info.drain(..messages.min(s.info.len()));
        self.base += messages;
        let calls = calls.min(s.calls.len().saturating_sub(1));
        s.calls.drain(..calls);
    }

    /// The session as folded so far (the thread's last answer not yet in it).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// When the capture started, from its header.
    pub fn started(&self) -> Option<&str> {
        self.started.as_deref()
    }

    /// Tool-less calls not yet known to be the thread's or side requests.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Folds one line (its 1-based number and its JSON, or why it is none); `last` says
    /// it is the file's last line, which a kill may have cut.
    pub fn push(
        &mut self,
        number: usize,
        value: Result<serde_json::Value, serde_json::Error>,
        last: bool,
    ) {
        self.push_parsed(number, value.and_then(serde_json::from_value), last);
    }

    /// `push` for a line parsed as a capture line (`read::parse_line`).
    pub fn push_parsed(
        &mut self,
        number: usize,
        parsed: Result<CaptureLine, serde_json::Error>,
        last: bool,
    ) {
        self.session.lines += 1;
        match parsed {
            Ok(CaptureLine::Header(h)) => {
                self.session.meta.version.get_or_insert(h.ctxlab);
                self.started.get_or_insert(h.started);
            }
            Ok(CaptureLine::Exchange(e)) => self.exchange(number, &e),
            Err(e) => {
                self.count(NOT_A_LINE);
                let message = if last {
                    TORN_LAST_LINE.to_string()
                } else {
                    format!("not a capture line, skipped: {e}")
                };
                if self.session.warnings.len() < MAX_WARNINGS {
                    self.session.warnings.push(LoadWarning {
                        line: number,
                        message,
                    });
                }
            }
        }
    }

    /// Folds one exchange (its line's number).
    pub fn exchange(&mut self, line: usize, e: &Exchange) {
        let body = e.request.body.as_ref().filter(|_| e.api.is_model_call());
        let req = body.and_then(|b| exact_request(e.api, b));
        let Some(req) = req else {
            self.count(NOT_A_CALL);
            return;
        };
        match request_kind(e, &req) {
            RequestKind::Call => {}
            RequestKind::Refused { .. } => return self.count(REFUSED),
            RequestKind::Prewarm => return self.count(PREWARM),
            RequestKind::CompactionRequest { trigger } => {
                self.count(COMPACTION_REQUEST);
                // The thread's own: it starts as the thread's last request did (another
                // client's compaction says nothing about this thread).
                let shares = matches!((self.prev.first(), req.messages.first()), (Some(a), Some(b)) if a == b);
                if !shares {
                    return;
                }
                self.absorb(line, &e.started, req.messages);
                self.pending = Some(PendingCompaction {
                    line,
                    started: e.started.clone(),
                    needle: summary_needle(&e.response.text),
                    trigger,
                    server: e.response.server_compaction.is_some(),
                });
                return;
            }
        }
        let call = Call::of(line, e, req);
        let tools = call.tools();
        match &self.main {
            Some(main) if main.is_empty() => {
                if tools.is_empty() {
                    self.fold(call);
                } else {
                    self.count(SIDE_REQUEST);
                }
            }
            Some(main) => {
                if tools.is_superset(main) {
                    if self.fold(call) {
                        self.main = Some(tools);
                    }
                } else {
                    self.count(SIDE_REQUEST);
                }
            }
            None if !tools.is_empty() => {
                for _ in std::mem::take(&mut self.held) {
                    self.count(SIDE_REQUEST);
                }
                self.main = Some(tools);
                self.fold(call);
            }
            None => {
                let extends = |h: &Call| {
                    h.req.messages.len() < call.req.messages.len()
                        && call.req.messages.starts_with(&h.req.messages)
                };
                if self.held.iter().any(extends) {
                    // A conversation growing without tools: the thread is tool-less.
                    self.main = Some(BTreeSet::new());
                    for h in std::mem::take(&mut self.held) {
                        if extends(&h) {
                            self.fold(h);
                        } else {
                            self.count(SIDE_REQUEST);
                        }
                    }
                    self.fold(call);
                } else {
                    if self.held.len() == MAX_HELD {
                        self.held.remove(0);
                        self.count(SIDE_REQUEST);
                    }
                    self.held.push(call);
                }
            }
        }
    }

    /// The messages a compaction request adds to the thread before its prompt (Codex sends
    /// the last tool results only there): they are the conversation's, and the thread's
    /// last answer is the first of them. Nothing when it does not extend the thread (Claude
    /// Code's summary request puts its prompt into the last message).
    fn absorb(&mut self, line: usize, started: &str, mut msgs: Vec<Message>) {
        if self.session.calls.is_empty()
            || msgs.len() <= self.prev.len()
            || !msgs.starts_with(&self.prev)
        {
            return;
        }
        without_summary_prompt(&mut msgs);
        let base = self.base;
        let session = &mut self.session;
        let at = base + session.messages.len();
        push_all(
            session,
            msgs.get(self.prev.len()..).unwrap_or(&[]),
            &|kind| MessageOrigin {
                line,
                timestamp: Some(started.to_string()),
                uuid: None,
                kind,
            },
        );
        if let Some(prev_call) = session.calls.last_mut()
            && prev_call.message.is_none()
            && session
                .messages
                .get(at - base)
                .is_some_and(|m| m.role_kind() == Role::Assistant)
        {
            prev_call.message = Some(at);
        }
        self.prev = msgs;
    }

    /// The session, with what is still held taken as the thread and the last answer in it.
    pub fn finish(mut self) -> Session {
        for h in std::mem::take(&mut self.held) {
            if self.main.is_none() {
                self.main = Some(BTreeSet::new());
            }
            self.fold(h);
        }
        self.push_lost_answer();
        self.session
    }

    fn count(&mut self, what: &str) {
        *self.session.skipped.entry(what.to_string()).or_default() += 1;
    }

    /// One call of the thread: its new messages, or the compaction before it, and the call.
    /// False, and counted as another conversation, when it neither extends the thread nor
    /// comes from the same conversation (`Speaker`, or a compaction request before it).
    fn fold(&mut self, call: Call) -> bool {
        let Call {
            line,
            started,
            model,
            client,
            thread,
            usage,
            answer,
            server_compacted,
            req,
        } = call;
        let msgs = req.messages;
        let speaker = Speaker {
            client,
            thread,
            model: model.clone(),
            system: req.system,
        };
        let common = self
            .prev
            .iter()
            .zip(&msgs)
            .take_while(|(a, b)| a == b)
            .count();
        let extends = common == self.prev.len();
        let edit = match (extends, &self.pending) {
            (false, None) => edited_in_place(&self.prev[common..], &msgs[common..]),
            _ => None,
        };
        if !extends
            && edit.is_none()
            && self.pending.is_none()
            && self
                .last
                .as_ref()
                .is_some_and(|l| *l != speaker && !same_but_system(l, &speaker, common))
        {
            self.count(OTHER_CONVERSATION);
            return false;
        }
        let pending = self.pending.take();
        let session = &mut self.session;
        session.meta.saw_timestamp(&started);
        if let Some(m) = &model {
            session.meta.saw_model(m);
        }
        let origin = |kind| MessageOrigin {
            line,
            timestamp: Some(started.clone()),
            uuid: None,
            kind,
        };
        let base = self.base;
        let mut answer_at = base + session.messages.len();
        if extends {
            push_all(session, &msgs[common..], &origin);
        } else if let Some(edit) = edit {
            // Results cleared are the agent's micro compaction. A reminder it dropped is
            // no compaction: the conversation goes on, only its new messages are added.
            if !edit.cleared.is_empty() {
                let at = base + session.messages.len();
                let mut c = Compaction::new(CompactionKind::Micro, at, line);
                c.timestamp = Some(started.clone());
                c.cleared_tool_ids = edit.cleared;
                session.compactions.push(c);
            }
            push_all(session, &msgs[common + edit.appended_from..], &origin);
        } else {
            // The previous answer is in no later request (a summary call's answer is the
            // summary): it is taken from its response, before the compaction.
            self.push_lost_answer();
            answer_at = usize::MAX;
            full_compaction(
                &mut self.session,
                base,
                &self.prev,
                Before {
                    msgs: &msgs,
                    common,
                    pending,
                    usage: &usage,
                    server: self.last_server_compacted,
                },
                &origin,
            );
        }
        let session = &mut self.session;
        // The previous call's answer is this call's first new assistant message.
        if let Some(prev_call) = session.calls.last_mut()
            && prev_call.message.is_none()
            && answer_at
                .checked_sub(base)
                .and_then(|i| session.messages.get(i))
                .is_some_and(|m| m.role_kind() == Role::Assistant)
        {
            prev_call.message = Some(answer_at);
        }
        session.calls.push(RecordedCall {
            message: None,
            line,
            timestamp: Some(started.clone()),
            model,
            usage,
            context_window: None,
        });
        self.prev = msgs;
        self.last = Some(speaker);
        self.last_answer = answer.map(|a| (started, a));
        self.last_server_compacted = server_compacted;
        true
    }

    /// The last call's answer, assembled from its response, when no request holds it.
    fn push_lost_answer(&mut self) {
        let session = &mut self.session;
        if session.calls.last().is_none_or(|c| c.message.is_some()) {
            return;
        }
        let Some((started, answer)) = self.last_answer.take() else {
            return;
        };
        let at = self.base + session.messages.len();
        session.messages.push(answer);
        session.info.push(MessageOrigin {
            line: session.calls.last().map_or(0, |c| c.line),
            timestamp: Some(started),
            uuid: None,
            kind: MessageKind::Conversation,
        });
        if let Some(call) = session.calls.last_mut() {
            call.message = Some(at);
        }
    }
}

/// The same client and model whose system prompt changed with the history (it names the
/// date, the folder's state): still the conversation when the requests share a start.
fn same_but_system(a: &Speaker, b: &Speaker, common: usize) -> bool {
    a.client == b.client && a.thread == b.thread && a.model == b.model && common > 0
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
