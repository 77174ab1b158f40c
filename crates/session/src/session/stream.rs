//! A JSON array of messages handed to its consumer while the file is still being read.
//!
//! `ctxlab replay` of a long session would otherwise read and parse every message before
//! the first call is replayed, and hold them all at once. Here one thread reads the file in
//! chunks into one reused buffer, parses the elements in order and sends them in batches
//! over a bounded channel. Reading, parsing and replaying then run side by side on two
//! cores, and memory is reused instead of touched fresh: the buffer, and the messages the
//! replay has compacted away (docs/architecture.md, "Replay of a long session").
//!
//! A malformed element ends the stream: the messages before it have been handed over, and
//! `finish` returns the same error, with the same position, that loading the whole file
//! reports. Invalid UTF-8 is replaced as a whole-file load replaces it, with the same
//! warning.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use super::fast_json::{Parsed, parse_value};
use super::history_input::parse_history_input;
use super::{LoadWarning, SessionError, read_file_text};
use crate::message::Message;

/// Bytes read at a time.
const CHUNK_BYTES: usize = 1 << 20;
/// Bytes of source text per batch: large enough that the channel costs nothing, small
/// enough that the replay starts at once.
const BATCH_BYTES: usize = 256 * 1024;
/// Batches the parser may run ahead of the consumer; the bound is what lets the memory of
/// messages the consumer dropped be reused.
const BATCHES_AHEAD: usize = 4;

/// The warning a whole-file load gives for bytes that are not UTF-8.
pub(crate) fn lossy_warning() -> LoadWarning {
    LoadWarning {
        line: 0,
        message: "the file is not valid UTF-8; invalid bytes were replaced".into(),
    }
}

/// Messages as they are parsed; iterate, then call `finish`.
pub struct HistoryStream {
    batches: Receiver<Batch>,
    current: std::vec::IntoIter<Message>,
    end: Option<Result<Vec<LoadWarning>, SessionError>>,
    parser: Option<JoinHandle<()>>,
}

enum Batch {
    Messages(Vec<Message>),
    /// The array is over: the warnings, or why it ended early.
    End(Result<Vec<LoadWarning>, SessionError>),
}

impl HistoryStream {
    /// Opens `path` as a stream if it holds a non-empty JSON array (judged from its first
    /// chunk); None for any other content, which the caller loads whole.
    pub(crate) fn open(path: &Path) -> Result<Option<HistoryStream>, SessionError> {
        HistoryStream::open_chunked(path, CHUNK_BYTES)
    }

    /// `open` reading `chunk` bytes at a time.
    fn open_chunked(path: &Path, chunk: usize) -> Result<Option<HistoryStream>, SessionError> {
        // Up to the length it had when opened: a file that grows is read as it was.
        let opened = super::open::open_regular(path)?;
        let mut reader = ChunkReader::new(opened.file.take(opened.len), chunk.max(1));
        let is_array = reader.next_byte().map_err(SessionError::Read)? == Some(b'[') && {
            reader.pos += 1;
            !matches!(
                reader.next_byte().map_err(SessionError::Read)?,
                None | Some(b']')
            )
        };
        if !is_array || reader.lossy {
            return Ok(None);
        }
        let (tx, rx) = sync_channel(BATCHES_AHEAD);
        let path = path.to_path_buf();
        let parser = std::thread::Builder::new()
            .name("ctxlab-parse".into())
            .spawn(move || {
                let mut batch = Vec::new();
                let end = parse_elements(&mut reader, &tx, &mut batch, &path);
                // The messages before an error are handed over too.
                if !batch.is_empty() {
                    let _ = tx.send(Batch::Messages(batch));
                }
                let _ = tx.send(Batch::End(end));
            })
            .map_err(SessionError::Read)?;
        Ok(Some(HistoryStream {
            batches: rx,
            current: Vec::new().into_iter(),
            end: None,
            parser: Some(parser),
        }))
    }

