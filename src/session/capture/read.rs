//! A capture read back: its exchanges (`read_exchanges`, with a cut last line skipped and
//! warned about), and as a session (`read_capture`). The session is the agent's main thread:
//! the model calls whose tools are those of the largest request (side requests, a title or
//! a quota probe with other tools or none, are counted and left out). Each call's messages
//! are exact; where a call's messages extend the previous call's, the new ones are
//! appended; where they do not, the agent compacted in between: results emptied in place
//! are a micro compaction (`cleared_tool_ids`), anything else a full one whose first new
//! message is the summary and whose common start is what it kept.

use std::path::Path;

use super::format::{CaptureLine, Exchange};
use super::request::{ExactRequest, exact_request};
use crate::message::Message;
use crate::session::SessionError;
use crate::session::lines::{ParsedLine, parse_json_lines};
use crate::session::model::{
    Compaction, CompactionKind, KeptMessage, LoadWarning, MessageKind, MessageOrigin, RecordedCall,
    RecordedUsage, Session, SessionFormat, Summary,
};

/// What the warning for a cut last line says.
const TORN_LAST_LINE: &str =
    "the last line is cut off (the proxy was stopped while writing it): skipped";

/// A capture's exchanges in the order the requests arrived, and what could not be read.
#[derive(Debug, Default)]
pub struct CaptureCalls {
    /// Each exchange with the 1-based line that holds it.
    pub exchanges: Vec<(usize, Exchange)>,
    pub warnings: Vec<LoadWarning>,
    /// The header's ctxlab version and start, when the file has one.
    pub version: Option<String>,
    pub started: Option<String>,
    pub skipped: usize,
}

fn fold_lines(lines: Vec<ParsedLine>) -> CaptureCalls {
    let mut out = CaptureCalls::default();
    let last = lines.last().map(|l| l.number);
    for ParsedLine { number, value } in lines {
        let parsed =
            value.and_then(|v| serde_json::from_value::<CaptureLine>(v).map_err(|e| e.to_string()));
        match parsed {
            Ok(CaptureLine::Header(h)) => {
                out.version.get_or_insert(h.ctxlab);
                out.started.get_or_insert(h.started);
            }
            Ok(CaptureLine::Exchange(e)) => out.exchanges.push((number, *e)),
            Err(e) => {
                out.skipped += 1;
                let message = if Some(number) == last {
                    TORN_LAST_LINE.to_string()
                } else {
                    format!("not a capture line, skipped: {e}")
                };
                if out.warnings.len() < 20 {
                    out.warnings.push(LoadWarning {
                        line: number,
                        message,
                    });
                }
            }
        }
    }
    // Lines are written as exchanges complete; requests are numbered as they arrive.
    out.exchanges.sort_by_key(|(_, e)| e.n);
    out
}

/// The exchanges of a capture file (read whole, within the session caps).
pub fn read_exchanges(path: &Path) -> Result<CaptureCalls, SessionError> {
    let bytes = crate::session::open::read_file(path)?;
    let (text, _) = crate::session::text_of_bytes(bytes)?;
    Ok(fold_lines(parse_json_lines(&text, 1)))
}

