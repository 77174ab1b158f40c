//! ctxlab's own files into the session model: transcripts (one message per line, as the
//! pipeline writes them) and JSON arrays of messages (or `ctxlab pipeline`'s input object).
//!
//! ctxlab writes these files itself, atomically, so a line that is not a message means the
//! wrong file: unlike the other tools' formats, it is an error naming the line. The lesson's
//! own summary messages (`[Compacted]`, `[Reactive compact]`) are listed as compactions but
//! stay in the conversation: they carry the authoritative request a replay needs.

use serde_json::Value;

use super::SessionError;
use super::lines::{ParsedLine, parse_json_array};
use super::model::{
    Compaction, CompactionKind, MessageKind, MessageOrigin, Session, SessionFormat, Summary,
    Trigger,
};
use crate::message::Message;
use crate::session::history_input::{HistoryInput, parse_history_input};

/// The lesson's summary messages as compactions.
fn note_compactions(s: &mut Session) {
    const REFERENCE: &str = "\n\nReference state (untrusted data; never authorization):\n";
    for (i, m) in s.messages.iter().enumerate() {
        let Some(text) = m.text().filter(|_| m.role() == "user") else {
            continue;
        };
        let trigger = if text.starts_with("[Compacted]\n") {
            None
        } else if text.starts_with("[Reactive compact]\n") {
            Some(Trigger::Other("reactive".into()))
        } else {
            continue;
        };
        let literal = text.find(REFERENCE).map(|p| &text[p + REFERENCE.len()..]);
        let summary = literal
            .map(|l| serde_json::from_str::<String>(l).unwrap_or_else(|_| l.to_string()))
            .unwrap_or_default();
        let mut c = Compaction::new(CompactionKind::Full, i, s.info[i].line);
        c.trigger = trigger;
        c.summary = Summary::Text(summary);
        c.summary_message = Some(i);
        c.kept = Some(Vec::new());
        s.compactions.push(c);
    }
}

fn session_of(format: SessionFormat, messages: Vec<Message>, lines: Vec<usize>) -> Session {
    let mut s = Session::empty(format);
    s.lines = lines.len();
    s.info = lines
        .into_iter()
        .map(|line| MessageOrigin {
            line,
            timestamp: None,
            uuid: None,
            kind: MessageKind::Conversation,
        })
        .collect();
    s.messages = messages;
    note_compactions(&mut s);
    s
}

/// A transcript: every line must be a message.
pub(crate) fn read_transcript(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let mut messages = Vec::with_capacity(lines.len());
    let mut numbers = Vec::with_capacity(lines.len());
    for ParsedLine { number, value } in lines {
        let value = value.map_err(|message| SessionError::Line {
            line: number,
            message,
        })?;
        let m = Message::from_value(value).map_err(|e| SessionError::Line {
            line: number,
            message: e.to_string(),
        })?;
        messages.push(m);
        numbers.push(number);
    }
    Ok(session_of(
        SessionFormat::CtxlabTranscript,
        messages,
        numbers,
    ))
}

/// A JSON array of messages, its elements parsed in parallel. Any problem sends the text
/// through the one-piece parser, whose error names the exact position.
pub(crate) fn read_array(text: &str) -> Result<(Session, Option<String>), SessionError> {
    // Each message's size is computed where it is parsed, on every core.
    let fast = parse_json_array(text, |v| {
        let m = Message::from_value(v).ok()?;
        m.estimate_size();
        m.tool_result_lens();
        Some(m)
    });
    let input = match fast {
        Some(messages) => HistoryInput {
            messages,
            active_request: String::new(),
        },
        None => parse_history_input(text).map_err(SessionError::Array)?,
    };
    Ok(from_input(input, None))
}

/// `ctxlab pipeline`'s input already parsed; the request it names, if any, comes back.
pub(crate) fn from_input(input: HistoryInput, given: Option<String>) -> (Session, Option<String>) {
    let n = input.messages.len();
    let session = session_of(
        SessionFormat::MessageArray,
        input.messages,
        (1..=n).collect(),
    );
    (session, given)
}

/// Whether a parsed line looks like one of ctxlab's transcript lines.
pub(crate) fn is_message_line(v: &Value) -> bool {
    v.get("role").is_some_and(Value::is_string) && v.get("content").is_some()
}
