//! A read of a Claude Code or Codex file for a breakdown of every call (`inspect --calls`,
//! issue 36): the session is read as a numbers-only read holds it (each message its
//! outline, each Codex replacement history counted), and a sink hears every message whole
//! as the list takes it, every replacement history item the first time it is seen
//! (`codex_sized`: each item known by a hash of its fields, computed once), and each
//! history as the numbers of its items. The sink keeps the sizes it needs and drops the
//! text, so memory follows the session's numbers, not the file (docs/pipeline.md,
//! "Reading sessions"). Other formats are not read here: the caller reads them whole.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use serde_json::Value;

use super::assemble::HeldHook;
use super::chunked::{ChunkedFile, chunked_format, parse_claude, streamed, text_of};
pub use super::codex_sized::{HistoryItem, SizeSink, SizedHistory};
use super::codex_sized::{ItemKeys, parse_line};
use super::detail::Detail;
use super::lines::ParsedLine;
use super::model::{Session, SessionFormat};
use super::{LoadWarning, SessionError, claude, codex};
use crate::message::Message;

/// The session a sized read made, and the work it took.
pub struct SizedRead {
    pub session: Session,
    /// Lines read, history items read (each hashed once) and items converted: grows with
    /// the file, not with its square (a test doubles a file and checks).
    pub work: u64,
    /// History items read, and those converted and sized (the ones not seen before).
    pub items_read: u64,
    pub items_converted: u64,
}

/// Reads the file at `path` for `sink`; None when it is no Claude Code or Codex file, or
/// when a line could not be read the sized way (the caller then reads it whole).
pub fn read_sized<S: SizeSink + 'static>(
    path: &Path,
    sink: Rc<RefCell<S>>,
) -> Result<Option<SizedRead>, SessionError> {
    let quiet = Reading {
        progress: &|_| {},
        cancelled: &|| false,
        accepts: &|_| true,
    };
    Ok(read_sized_detail(path, sink, Detail::Numbers, &quiet)?.map(|(read, _)| read))
}

/// How a sized read reports, and the formats it reads.
pub(crate) struct Reading<'a> {
    /// Hears the bytes read so far (the workbench's loading line).
    pub progress: &'a dyn Fn(u64),
    /// Asked between reads: true ends the read (`SessionError::Cancelled`).
    pub cancelled: &'a dyn Fn() -> bool,
    /// Whether a file of this format is read here; for any other the read stops after
    /// the file's first lines with None.
    pub accepts: &'a dyn Fn(SessionFormat) -> bool,
}

/// `read_sized` holding the session as `detail` says (`Detail::Conversation`: every
/// message whole, for `forgot` and the full read), with the read's own warnings (bytes
/// that were not UTF-8, lines over the cap) as `load_session` adds them.
pub(crate) fn read_sized_detail<S: SizeSink + 'static>(
    path: &Path,
    sink: Rc<RefCell<S>>,
    detail: Detail,
    reading: &Reading,
) -> Result<Option<(SizedRead, Vec<LoadWarning>)>, SessionError> {
    let mut file = ChunkedFile::open(path, reading.progress, reading.cancelled)?;
    let Some((first, head)) = file.next_lines()? else {
        return Err(SessionError::Empty);
    };
    let mut lossy = false;
    let head_text = text_of(head, &mut lossy);
    // A capture is read in chunks too, but its calls are sized from the requests it
    // recorded (the whole-session breakdown), not from messages as they are held.
    let sized = |f: &SessionFormat| *f != SessionFormat::ProxyCapture && (reading.accepts)(*f);
    let Some(format) = chunked_format(&head_text).filter(sized) else {
        return Ok(None);
    };
    let hook_sink = sink.clone();
    let hook = HeldHook(Box::new(move |m: &Message| {
        hook_sink.borrow_mut().message(m)
    }));
    let mut keys = ItemKeys::default();
    let mut unread = false;
    let (session, lossy) = if format == SessionFormat::ClaudeCode {
        let mut lines = streamed(&mut file, &head_text, parse_claude, first, lossy);
        drop(head_text);
        let session = claude::read_claude_hooked(&mut lines, detail, Some(hook));
        (session, lines.done()?)
    } else {
        let parse = |text: &str, first: usize| -> Vec<ParsedLine> {
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    let number = i + first;
                    let counted = if l.contains("\"replacement_history\"") {
                        let got = parse_line(l, number, &mut keys, &mut *sink.borrow_mut());
                        unread |= got.is_none();
                        got
                    } else {
                        None
                    };
                    let value = match counted {
                        Some(v) => Ok(v),
                        None => serde_json::from_str::<Value>(l),
                    };
                    ParsedLine { number, value }
                })
                .collect()
        };
        let mut lines = streamed(&mut file, &head_text, parse, first, lossy);
        drop(head_text);
        let session = codex::read_codex_hooked(&mut lines, format, detail, Some(hook)).0;
        (session, lines.done()?)
    };
    if unread {
        return Ok(None);
    }
    let work = session.lines as u64 + keys.read + keys.converted;
    let mut warnings = std::mem::take(&mut file.skipped);
    warnings.extend(lossy.then(super::stream::lossy_warning));
    let read = SizedRead {
        session,
        work,
        items_read: keys.read,
        items_converted: keys.converted,
    };
    Ok(Some((read, warnings)))
}
