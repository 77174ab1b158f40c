//! The recording file: created exclusively (never an existing file, never through a link)
//! with mode 0600 in `<data dir>/sessions/`, opened for appending, each line written by
//! one `write` of the whole line, so a reader (the sessions browser, `ctxlab replay`)
//! never sees half a line from a crash, only whole lines.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::session::recorded::RecordLine;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot create {path}: {source}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write to {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode a line: {0}")]
    Encode(#[from] serde_json::Error),
}

/// An open recording.
#[derive(Debug)]
pub struct RecordingFile {
    path: PathBuf,
    file: File,
}

impl RecordingFile {
    /// A new file in `dir` (created, with its parents, if missing), named for `started`
    /// (Unix seconds) and this process: `session-<secs>-<pid>.jsonl` (`-2`, `-3`, ... when
    /// taken).
    pub fn create_in(dir: &Path, started: u64) -> Result<RecordingFile, RecordError> {
        let created = |path: &Path, source| RecordError::Create {
            path: path.to_path_buf(),
            source,
        };
        let (path, file) = crate::safe_fs::create_numbered_log(dir, "session", started)
            .map_err(|e| created(dir, e))?;
        Ok(RecordingFile { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line: encoded whole first, then written with one call.
    pub fn append(&mut self, line: &RecordLine) -> Result<(), RecordError> {
        let mut bytes = serde_json::to_vec(line)?;
        bytes.push(b'\n');
        self.write_line(&bytes)
    }

    /// Appends an encoded line (ending in a newline).
    pub fn write_line(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        self.file
            .write_all(bytes)
            .map_err(|source| RecordError::Write {
                path: self.path.clone(),
                source,
            })
    }
}