    /// Whether the whole array was read: its warnings, or the error that ended it early.
    pub fn finish(mut self) -> Result<Vec<LoadWarning>, SessionError> {
        // Take what the consumer left, so the parser is not blocked on a full channel.
        for _ in self.by_ref() {}
        if let Some(parser) = self.parser.take() {
            // The parser catches nothing: a panic there is a bug, surfaced here.
            if let Err(panic) = parser.join() {
                std::panic::resume_unwind(panic);
            }
        }
        self.end.take().unwrap_or_else(|| {
            Err(SessionError::Line {
                line: 0,
                message: "the reader stopped before the end of the file".into(),
            })
        })
    }
}

impl Iterator for HistoryStream {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(m) = self.current.next() {
                return Some(m);
            }
            if self.end.is_some() {
                return None;
            }
            match self.batches.recv() {
                Ok(Batch::Messages(batch)) => self.current = batch.into_iter(),
                Ok(Batch::End(end)) => {
                    self.end = Some(end);
                    return None;
                }
                // The parser is gone without a word; `finish` says so.
                Err(_) => return None,
            }
        }
    }
}

/// A file's text, read a chunk at a time into one buffer: `text[pos..]` is what is not
/// consumed yet.
struct ChunkReader {
    file: std::io::Take<File>,
    chunk: usize,
    text: String,
    pos: usize,
    /// Bytes of a char cut by the chunk's end, kept for the next chunk.
    partial: Vec<u8>,
    raw: Vec<u8>,
    eof: bool,
    /// Some bytes were not UTF-8 and were replaced.
    lossy: bool,
}

impl ChunkReader {
    fn new(file: std::io::Take<File>, chunk: usize) -> ChunkReader {
        ChunkReader {
            file,
            chunk,
            text: String::new(),
            pos: 0,
            partial: Vec::new(),
            raw: Vec::new(),
            eof: false,
            lossy: false,
        }
    }

