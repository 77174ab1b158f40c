//! ctxlab's own files into the session model: transcripts (one message per line, as the
//! pipeline writes them) and JSON arrays of messages (or `ctxlab pipeline`'s input object).
//!
//! A line that is not a message is skipped and reported with its number, as in the other
//! tools' formats (the workbench and `ctxlab replay` read transcripts the same way). The lesson's
//! own summary messages (`[Compacted]`, `[Reactive compact]`) are listed as compactions but
//! stay in the conversation: they carry the authoritative request a replay needs.

use serde_json::Value;

use super::SessionError;
use super::lines::{ParsedLine, parse_json_array};
use super::model::{
    Compaction, CompactionKind, LoadWarning, MessageKind, MessageOrigin, Session, SessionFormat,
    Summary, Trigger,
};
use crate::compact::SummaryLabel;
use crate::compact::summary_label::{REFERENCE_STATE, field};
use crate::message::{Message, Role};
use crate::session::history_input::{HistoryInput, parse_history_input};

/// The lesson's summary messages (recognised by the marker the pipeline writes them with,
/// `compact::SummaryLabel`) as compactions.
fn note_compactions(s: &mut Session) {
    for (i, m) in s.messages.iter().enumerate() {
        let Some(text) = m.text().filter(|_| m.role_kind() == Role::User) else {
            continue;
        };
        let trigger = match SummaryLabel::of(text) {
            Some(SummaryLabel::Compacted) => None,
            Some(SummaryLabel::ReactiveCompact) => Some(Trigger::Other("reactive".into())),
            None => continue,
        };
        let literal = field(text, REFERENCE_STATE, None);
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

/// Bad lines of a transcript kept as warnings, each with its number; the rest are counted.
const BAD_LINES_KEPT: usize = 20;

/// What `Session::skipped` calls a transcript line that is not a message.
pub const NOT_A_MESSAGE: &str = "line that is not a message";

/// A transcript: one message per line. A line that is not a message is skipped, counted in
/// `skipped` and reported with its number (the first `BAD_LINES_KEPT`), as in the other
/// formats; a file where no line is a message is not a transcript, and its first line's
/// problem is the error.
pub(crate) fn read_transcript(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let mut messages = Vec::with_capacity(lines.len());
    let mut numbers = Vec::with_capacity(lines.len());
    let mut bad = Vec::new();
    let mut bad_count = 0;
    for ParsedLine { number, value } in lines {
        let message = value
            .map_err(|e| e.to_string())
            .and_then(|v| Message::from_value(v).map_err(|e| e.to_string()));
        match message {
            Ok(m) => {
                messages.push(m);
                numbers.push(number);
            }
            Err(message) => {
                bad_count += 1;
                if bad.len() < BAD_LINES_KEPT {
                    bad.push(LoadWarning {
                        line: number,
                        message,
                    });
                }
            }
        }
    }
    if messages.is_empty()
        && let Some(first) = bad.first().cloned()
    {
        return Err(SessionError::Line {
            line: first.line,
            message: first.message,
        });
    }
    let mut s = session_of(SessionFormat::CtxlabTranscript, messages, numbers);
    s.lines += bad_count;
    if bad_count > 0 {
        s.skipped.insert(NOT_A_MESSAGE.into(), bad_count);
    }
    s.warnings.extend(bad);
    Ok(s)
}

/// A transcript file as the workbench opens it: its messages, and how many lines were
/// skipped because they are not messages (`read_transcript`'s rule).
pub fn load_transcript(path: &std::path::Path) -> Result<(Vec<Message>, usize), SessionError> {
    let (text, _) = super::read_file_text(path)?;
    let session = read_transcript(super::lines::parse_json_lines(&text, 1))?;
    let bad = session.skipped.get(NOT_A_MESSAGE).copied().unwrap_or(0);
    Ok((session.messages, bad))
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
