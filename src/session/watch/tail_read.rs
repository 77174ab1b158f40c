//! The end of a session file, for a status line that runs after every answer: only the last
//! bytes are read (`FIRST_BYTES`, four times more while no model call is among them, up to
//! `MAX_BYTES`), read by the same line reader the follower uses. Compactions are counted
//! within what was read, and the count says whether that was the whole file: a status line
//! never reads a 50 MB session whole.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::headroom::{Headroom, HeadroomTracker};
use super::live::{LiveItem, LiveSession};
use crate::session::SessionError;
use crate::session::open::open_regular;

/// The first read from the end.
pub const FIRST_BYTES: u64 = 256 << 10;
/// The most read from the end.
pub const MAX_BYTES: u64 = 8 << 20;

/// What the end of a session says.
#[derive(Debug, Clone, PartialEq)]
pub struct EndOfSession {
    pub headroom: Headroom,
    /// The model of the last call, when one was read.
    pub model: Option<String>,
    /// Bytes read from the end, and the file's length.
    pub read: u64,
    pub len: u64,
}

impl EndOfSession {
    /// Whether the compaction count covers the whole file.
    pub fn whole_file(&self) -> bool {
        self.read >= self.len
    }
}

/// Reads the end of `path`; `model` and `window` are what the caller knows (Claude Code's
/// status line input), each with its source.
pub fn read_end(
    path: &Path,
    model: Option<&str>,
    window: Option<(u64, &str)>,
) -> Result<EndOfSession, SessionError> {
    let mut opened = open_regular(path)?;
    let len = opened.len;
    let mut want = FIRST_BYTES;
    loop {
        let start = len.saturating_sub(want);
        let mut buf = crate::session::open::reserve(len - start)?;
        opened
            .file
            .seek(SeekFrom::Start(start))
            .map_err(SessionError::Read)?;
        (&mut opened.file)
            .take(len - start)
            .read_to_end(&mut buf)
            .map_err(SessionError::Read)?;
        // A read that starts inside a line skips to the next whole one.
        let from = if start == 0 {
            0
        } else {
            buf.iter()
                .position(|&b| b == b'\n')
                .map_or(buf.len(), |i| i + 1)
        };
        let text = String::from_utf8_lossy(&buf[from..]);
        let mut tracker = HeadroomTracker::new();
        if let Some(m) = model {
            tracker.set_model(m);
        }
        if let Some((w, source)) = window {
            tracker.set_given_window(w, source);
        }
        let mut live = LiveSession::new();
        let mut items = Vec::new();
        let mut last_model = None;
        for (i, line) in text.split('\n').enumerate() {
            live.push_line(i + 1, line, &mut items);
            for item in items.drain(..) {
                if let LiveItem::Call(c) = &item
                    && !c.summary
                    && c.model.is_some()
                {
                    last_model = c.model.clone();
                }
                tracker.push(&item);
            }
        }
        let headroom = tracker.headroom();
        if headroom.context_tokens.is_some() || start == 0 || want >= MAX_BYTES {
            return Ok(EndOfSession {
                headroom,
                model: last_model,
                read: len - start,
                len,
            });
        }
        want = (want * 4).min(MAX_BYTES);
    }
}