    /// Appends the next chunk to the text, dropping what was consumed; false when there was
    /// nothing more.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.text.drain(..self.pos);
        self.pos = 0;
        let before = self.text.len();
        self.raw.clear();
        self.raw.append(&mut self.partial);
        // An element longer than a chunk is parsed again after each read: reading as much
        // again as is pending keeps that linear.
        let want = self.chunk.max(before);
        let n = (&mut self.file)
            .take(want as u64)
            .read_to_end(&mut self.raw)?;
        self.eof = n == 0;
        let mut bytes = &self.raw[..];
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    self.text.push_str(s);
                    break;
                }
                Err(e) => {
                    let (valid, after) = bytes.split_at(e.valid_up_to());
                    // Only ASCII-cut bytes were validated, so this is a str.
                    self.text
                        .push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        // A char cut by the chunk's end: the next chunk completes it.
                        None if !self.eof => {
                            self.partial.extend_from_slice(after);
                            break;
                        }
                        None => {
                            self.lossy = true;
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            break;
                        }
                        Some(len) => {
                            self.lossy = true;
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            bytes = &after[len..];
                        }
                    }
                }
            }
        }
        Ok(self.text.len() > before)
    }

    /// Skips white space, reading on when the buffer runs out; the next byte, if any.
    fn next_byte(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            let rest = &self.text[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if let Some(&b) = trimmed.as_bytes().first() {
                return Ok(Some(b));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }
}

/// Why the stream stopped early, in a whole-file load's words: the one-piece parser names
/// the exact position.
fn whole_file_error(path: &Path) -> SessionError {
    let text = match read_file_text(path) {
        Ok((text, _)) => text,
        Err(e) => return e,
    };
    match parse_history_input(&text) {
        Err(e) => SessionError::Array(e),
        // The file changed under the reader.
        Ok(_) => SessionError::Line {
            line: 0,
            message: "the file changed while it was read".into(),
        },
    }
}

/// Sends a batch; false when the consumer is gone. When the consumer is behind (the channel
/// is full), this thread would only wait: it computes the batch's sizes first, work the
/// consumer then finds done. When the consumer keeps up, it is left to the consumer, so
/// whichever thread has time does it.
fn send(tx: &SyncSender<Batch>, batch: Vec<Message>) -> bool {
    match tx.try_send(Batch::Messages(batch)) {
        Ok(()) => true,
        Err(TrySendError::Full(Batch::Messages(batch))) => {
            for m in &batch {
                m.estimate_size();
                m.tool_result_lens();
            }
            tx.send(Batch::Messages(batch)).is_ok()
        }
        Err(_) => false,
    }
}

/// Parses the array's elements in order and sends them in batches. What is left in `batch`
/// at the end is the caller's to send. Sizing every message here made the replay wait:
/// `send` sizes a batch only when the replay is behind.
fn parse_elements(
    reader: &mut ChunkReader,
    tx: &SyncSender<Batch>,
    batch: &mut Vec<Message>,
    path: &Path,
) -> Result<Vec<LoadWarning>, SessionError> {
    let mut batch_bytes = 0;
    let mut scratch = String::new();
    loop {
        if reader.next_byte().map_err(SessionError::Read)?.is_none() {
            return Err(whole_file_error(path));
        }
        let (value, used) = loop {
            match parse_value(&reader.text[reader.pos..], &mut scratch) {
                Parsed::Done(value, used) => break (value, used),
                // The element goes on in the next chunk.
                Parsed::NeedMore if reader.fill().map_err(SessionError::Read)? => continue,
                // serde_json decides: the last element, or one the fast path left to it.
                _ => {}
            }
            let rest = &reader.text[reader.pos..];
            let mut values = serde_json::Deserializer::from_str(rest).into_iter();
            match values.next() {
                Some(Ok(value)) => break (value, values.byte_offset()),
                Some(Err(e)) if e.is_eof() && reader.fill().map_err(SessionError::Read)? => {}
                _ => return Err(whole_file_error(path)),
            }
        };
        reader.pos += used;
        let Ok(message) = Message::from_value(value) else {
            return Err(whole_file_error(path));
        };
        batch.push(message);
        batch_bytes += used;
        let last = match reader.next_byte().map_err(SessionError::Read)? {
            Some(b',') => false,
            Some(b']') => true,
            _ => return Err(whole_file_error(path)),
        };
        reader.pos += 1;
        if batch_bytes >= BATCH_BYTES {
            if !send(tx, std::mem::take(batch)) {
                // The consumer stopped listening: nothing left to do.
                return Ok(Vec::new());
            }
            batch_bytes = 0;
        }
        if last {
            if reader.next_byte().map_err(SessionError::Read)?.is_some() {
                return Err(whole_file_error(path));
            }
            return Ok(if reader.lossy {
                vec![lossy_warning()]
            } else {
                Vec::new()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::load_history;

    /// Messages with escapes, non-ASCII of every UTF-8 length, and one element longer than
    /// any chunk below.
    fn array_text(long: usize) -> String {
        let mut items = vec![serde_json::json!({"role": "user", "content": "héllo \"解\" 😀\n"})];
        for i in 0..20 {
            items.push(serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{i}"), "name": "bash", "input": {"n": i, "f": 1.0}}]}));
            items.push(serde_json::json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "ok ✅ — 解析\t".repeat(i + 1)}]}));
        }
        items.push(serde_json::json!({"role": "user", "content": "x".repeat(long)}));
        // Pretty-printed: white space between every token, and escapes as `\uXXXX` too.
        let pretty = serde_json::to_string_pretty(&items).unwrap();
        format!("  {}\n", pretty.replacen("héllo", "h\\u00e9llo", 1))
    }

    fn streamed(
        path: &Path,
        chunk: usize,
    ) -> (Vec<Message>, Result<Vec<LoadWarning>, SessionError>) {
        let mut stream = HistoryStream::open_chunked(path, chunk).unwrap().unwrap();
        let messages: Vec<Message> = stream.by_ref().collect();
        (messages, stream.finish())
    }

    #[test]
    fn any_chunk_size_gives_the_messages_a_whole_load_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, array_text(5_000)).unwrap();
        let whole = load_history(&path).unwrap();
        for chunk in [1, 2, 3, 5, 64, 1000, 1 << 20] {
            let (messages, end) = streamed(&path, chunk);
            assert_eq!(messages, whole.messages, "chunk {chunk}");
            assert!(end.unwrap().is_empty(), "chunk {chunk}");
            // The sizes the pipeline will ask for are the same too.
            let sizes: Vec<usize> = messages.iter().map(Message::estimate_size).collect();
            let want: Vec<usize> = whole.messages.iter().map(Message::estimate_size).collect();
            assert_eq!(sizes, want);
        }
    }

    #[test]
    fn a_malformed_element_ends_the_stream_with_the_whole_file_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let good = array_text(10);
        for (bad, before) in [
            // Broken JSON inside the sixth element.
            (good.replacen("\"t2\"", "\"t2\" x", 1), 5),
            // Valid JSON that is not a message.
            (
                good.replacen("{", "{\"no\": 1}, {", 2)
                    .replacen("{\"no\": 1}, {", "{", 1),
                1,
            ),
            // Nothing after the last element, and something after the array.
            (good.trim_end().trim_end_matches(']').to_string(), 42),
            (format!("{good} x"), 42),
            (good.replacen("}\n]", "},\n]", 1), 42),
        ] {
            std::fs::write(&path, &bad).unwrap();
            let want = load_history(&path).unwrap_err().to_string();
            for chunk in [3, 1 << 20] {
                let (messages, end) = streamed(&path, chunk);
                assert_eq!(end.unwrap_err().to_string(), want, "chunk {chunk}: {bad}");
                assert_eq!(messages.len(), before, "chunk {chunk}: {want}");
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_as_a_whole_load_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let mut bytes = array_text(10).into_bytes();
        let at = bytes.len() / 2
            + bytes[bytes.len() / 2..]
                .iter()
                .position(|b| *b == b'k')
                .unwrap();
        // A stray continuation byte and a lead byte cut short, inside a string.
        bytes.splice(at..at, [0x80, b'a', 0xe2, 0x9c]);
        let end = bytes.iter().rposition(|b| *b == b'x').unwrap();
        bytes.splice(end..end, [0xf0, 0x9f]);
        std::fs::write(&path, &bytes).unwrap();
        let whole = load_history(&path).unwrap();
        assert_eq!(whole.warnings.len(), 1);
        for chunk in [1, 2, 7, 64] {
            let (messages, end) = streamed(&path, chunk);
            assert_eq!(messages, whole.messages, "chunk {chunk}");
            assert_eq!(end.unwrap(), whole.warnings, "chunk {chunk}");
        }
        // Invalid bytes in the first chunk: the file is loaded whole, which warns first.
        assert!(
            HistoryStream::open_chunked(&path, 1 << 20)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn only_a_non_empty_array_is_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        for (text, streams) in [
            ("[]", false),
            (" [ \n ] ", false),
            ("", false),
            ("{\"messages\": []}", false),
            ("{\"role\": \"user\", \"content\": \"hi\"}\n", false),
            ("\n [{\"role\": \"user\", \"content\": \"hi\"}]", true),
        ] {
            std::fs::write(&path, text).unwrap();
            let opened = HistoryStream::open_chunked(&path, 4).unwrap();
            assert_eq!(opened.is_some(), streams, "{text:?}");
        }
        let missing = HistoryStream::open(&dir.path().join("missing.json"));
        assert!(matches!(missing, Err(SessionError::Read(_))));
    }
}
