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

/// The parsed lines of a chunked file, one chunk at a time; a read error ends the
/// iteration and waits in `error`.
struct StreamedLines<'f, 'a, T> {
    file: &'f mut ChunkedFile<'a>,
    parse: fn(&str, usize) -> Vec<T>,
    current: std::vec::IntoIter<T>,
    lossy: bool,
    error: Option<SessionError>,
}

impl<T> Iterator for StreamedLines<'_, '_, T> {
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
/// `parse` a chunk at a time.
fn streamed<'f, 'a, T>(
    file: &'f mut ChunkedFile<'a>,
    head: std::borrow::Cow<str>,
    parse: fn(&str, usize) -> Vec<T>,
    first: usize,
    lossy: bool,
) -> StreamedLines<'f, 'a, T> {
    let head_lines = parse(&head, first);
    drop(head);
    StreamedLines {
        file,
        parse,
        current: head_lines.into_iter(),
        lossy,
        error: None,
    }
}

impl<T> StreamedLines<'_, '_, T> {
    /// Whether some bytes were not UTF-8, or the read error that ended the lines.
    fn done(self) -> Result<bool, SessionError> {
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
        let mut lines = streamed(file, head_text, parse_claude, first, lossy);
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
        let mut lines = streamed(file, head_text, parse, first, lossy);
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
mod tests {
    use super::*;
    use std::cell::Cell;

    fn opened(path: &Path, chunk: usize) -> ChunkedFile<'static> {
        let mut f = ChunkedFile::open(path, &|_| {}, &|| false).unwrap();
        f.chunk = chunk;
        f
    }

    /// A Claude Code file: a prompt, then per call a text block, a tool_use and its
    /// result (a long output), with a malformed line and a line type to skip in between.
    fn claude_text(calls: usize) -> String {
        let mut out = String::new();
        out.push_str(r#"{"type":"user","sessionId":"s1","uuid":"u0","cwd":"/p","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"Fix it"}}"#);
        out.push('\n');
        for i in 0..calls {
            let body = "output line é \\u00e9\\n".repeat(i % 7 * 40 + 1);
            out.push_str(&format!(
                r#"{{"type":"assistant","sessionId":"s1","uuid":"a{i}","requestId":"r{i}","message":{{"id":"m{i}","role":"assistant","model":"claude-x","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls {i}"}}}}],"usage":{{"input_tokens":{i},"output_tokens":3}}}}}}"#
            ));
            out.push('\n');
            if i % 5 == 2 {
                out.push_str("{not json\n\n");
                out.push_str(r#"{"type":"progress","data":{}}"#);
                out.push('\n');
            }
            out.push_str(&format!(
                r#"{{"type":"user","sessionId":"s1","uuid":"r{i}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{body}"}}]}},"toolUseResult":{{"stdout":"{body}"}}}}"#
            ));
            out.push('\n');
        }
        out
    }

    fn codex_text(calls: usize) -> String {
        let mut out = String::new();
        out.push_str(r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/p"}}"#);
        out.push('\n');
        out.push_str(r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]}}"#);
        out.push('\n');
        for i in 0..calls {
            let body = "x".repeat(i % 9 * 300 + 1);
            out.push_str(&format!(
                r#"{{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"ls\"]}}","call_id":"c{i}"}}}}"#
            ));
            out.push('\n');
            if i % 4 == 1 {
                out.push_str("not json at all\n");
            }
            out.push_str(&format!(
                r#"{{"timestamp":"2025-01-01T00:00:03Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{i}","output":"{body}"}}}}"#
            ));
            out.push('\n');
        }
        out
    }

    /// Everything a reader produced, in one comparable text.
    fn shape(s: &Session) -> String {
        format!("{s:?}")
    }

    #[test]
    fn a_file_read_in_small_chunks_is_the_session_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("c.jsonl", claude_text(300)), ("x.jsonl", codex_text(300))] {
            let path = dir.path().join(name);
            std::fs::write(&path, &text).unwrap();
            let whole = super::super::parse_session_text(&text).unwrap();
            assert!(whole.messages.len() > 300, "{name}");
            assert!(
                !whole.warnings.is_empty(),
                "{name}: malformed lines are warned"
            );
            // Chunks far smaller than a line, about a line, and many lines: line numbers,
            // warnings and messages are the same as the whole file's.
            for chunk in [7, 1000, 64 << 10] {
                let (session, given, lossy) =
                    read_chunked(&mut opened(&path, chunk), Detail::Full).unwrap();
                assert_eq!(shape(&session), shape(&whole), "{name}, chunks of {chunk}");
                assert!(given.is_none() && lossy.is_none());
            }
        }
    }

