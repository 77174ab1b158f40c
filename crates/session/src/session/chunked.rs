//! Reading a JSON-lines session (Claude Code, Codex, a `ctxlab proxy` capture) a chunk of
//! whole lines at a time, each chunk parsed (on this thread: `lines::parse_json_lines_here`,
//! Claude Code's lines by `claude_line::parse_claude_lines`, a capture's by
//! `capture::read_capture_chunks`) and handed
//! to the reader before the next is read, so
//! that the file's text, its parsed lines and the session they become are never all held
//! at once: only the session and one chunk (docs/pipeline.md, "Reading sessions").
//! Any other file (a JSON array, `ctxlab pipeline`'s input object, a ctxlab transcript)
//! is read whole, from the same open file, as before.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::claude_line::{self, ParsedClaudeLine};
use super::compressed::{open_content, read_error};
use super::detail::Detail;
use super::lines::{self, ParsedLine};
use super::model::{Session, SessionFormat};
use super::open::{MAX_LINE_BYTES, blank_long_lines_at, long_line_warning, reserve};
use super::{LoadWarning, SessionError, capture, claude, codex, detect_text, stream};

/// Bytes read per chunk: large enough that starting the parser threads is noise, small
/// enough that one chunk's parsed values stay a few percent of a large session.
const CHUNK: usize = 4 << 20;

/// A regular file read a run of whole lines at a time, up to the length it had when
/// opened, with progress and cancel between reads.
pub(crate) struct ChunkedFile<'a> {
    /// The file's bytes, or a `.zst` file's decompressed bytes (`compressed`).
    reader: Box<dyn Read>,
    len: u64,
    read: u64,
    /// The start of a line that no read has ended yet.
    carry: Vec<u8>,
    /// The 1-based number of the line `carry` starts.
    line: usize,
    done: bool,
    /// Bytes asked of each read (`CHUNK`; smaller in tests).
    chunk: usize,
    /// The cap on one line (`MAX_LINE_BYTES`; smaller in tests).
    max_line: usize,
    /// The lines over `max_line`, skipped: one warning each.
    pub(crate) skipped: Vec<LoadWarning>,
    /// The most bytes one read handed over (`next_lines` or `rest`): what a reader held of
    /// the file at once, which the tests bound.
    most_handed: usize,
    progress: &'a dyn Fn(u64),
    cancelled: &'a dyn Fn() -> bool,
}

impl<'a> ChunkedFile<'a> {
    pub(crate) fn open(
        path: &Path,
        progress: &'a dyn Fn(u64),
        cancelled: &'a dyn Fn() -> bool,
    ) -> Result<ChunkedFile<'a>, SessionError> {
        let (reader, len) = open_content(path)?;
        Ok(ChunkedFile {
            reader,
            len,
            read: 0,
            carry: Vec::new(),
            line: 1,
            done: false,
            chunk: CHUNK,
            max_line: MAX_LINE_BYTES,
            skipped: Vec::new(),
            most_handed: 0,
            progress,
            cancelled,
        })
    }

    /// Appends up to `want` bytes to `buf`; 0 at the end (the length when opened, or a
    /// file truncated meanwhile).
    fn read_into(&mut self, buf: &mut Vec<u8>, want: usize) -> Result<usize, SessionError> {
        if (self.cancelled)() {
            return Err(SessionError::Cancelled);
        }
        let start = buf.len();
        buf.try_reserve(want)
            .map_err(|_| SessionError::OutOfMemory((start + want) as u64))?;
        buf.resize(start + want, 0);
        let n = loop {
            match self.reader.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    buf.truncate(start);
                    return Err(read_error(e));
                }
            }
        };
        buf.truncate(start + n);
        self.read += n as u64;
        (self.progress)(self.read);
        Ok(n)
    }

    /// The next run of whole lines (the last may lack its newline) with the number of its
    /// first line; None after the last. A line over the cap is skipped (read on to its end
    /// without holding it) with a warning in `skipped`, as the follower skips one: the
    /// lines around it are still read.
    pub(crate) fn next_lines(&mut self) -> Result<Option<(usize, Vec<u8>)>, SessionError> {
        if self.done {
            return Ok(None);
        }
        let mut buf = std::mem::take(&mut self.carry);
        // Where the newline search starts: `carry` holds none, what a skip left may.
        let mut from = buf.len();
        loop {
            let n = self.read_into(&mut buf, self.chunk)?;
            if let Some(end) = buf[from..].iter().rposition(|&b| b == b'\n') {
                let end = from + end + 1;
                let mut rest = Vec::new();
                rest.try_reserve_exact(buf.len() - end)
                    .map_err(|_| SessionError::OutOfMemory((buf.len() - end) as u64))?;
                rest.extend_from_slice(&buf[end..]);
                buf.truncate(end);
                self.carry = rest;
                let first = self.line;
                self.line += buf.iter().filter(|&&b| b == b'\n').count();
                // The first line may have passed the cap in this very read.
                let warnings = blank_long_lines_at(&mut buf, first, self.max_line);
                self.skipped.extend(warnings);
                self.most_handed = self.most_handed.max(buf.len());
                return Ok(Some((first, buf)));
            }
            if n == 0 {
                self.done = true;
                self.most_handed = self.most_handed.max(buf.len());
                return Ok((!buf.is_empty()).then_some((self.line, buf)));
            }
            if buf.len() > self.max_line {
                buf = self.skip_long_line(buf.len())?;
                from = 0;
                continue;
            }
            from = buf.len();
        }
    }

    /// `next_lines` as text (`text_of`; bytes that are not UTF-8 replaced and noted in
    /// `lossy`).
    pub(crate) fn next_text(
        &mut self,
        lossy: &mut bool,
    ) -> Result<Option<(usize, String)>, SessionError> {
        Ok(self
            .next_lines()?
            .map(|(first, bytes)| (first, text_of(bytes, lossy))))
    }

    /// Skips the line being read, `held` bytes of it read so far: reads on to its newline
    /// and gives back what follows it in that read.
    fn skip_long_line(&mut self, held: usize) -> Result<Vec<u8>, SessionError> {
        let mut bytes = held;
        let mut buf = Vec::new();
        let rest = loop {
            buf.clear();
            if self.read_into(&mut buf, self.chunk)? == 0 {
                self.done = true;
                break Vec::new();
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    bytes += at;
                    break buf.split_off(at + 1);
                }
                None => bytes += buf.len(),
            }
        };
        self.skipped
            .push(long_line_warning(self.line, bytes, self.max_line));
        self.line += 1;
        Ok(rest)
    }

    /// The rest of the file after `head` (which came from `next_lines`), for a file that
    /// is read whole; the buffer is reserved once, for the file's length.
    pub(crate) fn rest(&mut self, head: Vec<u8>) -> Result<Vec<u8>, SessionError> {
        let mut all = reserve(self.len)?;
        all.extend_from_slice(&head);
        drop(head);
        all.append(&mut self.carry);
        if !self.done {
            while self.read_into(&mut all, self.chunk)? > 0 {}
        }
        self.most_handed = self.most_handed.max(all.len());
        Ok(all)
    }
}