/// Reads a capture's parsed lines as a session.
pub(crate) fn read_capture(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let calls = fold_lines(lines);
    let mut session = Session::empty(SessionFormat::ProxyCapture);
    session.lines = calls.exchanges.len() + usize::from(calls.version.is_some()) + calls.skipped;
    session.meta.version = calls.version.clone();
    session.warnings = calls.warnings.clone();
    if calls.skipped > 0 {
        session
            .skipped
            .insert("line not in the capture format".to_string(), calls.skipped);
    }
    let requests: Vec<(usize, &Exchange, ExactRequest)> = calls
        .exchanges
        .iter()
        .filter(|(_, e)| e.api.is_model_call())
        .filter_map(|(line, e)| {
            let req = exact_request(e.api, e.request.body.as_ref()?)?;
            Some((*line, e, req))
        })
        .collect();
    let other = calls.exchanges.len() - requests.len();
    if other > 0 {
        session.skipped.insert(
            "exchange that is no model call with a readable body".to_string(),
            other,
        );
    }
    let Some(main_tools) = requests
        .iter()
        .max_by_key(|(_, _, r)| r.messages.len())
        .map(|(_, _, r)| r.tool_names())
    else {
        return Ok(session);
    };
    let mut prev: Vec<Message> = Vec::new();
    let mut last_answer: Option<&Exchange> = None;
    for (line, exchange, req) in &requests {
        if req.tool_names() != main_tools {
            *session
                .skipped
                .entry("side request (other tools than the main thread's)".to_string())
                .or_default() += 1;
            continue;
        }
        session.meta.saw_timestamp(&exchange.started);
        if let Some(m) = exchange.response.model.as_deref().or(req.model.as_deref()) {
            session.meta.saw_model(m);
        }
        let origin = |kind| MessageOrigin {
            line: *line,
            timestamp: Some(exchange.started.clone()),
            uuid: None,
            kind,
        };
        let msgs = &req.messages;
        let common = prev.iter().zip(msgs).take_while(|(a, b)| a == b).count();
        let mut answer_at = session.messages.len();
        if common == prev.len() {
            push_all(&mut session, &msgs[common..], &origin);
        } else if let Some(cleared) = cleared_in_place(&prev[common..], &msgs[common..]) {
            let mut c = Compaction::new(CompactionKind::Micro, session.messages.len(), *line);
            c.timestamp = Some(exchange.started.clone());
            c.cleared_tool_ids = cleared;
            session.compactions.push(c);
            push_all(&mut session, &msgs[prev.len().min(msgs.len())..], &origin);
        } else {
            // The previous answer is in no later request (a summary call's answer is the
            // summary): it is taken from its response, before the compaction.
            push_lost_answer(&mut session, last_answer);
            answer_at = usize::MAX;
            let mut c = Compaction::new(CompactionKind::Full, session.messages.len(), *line);
            c.timestamp = Some(exchange.started.clone());
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
                c.tokens_before = Some(crate::session::model::TokenCount {
                    tokens: before.usage.context_tokens(),
                    source: crate::session::model::TokenSource::LastCallBefore,
                });
            }
            session.compactions.push(c);
            push_all(&mut session, msgs.get(common + 1..).unwrap_or(&[]), &origin);
        }
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
            line: *line,
            timestamp: Some(exchange.started.clone()),
            model: exchange
                .response
                .model
                .clone()
                .or_else(|| req.model.clone()),
            usage: usage_of(exchange),
            context_window: None,
        });
        prev = msgs.clone();
        last_answer = Some(exchange);
    }
    // The last answer is in no later request: it is taken from the response.
    push_lost_answer(&mut session, last_answer);
    Ok(session)
}

/// The last call's answer, assembled from its response, when no request holds it.
fn push_lost_answer(session: &mut Session, exchange: Option<&Exchange>) {
    let Some(exchange) = exchange else {
        return;
    };
    if session.calls.last().is_none_or(|c| c.message.is_some()) {
        return;
    }
    let Some(answer) = answer_message(exchange) else {
        return;
    };
    let at = session.messages.len();
    session.messages.push(answer);
    session.info.push(MessageOrigin {
        line: session.calls.last().map_or(0, |c| c.line),
        timestamp: Some(exchange.started.clone()),
        uuid: None,
        kind: MessageKind::Conversation,
    });
    if let Some(call) = session.calls.last_mut() {
        call.message = Some(at);
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

/// The tool results emptied in place between two calls, when that is all that changed
/// (`changes::cleared_only`: the same rule as the requests view's "cleared tool result").
fn cleared_in_place(before: &[Message], after: &[Message]) -> Option<Vec<String>> {
    super::changes::cleared_only(before, after)
}

fn usage_of(e: &Exchange) -> RecordedUsage {
    let u = e.response.usage.unwrap_or_default();
    RecordedUsage {
        input_tokens: u.input_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_creation_tokens: u.cache_creation_tokens,
        output_tokens: u.output_tokens,
    }
}

/// The assembled answer as an assistant message (text, then tool calls).
fn answer_message(e: &Exchange) -> Option<Message> {
    let r = &e.response;
    let mut blocks = Vec::new();
    if !r.text.is_empty() {
        blocks.push(crate::message::block::text(r.text.clone()));
    }
    for call in &r.tool_calls {
        blocks.push(crate::message::block::tool_use(
            call.id.clone(),
            call.name.clone(),
            call.input.clone(),
        ));
    }
    (!blocks.is_empty()).then(|| Message::assistant_blocks(blocks))
}
