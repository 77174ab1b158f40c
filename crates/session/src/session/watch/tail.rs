//! Reading a file as it grows: the bytes written since the last read, cut into whole lines
//! (a line counts only once its newline is written; the rest waits in a buffer), and what
//! happened to the file meanwhile: truncated (shorter than what was read), replaced (another
//! file under the same name), gone, or back. Only reads: the file is opened read-only and
//! never locked, so the agent writing it never waits for ctxlab.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::session::SessionError;
use crate::session::open::{MAX_LINE_BYTES, max_file_bytes, not_regular};

/// Bytes read per `poll` at most: a large file is read in steps, so one poll never holds
/// more than this plus one unfinished line.
pub const READ_STEP_BYTES: usize = 4 << 20;

/// Which file a path named when it was opened (device and inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

fn id_of(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

/// What a `poll` found besides new lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// The file is shorter than what was read: it is read again from its start.
    Truncated { was: u64, now: u64 },
    /// Another file now has the name (an editor's save, a rotation): read from its start.
    Replaced,
    /// The name leads nowhere (deleted or moved away); following goes on, waiting for it.
    Gone,
    /// The name leads to a file again after it was gone: read from its start.
    Back,
}

/// One whole line of the file (without its newline), its 1-based number, the byte where it
/// starts and the byte after its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailLine {
    pub number: usize,
    pub text: String,
    pub offset: u64,
    pub end: u64,
}

/// What one `poll` read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TailRead {
    /// A change seen before the lines were read: the lines come from the start again.
    pub change: Option<FileChange>,
    pub lines: Vec<TailLine>,
    /// Lines over the line cap, passed over (their numbers).
    pub too_long: Vec<usize>,
    /// Whether bytes that were not UTF-8 were replaced.
    pub lossy: bool,
    /// Whether more was written than this poll read (`READ_STEP_BYTES`): poll again now.
    pub more: bool,
}

/// A file followed by name.
#[derive(Debug)]
pub struct Tailer {
    path: PathBuf,
    file: Option<(File, FileId)>,
    /// Bytes consumed from the file (whole lines and the unfinished one).
    offset: u64,
    /// The unfinished last line.
    partial: Vec<u8>,
    /// The unfinished line is over the cap: its bytes are dropped until its newline.
    discarding: bool,
    /// Lines (empty ones too) completed so far.
    lines: usize,
    gone: bool,
    /// Bytes asked of one poll (`READ_STEP_BYTES`; smaller in tests).
    step: usize,
    /// The cap on one line (`MAX_LINE_BYTES`; smaller in tests).
    max_line: usize,
}

