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

use std::collections::BTreeSet;

use super::changes::edited_in_place;
use super::format::{CaptureLine, Exchange};
use super::read::{TORN_LAST_LINE, answer_message, usage_of};
use super::request::{ExactRequest, exact_request};
use crate::message::Message;
use crate::session::SessionError;
use crate::session::lines::ParsedLine;
use crate::session::model::{
    Compaction, CompactionKind, KeptMessage, LoadWarning, MessageKind, MessageOrigin, RecordedCall,
    RecordedUsage, Session, SessionFormat, Summary, TokenCount, TokenSource,
};

/// What a side request is counted as.
pub const SIDE_REQUEST: &str = "side request (other tools than the main thread's)";
/// What an exchange that is no model call is counted as.
pub const NOT_A_CALL: &str = "exchange that is no model call with a readable body";
/// What a line that is no capture line is counted as.
pub const NOT_A_LINE: &str = "line not in the capture format";
/// Warnings kept at most.
const MAX_WARNINGS: usize = 20;
/// Tool-less calls held while the thread is not known; older ones go as side requests.
const MAX_HELD: usize = 32;

/// Reads a capture's parsed lines as a session: each line through the fold the follower
/// uses too (`fold`), in file order.
pub(crate) fn read_capture(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let mut fold = CaptureFold::new();
    let last = lines.last().map(|l| l.number);
    for ParsedLine { number, value } in lines {
        fold.push(number, value, Some(number) == last);
    }
    Ok(fold.finish())
}

/// One model call, as much of its exchange as the fold needs.
struct Call {
    line: usize,
    started: String,
    model: Option<String>,
    usage: RecordedUsage,
    /// The assembled answer, for when no later request holds it.
    answer: Option<Message>,
    req: ExactRequest,
}

impl Call {
    fn of(line: usize, e: &Exchange, req: ExactRequest) -> Call {
        Call {
            line,
            started: e.started.clone(),
            model: e.response.model.clone().or_else(|| req.model.clone()),
            usage: usage_of(e),
            answer: answer_message(e),
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
        }
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
    pub fn push(&mut self, number: usize, value: Result<serde_json::Value, String>, last: bool) {
        self.session.lines += 1;
        let parsed =
            value.and_then(|v| serde_json::from_value::<CaptureLine>(v).map_err(|e| e.to_string()));
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
        let call = Call::of(line, e, req);
        let tools = call.tools();
        match &mut self.main {
            Some(main) if main.is_empty() => {
                if tools.is_empty() {
                    self.fold(call);
                } else {
                    self.count(SIDE_REQUEST);
                }
            }
            Some(main) => {
                if tools.is_superset(main) {
                    *main = tools;
                    self.fold(call);
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

    /// The session, with what is still held taken as the thread and the last answer in it.
    pub fn finish(mut self) -> Session {
        for h in std::mem::take(&mut self.held) {
            self.fold(h);
        }
        self.push_lost_answer();
        self.session
    }

    fn count(&mut self, what: &str) {
        *self.session.skipped.entry(what.to_string()).or_default() += 1;
    }

    /// One call of the thread: its new messages, or the compaction before it, and the call.
    fn fold(&mut self, call: Call) {
        let Call {
            line,
            started,
            model,
            usage,
            answer,
            req,
        } = call;
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
        let msgs = req.messages;
        let prev = &self.prev;
        let common = prev.iter().zip(&msgs).take_while(|(a, b)| a == b).count();
        let mut answer_at = session.messages.len();
        if common == prev.len() {
            push_all(session, &msgs[common..], &origin);
        } else if let Some(edit) = edited_in_place(&prev[common..], &msgs[common..]) {
            // Results cleared are the agent's micro compaction. A reminder it dropped is
            // no compaction: the conversation goes on, only its new messages are added.
            if !edit.cleared.is_empty() {
                let mut c = Compaction::new(CompactionKind::Micro, session.messages.len(), line);
                c.timestamp = Some(started.clone());
                c.cleared_tool_ids = edit.cleared;
                session.compactions.push(c);
            }
            push_all(session, &msgs[common + edit.appended_from..], &origin);
        } else {
            // The previous answer is in no later request (a summary call's answer is the
            // summary): it is taken from its response, before the compaction.
            self.push_lost_answer();
            let session = &mut self.session;
            answer_at = usize::MAX;
            let mut c = Compaction::new(CompactionKind::Full, session.messages.len(), line);
            c.timestamp = Some(started.clone());
            c.kept = Some(
                msgs[..common]
                    .iter()
                    .map(|m| KeptMessage {
                        message: m.clone(),
                        from: None,
                    })
                    .collect(),
            );
            if let Some(summary) = msgs.get(common) {
                c.summary = Summary::Text(summary.joined_text());
                c.summary_message = Some(session.messages.len());
                session.messages.push(summary.clone());
                session.info.push(origin(MessageKind::CompactSummary));
            }
            if let Some(before) = session.calls.last() {
                c.tokens_before = Some(TokenCount {
                    tokens: before.usage.context_tokens(),
                    source: TokenSource::LastCallBefore,
                });
            }
            session.compactions.push(c);
            push_all(session, msgs.get(common + 1..).unwrap_or(&[]), &origin);
        }
        let session = &mut self.session;
        // The previous call's answer is this call's first new assistant message.
        if let Some(prev_call) = session.calls.last_mut()
            && prev_call.message.is_none()
            && session
                .messages
                .get(answer_at)
                .is_some_and(|m| m.role() == "assistant")
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
        self.last_answer = answer.map(|a| (started, a));
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
        let at = session.messages.len();
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

fn push_all(
    session: &mut Session,
    msgs: &[Message],
    origin: &dyn Fn(MessageKind) -> MessageOrigin,
) {
    for m in msgs {
        session.messages.push(m.clone());
        session.info.push(origin(MessageKind::Conversation));
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
