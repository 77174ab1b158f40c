//! The capture file: mode 0600, opened `O_APPEND` (never through a link at its name), each
//! exchange encoded whole and written with one `write`, so concurrent exchanges never
//! interleave and a reader sees whole lines, except a last line torn by a kill, which the
//! reader skips with a warning. A new default file is created exclusively in
//! `<data dir>/captures/`; a file named with `--capture` may already exist, but then only
//! if it is a capture (its first line says so), and it is appended to.
//!
//! A capture never grows past the readers' file cap (`session::open::max_file_bytes`): the
//! line that would pass it starts a new numbered file instead (`NAME.2.jsonl`,
//! `NAME.3.jsonl`, ..., each with its own header), so every part stays readable.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::session::capture::{CaptureHeader, CaptureLine, is_header};

use super::ProxyError;

/// An open capture.
#[derive(Debug)]
pub struct CaptureFile {
    /// The first file: the name the proxy printed when it started.
    path: PathBuf,
    header: CaptureHeader,
    /// No file passes this many bytes (the readers' cap).
    max_bytes: u64,
    current: Mutex<Part>,
}

/// The file being written now.
#[derive(Debug)]
struct Part {
    path: PathBuf,
    file: File,
    len: u64,
    number: u32,
}

impl CaptureFile {
    /// A new file in `dir` (made, with its parents, if missing):
    /// `capture-<secs>-<pid>.jsonl` (`-2`, `-3`, ... when taken), with its header.
    pub fn create_in(
        dir: &Path,
        started: u64,
        header: &CaptureHeader,
    ) -> Result<CaptureFile, ProxyError> {
        let (path, file) = crate::safe_fs::create_numbered_log(dir, "capture", started)
            .map_err(|e| open_failed(dir, e))?;
        let capture = CaptureFile::starting(path, file, 0, header);
        capture.append(&CaptureLine::Header(header.clone()))?;
        Ok(capture)
    }

