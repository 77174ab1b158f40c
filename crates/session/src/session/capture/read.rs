//! A capture read back: its exchanges (`read_exchanges`, with a cut last line skipped and
//! warned about), and the pieces of an exchange that `fold` (the whole-file read and the
//! follower's) keeps: its usage and its assembled answer. Between two calls of the thread,
//! `fold` appends what extends the previous call; results emptied in place are a micro
//! compaction and reminders dropped in place none (`changes::edited_in_place`); anything
//! else is a full one whose first new message is the summary and whose common start is
//! what it kept.
use std::path::Path;

use super::format::{CaptureLine, Exchange};
use crate::message::Message;
use crate::session::SessionError;
use crate::session::lines::{ParsedLine, parse_json_lines};
use crate::session::model::{LoadWarning, RecordedUsage};

/// What the warning for a cut last line says.
pub(super) const TORN_LAST_LINE: &str =
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
        let parsed = value.and_then(serde_json::from_value::<CaptureLine>);
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
    let (bytes, long) = crate::session::open::read_lines_file(path)?;
    let (text, _) = crate::session::text_of_bytes(bytes)?;
    let mut calls = fold_lines(parse_json_lines(&text, 1));
    // A line over the readers' cap costs a warning, not the capture.
    calls.skipped += long.len();
    calls.warnings.splice(0..0, long.into_iter().take(20));
    Ok(calls)
}

pub(super) fn usage_of(e: &Exchange) -> RecordedUsage {
    let u = e.response.usage.unwrap_or_default();
    RecordedUsage {
        input_tokens: u.input_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_creation_tokens: u.cache_creation_tokens,
        output_tokens: u.output_tokens,
    }
}

/// The assembled answer as an assistant message (text, then tool calls).
pub(super) fn answer_message(e: &Exchange) -> Option<Message> {
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