impl Tailer {
    /// Opens `path` (a regular file) to be read from its start.
    pub fn open(path: &Path) -> Result<Tailer, SessionError> {
        let mut t = Tailer {
            path: path.to_path_buf(),
            file: None,
            offset: 0,
            partial: Vec::new(),
            discarding: false,
            lines: 0,
            gone: false,
            step: READ_STEP_BYTES,
            max_line: MAX_LINE_BYTES,
        };
        t.reopen()?;
        Ok(t)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Lines completed so far.
    pub fn lines(&self) -> usize {
        self.lines
    }

    #[cfg(test)]
    fn with_limits(mut self, step: usize, max_line: usize) -> Tailer {
        self.step = step;
        self.max_line = max_line;
        self
    }

    fn reopen(&mut self) -> Result<(), SessionError> {
        let opened = crate::session::open::open_regular(&self.path)?;
        let meta = opened.file.metadata().map_err(SessionError::Read)?;
        self.file = Some((opened.file, id_of(&meta)));
        self.restart();
        Ok(())
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.partial.clear();
        self.discarding = false;
        self.lines = 0;
    }

    /// What the name leads to now, against the open file: a change, or None.
    fn check(&mut self) -> Result<Option<FileChange>, SessionError> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.gone {
                    return Ok(None);
                }
                self.gone = true;
                self.file = None;
                return Ok(Some(FileChange::Gone));
            }
            Err(e) => return Err(SessionError::Read(e)),
        };
        if let Some(kind) = not_regular(meta.file_type()) {
            return Err(SessionError::NotRegular(kind));
        }
        if self.gone || self.file.is_none() {
            self.gone = false;
            self.reopen()?;
            return Ok(Some(FileChange::Back));
        }
        let same = self
            .file
            .as_ref()
            .is_some_and(|(_, id)| *id == id_of(&meta));
        if !same {
            self.reopen()?;
            return Ok(Some(FileChange::Replaced));
        }
        if meta.len() < self.offset {
            let was = self.offset;
            self.restart();
            return Ok(Some(FileChange::Truncated {
                was,
                now: meta.len(),
            }));
        }
        Ok(None)
    }

    /// Reads what was written since the last poll (at most `READ_STEP_BYTES`).
    pub fn poll(&mut self) -> Result<TailRead, SessionError> {
        let mut out = TailRead {
            change: self.check()?,
            ..TailRead::default()
        };
        let Some((file, _)) = self.file.as_mut() else {
            return Ok(out);
        };
        let len = file.metadata().map_err(SessionError::Read)?.len();
        if len > max_file_bytes() {
            return Err(SessionError::TooLarge {
                bytes: len,
                max: max_file_bytes(),
            });
        }
        if len <= self.offset {
            return Ok(out);
        }
        let want = (len - self.offset).min(self.step as u64) as usize;
        out.more = len - self.offset > want as u64;
        let mut buf = crate::session::open::reserve(want as u64)?;
        file.seek(SeekFrom::Start(self.offset))
            .map_err(SessionError::Read)?;
        file.take(want as u64)
            .read_to_end(&mut buf)
            .map_err(SessionError::Read)?;
        let base = self.offset;
        self.offset += buf.len() as u64;
        self.cut_lines(&buf, base, &mut out);
        Ok(out)
    }

    /// Appends `bytes` (read from byte `base`) to the unfinished line and takes every line
    /// they finish.
    fn cut_lines(&mut self, bytes: &[u8], base: u64, out: &mut TailRead) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(end);
            let newline = base + (bytes.len() - rest.len() + end) as u64;
            let offset = newline - (self.partial.len() + head.len()) as u64;
            rest = &tail[1..];
            self.lines += 1;
            if self.discarding || self.partial.len() + head.len() > self.max_line {
                self.discarding = false;
                self.partial.clear();
                out.too_long.push(self.lines);
                continue;
            }
            self.partial.extend_from_slice(head);
            let line = std::mem::take(&mut self.partial);
            let text = match String::from_utf8(line) {
                Ok(text) => text,
                Err(e) => {
                    out.lossy = true;
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                }
            };
            out.lines.push(TailLine {
                number: self.lines,
                text,
                offset,
                end: newline + 1,
            });
        }
        if self.discarding {
            return;
        }
        if self.partial.len() + rest.len() > self.max_line {
            // Never held past the cap: the line is dropped and counted at its newline.
            self.discarding = true;
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn texts(read: &TailRead) -> Vec<(usize, &str)> {
        read.lines
            .iter()
            .map(|l| (l.number, l.text.as_str()))
            .collect()
    }

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn a_half_written_line_waits_for_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one\ntw").unwrap();
        let mut t = Tailer::open(&path).unwrap();
        assert_eq!(texts(&t.poll().unwrap()), [(1, "one")]);
        assert!(t.poll().unwrap().lines.is_empty(), "nothing new");
        append(&path, b"o");
        assert!(t.poll().unwrap().lines.is_empty(), "still no newline");
        append(&path, b"\n\nthree\n");
        let read = t.poll().unwrap();
        assert_eq!(texts(&read), [(2, "two"), (3, ""), (4, "three")]);
        // Where each starts, the half-written one from its first byte.
        let starts: Vec<u64> = read.lines.iter().map(|l| l.offset).collect();
        assert_eq!(starts, [4, 8, 9]);
        // And where the next begins.
        let ends: Vec<u64> = read.lines.iter().map(|l| l.end).collect();
        assert_eq!(ends, [8, 9, 15]);
        assert_eq!(t.offset(), 15);
    }

    #[test]
    fn truncation_and_replacement_start_again_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        let mut t = Tailer::open(&path).unwrap();
        assert_eq!(t.poll().unwrap().lines.len(), 3);
        std::fs::write(&path, "x\n").unwrap();
        let read = t.poll().unwrap();
        assert_eq!(read.change, Some(FileChange::Truncated { was: 6, now: 2 }));
        assert_eq!(texts(&read), [(1, "x")]);
        // Another file under the name (written beside it, renamed over it).
        let other = dir.path().join("s.jsonl.tmp");
        std::fs::write(&other, "new 1\nnew 2\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let read = t.poll().unwrap();
        assert_eq!(read.change, Some(FileChange::Replaced));
        assert_eq!(texts(&read), [(1, "new 1"), (2, "new 2")]);
    }

    #[test]
    fn a_file_that_disappears_is_reported_once_and_followed_when_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "a\n").unwrap();
        let mut t = Tailer::open(&path).unwrap();
        t.poll().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(t.poll().unwrap().change, Some(FileChange::Gone));
        assert_eq!(t.poll().unwrap(), TailRead::default(), "said once");
        std::fs::write(&path, "b\n").unwrap();
        let read = t.poll().unwrap();
        assert_eq!(read.change, Some(FileChange::Back));
        assert_eq!(texts(&read), [(1, "b")]);
    }

    #[test]
    fn long_lines_are_dropped_without_being_held_and_reads_come_in_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "short\n").unwrap();
        let mut t = Tailer::open(&path).unwrap().with_limits(8, 10);
        let first = t.poll().unwrap();
        assert_eq!(texts(&first), [(1, "short")]);
        append(&path, b"0123456789abcdef");
        let mut all = TailRead::default();
        loop {
            let read = t.poll().unwrap();
            assert!(t.partial.len() <= 10, "never held past the cap");
            all.lines.extend(read.lines);
            all.too_long.extend(read.too_long);
            if !read.more {
                break;
            }
        }
        append(&path, b"ghij\nok\n\xff\n");
        loop {
            let read = t.poll().unwrap();
            all.lines.extend(read.lines);
            all.too_long.extend(read.too_long);
            all.lossy |= read.lossy;
            if !read.more {
                break;
            }
        }
        assert_eq!(all.too_long, [2]);
        assert_eq!(texts(&all), [(3, "ok"), (4, "\u{fffd}")]);
        assert!(all.lossy);
    }

    #[test]
    fn special_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Tailer::open(dir.path()),
            Err(SessionError::NotRegular(_) | SessionError::Read(_))
        ));
    }
}