/// Text of a run of whole lines; invalid UTF-8 is replaced (a run ends at a newline, so
/// no character is split between two runs) and noted in `lossy`.
pub(crate) fn text_of(bytes: Vec<u8>, lossy: &mut bool) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            *lossy = true;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}

/// The parsed lines of a chunked file, one chunk at a time, each chunk parsed by `parse`
/// (a reader's line parser, or `sized_read`'s that sizes as it parses); a read error ends
/// the iteration and waits in `error`.
pub(super) struct StreamedLines<'f, 'a, T, P> {
    file: &'f mut ChunkedFile<'a>,
    parse: P,
    current: std::vec::IntoIter<T>,
    lossy: bool,
    error: Option<SessionError>,
}

impl<T, P: FnMut(&str, usize) -> Vec<T>> Iterator for StreamedLines<'_, '_, T, P> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(line) = self.current.next() {
                return Some(line);
            }
            if self.error.is_some() {
                return None;
            }
            match self.file.next_lines() {
                Ok(Some((first, bytes))) => {
                    let text = text_of(bytes, &mut self.lossy);
                    self.current = (self.parse)(&text, first).into_iter();
                }
                Ok(None) => return None,
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            }
        }
    }
}

pub(super) fn parse_claude(text: &str, first: usize) -> Vec<ParsedClaudeLine> {
    claude_line::parse_claude_lines(text, first)
}

/// The lines of `file` from its first chunk (`head`, from line `first`) on, parsed by
/// `parse` a chunk at a time; `lossy` says the head was not all UTF-8.
pub(super) fn streamed<'f, 'a, T, P: FnMut(&str, usize) -> Vec<T>>(
    file: &'f mut ChunkedFile<'a>,
    head: &str,
    mut parse: P,
    first: usize,
    lossy: bool,
) -> StreamedLines<'f, 'a, T, P> {
    let head_lines = parse(head, first);
    StreamedLines {
        file,
        parse,
        current: head_lines.into_iter(),
        lossy,
        error: None,
    }
}

impl<T, P> StreamedLines<'_, '_, T, P> {
    /// Whether some bytes were not UTF-8, or the read error that ended the lines.
    pub(super) fn done(self) -> Result<bool, SessionError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.lossy),
        }
    }
}

fn parse_all(text: &str, first: usize) -> Vec<ParsedLine> {
    lines::parse_json_lines_here(text, first)
}

/// A session file read and parsed: the session, the active request the file names (only
/// `ctxlab pipeline`'s input object names one) and the warning for bytes that were not
/// UTF-8.
pub(crate) type ReadSession = (Session, Option<String>, Option<LoadWarning>);

