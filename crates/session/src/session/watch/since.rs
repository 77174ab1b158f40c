//! What a compaction now would summarise, read from a followed file without reading it
//! whole: the lines from the last compaction that replaced the history (its line's byte,
//! learned from the follower's events) to the end, at most a capped number of bytes from the
//! end, and of those only the lines that may hold the conversation. `watch`'s at-risk
//! warning and the live view's read this when a warning is due; the status line reads its
//! tail with the same filter (issue 39, item 5: a follower's memory follows what it shows,
//! not the file; docs/pipeline.md, "Reading sessions").

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::follow::WatchEvent;
use super::live::LiveItem;
use crate::session::model::Session;
use crate::session::open::open_regular_any_size;
use crate::session::{SessionError, parse_session_text};

/// Bytes of a followed file read at most for a warning: a stretch since a compaction is
/// bounded by the model's window in tokens, but not its file in bytes (tool outputs, request
/// records), so the read is capped and says when it was cut.
pub const SINCE_CAP_BYTES: u64 = 64 << 20;

/// Line prefixes of Claude Code's request records (the whole system prompt, the tool
/// schemas and each request's messages again, tens of KB a line): never conversation.
const RECORD_PREFIXES: &[&[u8]] = &[b"{\"type\":\"api-request"];
/// An attachment line (reminders, file and prompt snapshots: injected, never conversation)
/// names its `attachment` object within its first bytes (at byte 73 in 2.1.332's lines).
const ATTACHMENT_KEY: &[u8] = b"\"attachment\":{";
const ATTACHMENT_WITHIN: usize = 256;

/// Whether `line` is one of Claude Code's request records.
pub fn is_record(line: &[u8]) -> bool {
    RECORD_PREFIXES.iter().any(|p| line.starts_with(p))
}

/// Whether `line` cannot hold a conversation message.
pub fn passed_over(line: &[u8]) -> bool {
    is_record(line)
        || memchr::memmem::find(&line[..line.len().min(ATTACHMENT_WITHIN)], ATTACHMENT_KEY)
            .is_some()
}

/// The lines of `bytes` that may hold the conversation, as text (one UTF-8 check for the
/// whole; invalid bytes are replaced, as line by line).
pub fn conversation_text(bytes: &[u8]) -> String {
    let mut kept = Vec::with_capacity(bytes.len() / 4);
    for line in bytes.split(|b| *b == b'\n') {
        if passed_over(line) {
            continue;
        }
        kept.extend_from_slice(line);
        kept.push(b'\n');
    }
    match String::from_utf8(kept) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The session since a byte of its file.
#[derive(Debug)]
pub struct Since {
    pub session: Session,
    /// The read began after `from`, at the cap: what came before it is not in `session`.
    pub cut: bool,
    /// The whole file's index of `session`'s first message, where it is known
    /// (`LastCompaction::read`): the numbers a whole read gives.
    pub first_index: Option<usize>,
}

/// The session as the lines of `path` from byte `from` (a line's start) to byte `until`
/// (a line's end; `None`: the file's end) hold it, reading at most `cap` bytes before
/// there (then from the first whole line).
pub fn read_since(
    path: &Path,
    from: u64,
    until: Option<u64>,
    cap: u64,
) -> Result<Since, SessionError> {
    let mut opened = open_regular_any_size(path)?;
    let end = until.map_or(opened.len, |u| u.min(opened.len));
    let start = from.min(end).max(end.saturating_sub(cap));
    let cut = start > from;
    opened
        .file
        .seek(SeekFrom::Start(start))
        .map_err(SessionError::Read)?;
    let mut bytes = crate::session::open::reserve(end - start)?;
    (&mut opened.file)
        .take(end - start)
        .read_to_end(&mut bytes)
        .map_err(SessionError::Read)?;
    // A cut read starts inside a line: from the next one.
    let skip = match cut {
        true => memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1),
        false => 0,
    };
    let session = parse_session_text(&conversation_text(&bytes[skip..]))?;
    let first_index = (from == 0 && !cut).then_some(0);
    Ok(Since {
        session,
        cut,
        first_index,
    })
}

/// Where, in a followed file, the last compaction that replaced the history starts (0
/// before any), from the follower's events: a new compaction's item comes with the byte of
/// the line that added it, its own line. And how far the follower has read: a follower
/// still reading a burst of lines warns about what it has read, so its read never runs
/// ahead to the file's end (up to `SINCE_CAP_BYTES` again at every warning).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LastCompaction {
    from: u64,
    /// Its index among the whole file's messages (`Compaction::at`).
    at: usize,
    /// The end of the newest item's line; `None` before any.
    until: Option<u64>,
}

impl LastCompaction {
    pub fn see(&mut self, event: &WatchEvent) {
        match event {
            // A new file, or the same one read again from its start.
            WatchEvent::Following { .. } => *self = LastCompaction::default(),
            WatchEvent::Item {
                item, offset, end, ..
            } => {
                self.until = Some(*end);
                if let LiveItem::Compaction {
                    compaction,
                    update: false,
                    ..
                } = item
                    && compaction.kind.replaces_history()
                {
                    self.from = *offset;
                    self.at = compaction.at;
                }
            }
            _ => {}
        }
    }

    /// The byte to read from.
    pub fn from(&self) -> u64 {
        self.from
    }

    /// The session since then (`read_since`, at most `SINCE_CAP_BYTES`), its messages
    /// numbered as the whole file numbers them where the read began at the compaction.
    pub fn read(&self, path: &Path) -> Result<Since, SessionError> {
        let mut since = read_since(path, self.from, self.until, SINCE_CAP_BYTES)?;
        if self.from > 0 && !since.cut {
            // The read's first compaction is the one it began at.
            since.first_index = since
                .session
                .compactions
                .iter()
                .find(|c| c.kind.replaces_history())
                .and_then(|c| self.at.checked_sub(c.at));
        }
        Ok(since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_read_starts_at_a_whole_line_and_says_it_was_cut() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/forgot/eval_claude.jsonl");
        let len = std::fs::metadata(&path).unwrap().len();
        let whole = read_since(&path, 0, None, SINCE_CAP_BYTES).unwrap();
        assert!(!whole.cut);
        assert_eq!(whole.first_index, Some(0));
        let half = read_since(&path, 0, None, len / 2).unwrap();
        assert!(half.cut);
        assert_eq!(half.first_index, None, "where the read began is not known");
        let n = half.session.messages.len();
        assert!(n > 0 && n < whole.session.messages.len(), "{n}");
        // A read from the end (a file that shrank since) holds nothing: no warning then.
        let empty = read_since(&path, len + 10, None, SINCE_CAP_BYTES);
        assert!(matches!(empty, Err(SessionError::Empty)), "{empty:?}");
    }
}