    /// The file `--capture` names: created with its header, or appended to when it is
    /// already a capture; anything else there is refused, never overwritten. A file that
    /// exists empty is made private (0600) before anything is written to it, as a new one
    /// is created.
    pub fn open_named(path: &Path, header: &CaptureHeader) -> Result<CaptureFile, ProxyError> {
        let failed = |source| ProxyError::Capture {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::safe_fs::open_log(path, false).map_err(|e| open_failed(path, e))?;
        let meta = file.metadata().map_err(failed)?;
        if !meta.is_file() {
            return Err(ProxyError::NotACapture(path.to_path_buf()));
        }
        if meta.len() == 0 {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(failed)?;
        } else if !starts_as_capture(path) {
            return Err(ProxyError::NotACapture(path.to_path_buf()));
        }
        let capture = CaptureFile::starting(path.to_path_buf(), file, meta.len(), header);
        if meta.len() == 0 {
            capture.append(&CaptureLine::Header(header.clone()))?;
        }
        Ok(capture)
    }

    fn starting(path: PathBuf, file: File, len: u64, header: &CaptureHeader) -> CaptureFile {
        CaptureFile {
            path: path.clone(),
            header: header.clone(),
            max_bytes: crate::session::open::max_file_bytes(),
            current: Mutex::new(Part {
                path,
                file,
                len,
                number: 1,
            }),
        }
    }

    /// The first file's path (later parts are named after it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file being written now.
    pub fn current_path(&self) -> PathBuf {
        self.part().path.clone()
    }

    /// Sets the size at which a new part is started (the readers' cap by default).
    pub fn set_max_bytes(&mut self, max: u64) {
        self.max_bytes = max;
    }

    fn part(&self) -> std::sync::MutexGuard<'_, Part> {
        match self.current.lock() {
            Ok(f) => f,
            // A writer that panicked left no half line behind (one write per line).
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Appends one line: encoded whole first, then written with one call.
    pub fn append(&self, line: &CaptureLine) -> Result<(), ProxyError> {
        let mut bytes = serde_json::to_vec(line).map_err(ProxyError::Encode)?;
        bytes.push(b'\n');
        self.append_encoded(&bytes).map(|_| ())
    }

    /// Appends one encoded line (ending in a newline) with one write. When it would take
    /// the file past the cap, a new part is started first (with the header) and its path
    /// returned.
    pub fn append_encoded(&self, bytes: &[u8]) -> Result<Option<PathBuf>, ProxyError> {
        let mut part = self.part();
        let mut rotated = None;
        // A part holding only its header takes the line whatever its size: a new part
        // would not hold it either (the writer keeps lines far under the cap).
        if part.len > 0 && part.len + bytes.len() as u64 > self.max_bytes {
            *part = self.next_part(part.number)?;
            rotated = Some(part.path.clone());
        }
        let failed = |path: &Path, source| ProxyError::Capture {
            path: path.to_path_buf(),
            source,
        };
        part.file
            .write_all(bytes)
            .map_err(|e| failed(&part.path, e))?;
        part.len += bytes.len() as u64;
        Ok(rotated)
    }

    /// The part after `number`, created exclusively with its header (a name already
    /// taken is skipped, never appended to).
    fn next_part(&self, number: u32) -> Result<Part, ProxyError> {
        let mut header = serde_json::to_vec(&CaptureLine::Header(self.header.clone()))
            .map_err(ProxyError::Encode)?;
        header.push(b'\n');
        for n in number + 1..number + 10_000 {
            let path = part_path(&self.path, n);
            match crate::safe_fs::open_log(&path, true) {
                Ok(mut file) => {
                    file.write_all(&header)
                        .map_err(|source| ProxyError::Capture {
                            path: path.clone(),
                            source,
                        })?;
                    tracing::warn!(
                        "capture {} reached {} bytes: continued in {}",
                        self.path.display(),
                        self.max_bytes,
                        path.display()
                    );
                    return Ok(Part {
                        path,
                        file,
                        len: header.len() as u64,
                        number: n,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(open_failed(&path, e)),
            }
        }
        Err(ProxyError::Capture {
            path: self.path.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "every name for a next part is taken",
            ),
        })
    }
}

/// `NAME.jsonl` -> `NAME.<n>.jsonl` (`NAME.<n>` for a name without that extension).
pub fn part_path(first: &Path, n: u32) -> PathBuf {
    let name = first
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let next = match name.strip_suffix(".jsonl") {
        Some(stem) => format!("{stem}.{n}.jsonl"),
        None => format!("{name}.{n}"),
    };
    first.with_file_name(next)
}

/// The error for a capture path that cannot be opened, in words for the cases the system's
/// own are cryptic about (a link at the name gives "os error 40").
fn open_failed(path: &Path, source: std::io::Error) -> ProxyError {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        return ProxyError::CaptureIsLink(path.to_path_buf());
    }
    if source.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
        // A FIFO with no reader, opened without blocking.
        return ProxyError::NotACapture(path.to_path_buf());
    }
    ProxyError::Capture {
        path: path.to_path_buf(),
        source,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn header() -> CaptureHeader {
        CaptureHeader {
            format: crate::session::capture::CAPTURE_FORMAT.to_string(),
            version: 1,
            ctxlab: "0".to_string(),
            started: "2026-12-01T00:00:00Z".to_string(),
            listen: "127.0.0.1:1".to_string(),
            upstream: None,
        }
    }

    #[test]
    fn an_existing_empty_file_is_made_private() {
        // Issue 39, item 8: it kept 0644.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        CaptureFile::open_named(&path, &header()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_link_at_the_capture_path_is_named_as_one() {
        // Issue 39, item 8: a bare "os error 40".
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.jsonl");
        let path = dir.path().join("c.jsonl");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let e = CaptureFile::open_named(&path, &header()).unwrap_err();
        assert!(matches!(e, ProxyError::CaptureIsLink(_)), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("symbolic link") && !text.contains("os error"),
            "{text}"
        );
        assert!(e.is_usage());
        assert!(!target.exists(), "nothing is written through the link");
    }

    #[test]
    fn a_line_past_the_cap_starts_a_numbered_part_with_its_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let mut capture = CaptureFile::open_named(&path, &header()).unwrap();
        let header_len = std::fs::metadata(&path).unwrap().len();
        capture.set_max_bytes(header_len + 20);
        let line = b"{\"type\":\"x\",\"n\":1}\n";
        assert_eq!(capture.append_encoded(line).unwrap(), None);
        let rotated = capture.append_encoded(line).unwrap();
        let second = dir.path().join("c.2.jsonl");
        assert_eq!(rotated.as_deref(), Some(second.as_path()));
        assert_eq!(capture.current_path(), second);
        for p in [&path, &second] {
            assert!(std::fs::metadata(p).unwrap().len() <= header_len + 20);
            let text = std::fs::read_to_string(p).unwrap();
            assert!(starts_as_capture(p), "{text}");
            assert!(text.ends_with("{\"type\":\"x\",\"n\":1}\n"), "{text}");
            let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // A taken name is skipped, never appended to.
        std::fs::write(dir.path().join("c.3.jsonl"), b"theirs").unwrap();
        capture.append_encoded(line).unwrap();
        assert_eq!(capture.current_path(), dir.path().join("c.4.jsonl"));
        assert_eq!(
            std::fs::read(dir.path().join("c.3.jsonl")).unwrap(),
            b"theirs"
        );
        assert_eq!(part_path(Path::new("/a/raw"), 2), Path::new("/a/raw.2"));
    }
}