    /// A line over the cap is skipped with a warning, whatever the format (Claude Code, a
    /// capture) and whatever the chunk size: the session
    /// is the file's with that line blank. Issue 39, item 2: the whole file was refused.
    #[test]
    fn a_line_over_the_cap_is_skipped_and_the_rest_read() {
        let dir = tempfile::tempdir().unwrap();
        let claude: Vec<String> = claude_text(30).lines().map(str::to_string).collect();
        let longest = claude.iter().map(String::len).max().unwrap();
        let max_line = longest.max(6_000) + 100;
        let long_claude = format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"big","message":{{"role":"user","content":"{}"}}}}"#,
            "y".repeat(max_line)
        );
        let capture = [
            r#"{"type":"header","format":"ctxlab-capture","version":1,"ctxlab":"0","started":"2026-12-01T00:00:00Z","listen":"127.0.0.1:1"}"#.to_string(),
            r#"{"type":"exchange","n":1,"started":"2026-12-01T00:00:01.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{"headers":[],"bytes":1,"sha256":"0","body":{"model":"m","messages":[{"role":"user","content":"hi"}]}},"response":{"status":200,"text":"ok"},"timing":{}}"#.to_string(),
            format!(
                r#"{{"type":"exchange","n":2,"started":"2026-12-01T00:00:02.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{{"headers":[],"bytes":1,"sha256":"0","body":{{"model":"m","messages":[{{"role":"user","content":"{}"}}]}}}},"response":{{"status":200}},"timing":{{}}}}"#,
                "z".repeat(max_line)
            ),
            r#"{"type":"exchange","n":3,"started":"2026-12-01T00:00:03.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{"headers":[],"bytes":1,"sha256":"0","body":{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}},"response":{"status":200,"text":"done"},"timing":{}}"#.to_string(),
        ]
        .join("\n")
            + "\n";
        let mut with_long = claude.clone();
        with_long.insert(7, long_claude);
        let claude = with_long.join("\n") + "\n";
        for (name, text, long_line) in [("c.jsonl", claude, 8), ("cap.jsonl", capture, 3)] {
            let path = dir.path().join(name);
            std::fs::write(&path, &text).unwrap();
            let mut blanked: Vec<String> = text.lines().map(str::to_string).collect();
            blanked[long_line - 1] = String::new();
            let whole = super::super::parse_session_text(&(blanked.join("\n") + "\n")).unwrap();
            for chunk in [7, 1000, 64 << 10] {
                let mut f = opened(&path, chunk);
                f.max_line = max_line;
                let (mut session, _, _) = read_chunked(&mut f, Detail::Full).unwrap();
                let at = session
                    .warnings
                    .iter()
                    .position(|w| w.message.contains("over the cap"))
                    .unwrap_or_else(|| panic!("{name}: {:?}", session.warnings));
                let warning = session.warnings.remove(at);
                assert_eq!(warning.line, long_line, "{name}, chunks of {chunk}");
                assert!(
                    warning
                        .message
                        .contains(&format!("over the cap of {max_line} bytes")),
                    "{}",
                    warning.message
                );
                assert_eq!(shape(&session), shape(&whole), "{name}, chunks of {chunk}");
            }
        }
    }

    /// A numbers-only read (`inspect`, the listings) gives the summary a full read gives,
    /// for the generated files and the real agents' fixtures, while the messages it holds
    /// carry no text (issue 36: memory bounded by the numbers, not by the file).
    #[test]
    fn a_numbers_only_read_sums_up_as_the_full_read_without_the_text() {
        use crate::session::summary::SessionSummary;
        let dir = tempfile::tempdir().unwrap();
        let fixtures = [
            include_str!("../../../../tests/fixtures/sessions/claude_code_2_1_332.jsonl"),
            include_str!("../../../../tests/fixtures/sessions/claude_code.jsonl"),
            include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl"),
            include_str!("../../../../tests/fixtures/sessions/codex_rollout.jsonl"),
        ];
        let texts = [claude_text(300), codex_text(300)];
        for (i, text) in texts.iter().map(String::as_str).chain(fixtures).enumerate() {
            let path = dir.path().join(format!("{i}.jsonl"));
            std::fs::write(&path, text).unwrap();
            let (full, _, _) = read_chunked(&mut opened(&path, 1000), Detail::Full).unwrap();
            let (lean, _, _) = read_chunked(&mut opened(&path, 1000), Detail::Numbers).unwrap();
            assert_eq!(
                SessionSummary::of(&lean),
                SessionSummary::of(&full),
                "file {i}"
            );
            assert_eq!(lean.messages.len(), full.messages.len());
            let text_of =
                |s: &Session| -> usize { s.messages.iter().map(|m| m.joined_text().len()).sum() };
            assert!(text_of(&full) > 0, "file {i}");
            assert_eq!(text_of(&lean), 0, "file {i}");
        }
    }

    #[test]
    fn chunks_are_whole_lines_numbered_from_where_they_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let text = claude_text(50);
        std::fs::write(&path, &text).unwrap();
        let mut f = opened(&path, 500);
        let mut joined = Vec::new();
        let mut largest = 0;
        while let Some((first, bytes)) = f.next_lines().unwrap() {
            assert_eq!(first, joined.iter().filter(|&&b| b == b'\n').count() + 1);
            assert!(bytes.ends_with(b"\n"));
            largest = largest.max(bytes.len());
            joined.extend_from_slice(&bytes);
        }
        assert_eq!(joined, text.as_bytes());
        // Never the whole file at once: a chunk is about the read size plus one line.
        let longest_line = text.lines().map(str::len).max().unwrap();
        assert!(largest <= 500 + longest_line + 1, "{largest}");
        assert!(largest < text.len() / 4);
    }

    #[test]
    fn cancel_progress_bad_utf8_and_other_formats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let mut bytes = claude_text(40).into_bytes();
        // An invalid byte inside a tool result's text, far from the start.
        let at = bytes.len() - 40;
        bytes[at] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let seen = Cell::new(0);
        let progress = |n| seen.set(n);
        let mut f = ChunkedFile::open(&path, &progress, &|| false).unwrap();
        f.chunk = 256;
        let (session, _, lossy) = read_chunked(&mut f, Detail::Full).unwrap();
        assert!(lossy.is_some(), "invalid UTF-8 is replaced with a warning");
        assert_eq!(seen.get(), bytes.len() as u64);
        assert!(session.messages.len() > 40);
        let asked = Cell::new(0);
        let cancel = || {
            asked.set(asked.get() + 1);
            asked.get() > 3
        };
        let mut f = ChunkedFile::open(&path, &|_| {}, &cancel).unwrap();
        f.chunk = 256;
        assert!(matches!(
            read_chunked(&mut f, Detail::Full),
            Err(SessionError::Cancelled)
        ));
        // An array, an input object and an empty file are read whole, as before.
        for (text, want) in [
            ("[{\"role\":\"user\",\"content\":\"hi\"}]", Some(1)),
            (
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\n\"active_request\":\"hi\"}",
                Some(1),
            ),
            ("", None),
            ("  \n\n", None),
        ] {
            std::fs::write(&path, text).unwrap();
            match read_chunked(&mut opened(&path, 3), Detail::Full) {
                Ok((s, _, _)) => assert_eq!(Some(s.messages.len()), want, "{text}"),
                Err(e) => assert!(want.is_none() && matches!(e, SessionError::Empty), "{e}"),
            }
        }
    }
}
