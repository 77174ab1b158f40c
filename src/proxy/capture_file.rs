//! The capture file: mode 0600, opened `O_APPEND` (never through a link at its name), each
//! exchange encoded whole and written with one `write`, so concurrent exchanges never
//! interleave and a reader sees whole lines, except a last line torn by a kill, which the
//! reader skips with a warning. A new default file is created exclusively in
//! `<data dir>/captures/`; a file named with `--capture` may already exist, but then only
//! if it is a capture (its first line says so), and it is appended to.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::session::capture::{CaptureHeader, CaptureLine, is_header};

use super::ProxyError;

/// An open capture.
#[derive(Debug)]
pub struct CaptureFile {
    path: PathBuf,
    file: Mutex<File>,
}

impl CaptureFile {
    /// A new file in `dir` (made, with its parents, if missing):
    /// `capture-<secs>-<pid>.jsonl` (`-2`, `-3`, ... when taken), with its header.
    pub fn create_in(
        dir: &Path,
        started: u64,
        header: &CaptureHeader,
    ) -> Result<CaptureFile, ProxyError> {
        let failed = |path: &Path, source| ProxyError::Capture {
            path: path.to_path_buf(),
            source,
        };
        let (path, file) = crate::safe_fs::create_numbered_log(dir, "capture", started)
            .map_err(|e| failed(dir, e))?;
        let capture = CaptureFile {
            path,
            file: Mutex::new(file),
        };
        capture.append(&CaptureLine::Header(header.clone()))?;
        Ok(capture)
    }

    /// The file `--capture` names: created with its header, or appended to when it is
    /// already a capture; anything else there is refused, never overwritten.
    pub fn open_named(path: &Path, header: &CaptureHeader) -> Result<CaptureFile, ProxyError> {
        let failed = |source| ProxyError::Capture {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::safe_fs::open_log(path, false).map_err(failed)?;
        let meta = file.metadata().map_err(failed)?;
        if !meta.is_file() {
            return Err(ProxyError::NotACapture(path.to_path_buf()));
        }
        let capture = CaptureFile {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        };
        if meta.len() == 0 {
            capture.append(&CaptureLine::Header(header.clone()))?;
        } else if !starts_as_capture(path) {
            return Err(ProxyError::NotACapture(path.to_path_buf()));
        }
        Ok(capture)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line: encoded whole first, then written with one call.
    pub fn append(&self, line: &CaptureLine) -> Result<(), ProxyError> {
        let mut bytes = serde_json::to_vec(line).map_err(ProxyError::Encode)?;
        bytes.push(b'\n');
        let mut file = match self.file.lock() {
            Ok(f) => f,
            // A writer that panicked left no half line behind (one write per line).
            Err(poisoned) => poisoned.into_inner(),
        };
        file.write_all(&bytes)
            .map_err(|source| ProxyError::Capture {
                path: self.path.clone(),
                source,
            })
    }
}

/// Whether the first line of an existing file is a capture's header (read up to 64 KiB).
fn starts_as_capture(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut line = Vec::new();
    let mut reader = BufReader::new(std::io::Read::take(file, 64 * 1024));
    if reader.read_until(b'\n', &mut line).is_err() {
        return false;
    }
    serde_json::from_slice::<serde_json::Value>(&line).is_ok_and(|v| is_header(&v))
}
