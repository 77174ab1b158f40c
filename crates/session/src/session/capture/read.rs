//! A capture read back: its exchanges (`each_exchange_of`, with a cut last line skipped and
//! warned about), and the pieces of an exchange that `fold` (the whole-file read and the
//! follower's) keeps: its usage and its assembled answer. Between two calls of the thread,
//! `fold` appends what extends the previous call; results emptied in place are a micro
//! compaction and reminders dropped in place none (`changes::edited_in_place`); anything
//! else is a full one whose first new message is the summary and whose common start is
//! what it kept.
use super::format::{CaptureLine, Exchange};
use crate::message::Message;
use crate::session::SessionError;
use crate::session::model::{LoadWarning, RecordedUsage};

/// What the warning for a cut last line says.
pub(super) const TORN_LAST_LINE: &str =
    "the last line is cut off (the proxy was stopped while writing it): skipped";

/// What a capture holds besides its exchanges, once each was handed over
/// (`each_exchange`).
#[derive(Debug, Default)]
pub struct CaptureHead {
    /// The lines that could not be read: at most 20 cut or foreign lines, after at most 20
    /// lines over the readers' cap.
    pub warnings: Vec<LoadWarning>,
    /// The header's ctxlab version and start, when the file has one.
    pub version: Option<String>,
    pub started: Option<String>,
    /// Lines that are no exchange and no header (over the cap, cut, foreign).
    pub skipped: usize,
    /// Exchanges handed over.
    pub exchanges: usize,
}

/// Warnings of each kind kept at most.
pub(crate) const MAX_WARNINGS: usize = 20;

impl CaptureHead {
    fn line(
        &mut self,
        number: usize,
        parsed: Result<CaptureLine, serde_json::Error>,
        last: bool,
        each: &mut dyn FnMut(usize, Exchange),
    ) {
        match parsed {
            Ok(CaptureLine::Header(h)) => {
                self.version.get_or_insert(h.ctxlab);
                self.started.get_or_insert(h.started);
            }
            Ok(CaptureLine::Exchange(e)) => {
                self.exchanges += 1;
                each(number, *e);
            }
            Err(e) => {
                self.skipped += 1;
                let message = if last {
                    TORN_LAST_LINE.to_string()
                } else {
                    format!("not a capture line, skipped: {e}")
                };
                if self.warnings.len() < MAX_WARNINGS {
                    self.warnings.push(LoadWarning {
                        line: number,
                        message,
                    });
                }
            }
        }
    }
}

/// What the proxy writes first on an exchange's line.
const EXCHANGE_START: &str = r#"{"type":"exchange","#;

/// One line of a capture, parsed. The proxy writes an exchange's `"type"` first: such a
/// line is parsed straight into its `Exchange`, without the tagged enum's buffered copy of
/// the whole line (most of a capture's read time). Any other line, or one that does not
/// parse so, goes the general way, which gives the same line or the same error.
pub(crate) fn parse_line(line: &str) -> Result<CaptureLine, serde_json::Error> {
    if line.starts_with(EXCHANGE_START)
        && let Ok(e) = serde_json::from_str::<Exchange>(line)
    {
        return Ok(CaptureLine::Exchange(Box::new(e)));
    }
    serde_json::from_str::<serde_json::Value>(line).and_then(serde_json::from_value)
}

/// The next chunk of a capture's lines (the number of its first line and its text), None
/// after the last: what `chunked` reads a file as.
pub(crate) type NextChunk<'a> = dyn FnMut() -> Result<Option<(usize, String)>, SessionError> + 'a;

/// Hands each non-blank line of a capture to `each`, parsed (`parse_line`), with its 1-based
/// number and whether it is the last (a kill may have cut that one), a chunk of lines at a
/// time from `next`.
pub(crate) fn each_line(
    next: &mut NextChunk,
    each: &mut dyn FnMut(usize, Result<CaptureLine, serde_json::Error>, bool),
) -> Result<(), SessionError> {
    // A line is the file's last only once no other follows.
    let mut held = None;
    while let Some((first, text)) = next()? {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if let Some((number, parsed)) = held.replace((first + i, parse_line(line))) {
                each(number, parsed, false);
            }
        }
    }
    if let Some((number, parsed)) = held {
        each(number, parsed, true);
    }
    Ok(())
}

/// Hands each exchange of a capture to `each` in file order (the order they completed,
/// not the order the requests arrived: sort by `n` for that), with its 1-based line, a
/// chunk of lines at a time from `next` (`session::each_capture_exchange` reads a file so):
/// a request repeats the whole history, so a capture's exchanges are never all held
/// (issue 36).
pub(crate) fn each_exchange_of(
    next: &mut NextChunk,
    each: &mut dyn FnMut(usize, Exchange),
) -> Result<CaptureHead, SessionError> {
    let mut head = CaptureHead::default();
    each_line(next, &mut |number, parsed, last| {
        head.line(number, parsed, last, each)
    })?;
    Ok(head)
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