/// Whether a file whose first chunk is `head` is read in chunks: its first non-empty line
/// is a JSON object of a line format on its own (so the whole file is not one JSON
/// document), and not an input object (`messages`).
pub(super) fn chunked_format(head: &str) -> Option<SessionFormat> {
    let first = head.lines().find(|l| !l.trim().is_empty())?;
    let value: Value = serde_json::from_str(first).ok()?;
    let object = value.as_object()?;
    if object.contains_key("messages") {
        return None;
    }
    detect_text(head).filter(|f| {
        matches!(
            f,
            SessionFormat::ClaudeCode
                | SessionFormat::Codex
                | SessionFormat::CodexLegacy
                | SessionFormat::ProxyCapture
        )
    })
}

/// Reads and parses the session at `path`: a Claude Code or Codex file a chunk at a time,
/// any other whole. `progress` hears the bytes read so far; `cancelled` is asked between
/// reads.
/// `detail` says how much a Codex rollout's compactions keep (`Detail`).
pub(crate) fn read_session_file(
    path: &Path,
    detail: Detail,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<ReadSession, SessionError> {
    read_chunked(&mut ChunkedFile::open(path, progress, cancelled)?, detail)
}

fn read_chunked(file: &mut ChunkedFile, detail: Detail) -> Result<ReadSession, SessionError> {
    let Some((first, head)) = file.next_lines()? else {
        return Err(SessionError::Empty);
    };
    let head_text = String::from_utf8_lossy(&head);
    let Some(format) = chunked_format(&head_text) else {
        drop(head_text);
        let mut skipped = std::mem::take(&mut file.skipped);
        let max_line = file.max_line;
        let mut bytes = file.rest(head)?;
        skipped.extend(super::open::blank_long_lines(&mut bytes, max_line));
        let (text, warning) = super::text_of_bytes(bytes)?;
        let (mut session, given) = super::parse_text(&text)?;
        session.warnings.extend(skipped);
        return Ok((session, given, warning));
    };
    if format == SessionFormat::ProxyCapture {
        let mut lossy = matches!(head_text, std::borrow::Cow::Owned(_));
        let mut head = Some((first, head_text.into_owned()));
        let mut session = capture::read_capture_chunks(&mut || match head.take() {
            Some(chunk) => Ok(Some(chunk)),
            None => file.next_text(&mut lossy),
        })?;
        session.warnings.extend(std::mem::take(&mut file.skipped));
        return Ok((session, None, lossy.then(stream::lossy_warning)));
    }
    let lossy = matches!(head_text, std::borrow::Cow::Owned(_));
    let (mut session, lossy) = if format == SessionFormat::ClaudeCode {
        let mut lines = streamed(file, &head_text, parse_claude, first, lossy);
        drop(head_text);
        drop(head);
        let session = claude::read_claude_detail(&mut lines, detail);
        (session, lines.done()?)
    } else {
        let parse = if !detail.holds_histories() {
            // Histories not held: each replacement history is counted as it is parsed.
            super::codex_counted::parse_codex_counting_here
        } else {
            parse_all
        };
        let mut lines = streamed(file, &head_text, parse, first, lossy);
        drop(head_text);
        drop(head);
        let session = codex::read_codex(&mut lines, format, detail);
        (session, lines.done()?)
    };
    let warning = lossy.then(stream::lossy_warning);
    session.warnings.extend(std::mem::take(&mut file.skipped));
    Ok((session, None, warning))
}

/// Hands each exchange of the capture at `path` to `each` in file order with its line, a
/// chunk of lines at a time (`capture::each_exchange_of`), within the session caps; a line
/// over the readers' cap costs a warning, not the capture.
pub fn each_capture_exchange(
    path: &Path,
    each: &mut dyn FnMut(usize, capture::Exchange),
) -> Result<capture::CaptureHead, SessionError> {
    let mut file = ChunkedFile::open(path, &|_| {}, &|| false)?;
    let mut head = capture::each_exchange_of(&mut || file.next_text(&mut false), each)?;
    let long = std::mem::take(&mut file.skipped);
    head.skipped += long.len();
    head.warnings
        .splice(0..0, long.into_iter().take(capture::MAX_WARNINGS));
    Ok(head)
}

/// A file read as `read_session_file` reads it, `chunk` bytes a read, with the most bytes
/// one read handed over: for the tests of the readers it feeds (`capture::read_tests`).
#[cfg(test)]
pub(crate) fn read_in_chunks(path: &Path, chunk: usize) -> Result<(Session, usize), SessionError> {
    let mut f = open_in_chunks(path, chunk)?;
    let (session, _, _) = read_chunked(&mut f, Detail::Full)?;
    Ok((session, f.most_handed()))
}

/// The file at `path` opened to be read `chunk` bytes a read (the readers' tests).
#[cfg(test)]
pub(crate) fn open_in_chunks(
    path: &Path,
    chunk: usize,
) -> Result<ChunkedFile<'static>, SessionError> {
    let mut f = ChunkedFile::open(path, &|_| {}, &|| false)?;
    f.chunk = chunk;
    Ok(f)
}

#[cfg(test)]
impl ChunkedFile<'_> {
    /// The most bytes one read handed over.
    pub(crate) fn most_handed(&self) -> usize {
        self.most_handed
    }
}

#[cfg(test)]
#[path = "chunked_tests.rs"]
mod tests;
