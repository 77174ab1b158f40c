//! Opening a session file, the one way every reader does it: without blocking (a FIFO
//! opened with `O_NONBLOCK` cannot hang the open), only if it is a regular file (judged by
//! `fstat` on what was opened, so a rename in between cannot swap it), up to the length it
//! had when opened (a growing file is read as it was; following it is another feature),
//! and within the size caps: one file (`max_file_bytes`, a setting) and one line of a
//! JSON-lines file (`MAX_LINE_BYTES`). Buffers are reserved fallibly, so a size taken from
//! the input can fail with an error but never abort the process.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::SessionError;
use super::model::LoadWarning;

/// The cap on one session file unless the settings say otherwise: far above real sessions
/// (a long Claude Code session is a few hundred MB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2 << 30;
/// The cap on one line of a JSON-lines session (one message or event).
pub const MAX_LINE_BYTES: usize = 256 << 20;

static MAX_FILE_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_BYTES);

/// Sets the cap on one session file for this process (the `max_session_bytes` setting).
pub fn set_max_file_bytes(bytes: u64) {
    MAX_FILE_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// The cap on one session file in force.
pub fn max_file_bytes() -> u64 {
    MAX_FILE_BYTES.load(Ordering::Relaxed)
}

/// What a path is when it is not a regular file, in words.
fn kind_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Why a file of this type is not read, or None for a regular file.
pub fn not_regular(t: std::fs::FileType) -> Option<&'static str> {
    (!t.is_file()).then(|| kind_name(t))
}

/// A regular file opened for reading, with its length when it was opened.
pub struct OpenedFile {
    pub file: File,
    pub len: u64,
}

/// Opens `path` for reading if it is a regular file within the size cap.
pub fn open_regular(path: &Path) -> Result<OpenedFile, SessionError> {
    open_capped(path, max_file_bytes())
}

/// Opens `path` for reading if it is a regular file, whatever its size: for readers whose
/// memory and time do not grow with the file (the status line's index reads what is new,
/// a bounded budget per run).
pub fn open_regular_any_size(path: &Path) -> Result<OpenedFile, SessionError> {
    open_capped(path, u64::MAX)
}

fn open_capped(path: &Path, max: u64) -> Result<OpenedFile, SessionError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path).map_err(SessionError::Read)?;
    let meta = file.metadata().map_err(SessionError::Read)?;
    if let Some(kind) = not_regular(meta.file_type()) {
        return Err(SessionError::NotRegular(kind));
    }
    if meta.len() > max {
        return Err(SessionError::TooLarge {
            bytes: meta.len(),
            max,
        });
    }
    Ok(OpenedFile {
        file,
        len: meta.len(),
    })
}

/// Opens `path` for reading if it is a regular file, whatever its size: for a reader of its
/// end only (the status line), which never holds more than its own cap.
pub fn open_regular_uncapped(path: &Path) -> Result<OpenedFile, SessionError> {
    open_capped(path, u64::MAX)
}

/// A buffer of `n` bytes' capacity, or an error instead of an abort.
pub fn reserve(n: u64) -> Result<Vec<u8>, SessionError> {
    let n = usize::try_from(n).map_err(|_| SessionError::OutOfMemory(n))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(n)
        .map_err(|_| SessionError::OutOfMemory(n as u64))?;
    Ok(buf)
}

/// The bytes of `path` up to its length when opened, `progress` told after each chunk.
/// `cancelled` is asked between chunks: a true answer ends the read with
/// `SessionError::Cancelled`.
pub fn read_session_bytes(
    path: &Path,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<u8>, SessionError> {
    const CHUNK: usize = 4 << 20;
    let OpenedFile { file, len } = open_regular(path)?;
    let mut buf = reserve(len)?;
    let mut reader = file.take(len);
    loop {
        if cancelled() {
            return Err(SessionError::Cancelled);
        }
        let start = buf.len();
        let want = CHUNK.min(buf.capacity() - start);
        if want == 0 {
            break;
        }
        buf.resize(start + want, 0);
        let n = loop {
            match reader.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(SessionError::Read(e)),
            }
        };
        buf.truncate(start + n);
        if n == 0 {
            // Shorter than it was when opened: it was truncated meanwhile.
            break;
        }
        progress(buf.len() as u64);
    }
    Ok(buf)
}

/// `read_session_bytes` without progress or cancel, a line over the cap an error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, SessionError> {
    let bytes = read_session_bytes(path, &|_| {}, &|| false)?;
    check_lines(&bytes)?;
    Ok(bytes)
}

/// The warning for a line over the cap, skipped.
pub(crate) fn long_line_warning(line: usize, bytes: usize, max: usize) -> LoadWarning {
    LoadWarning {
        line,
        message: format!(
            "line {line} is {bytes} bytes, over the cap of {max} bytes on one line: skipped"
        ),
    }
}

/// Blanks (with spaces, which every line reader skips) each line of JSON-lines text over
/// `max` (`MAX_LINE_BYTES`), one warning each, so one oversize line costs a warning, not
/// the file. A JSON array is one document, not lines: left as it is.
pub(crate) fn blank_long_lines(bytes: &mut [u8], max: usize) -> Vec<LoadWarning> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'[') | None) {
        return Vec::new();
    }
    blank_long_lines_at(bytes, 1, max)
}

/// `blank_long_lines` for a run of lines whose first is line `first`, with the cap `max`.
pub(crate) fn blank_long_lines_at(bytes: &mut [u8], first: usize, max: usize) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    for (i, line) in bytes.split_mut(|&b| b == b'\n').enumerate() {
        // A line blanked already (by an earlier pass over the same bytes) is not warned twice.
        if line.len() > max && !line.iter().all(|&b| b == b' ') {
            warnings.push(long_line_warning(first + i, line.len(), max));
            line.fill(b' ');
        }
    }
    warnings
}

/// The line cap, for JSON-lines text (a JSON array or object may be one long line: its
/// size is bounded by the file cap).
pub(crate) fn check_lines(bytes: &[u8]) -> Result<(), SessionError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'[') | None) {
        return Ok(());
    }
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.len() > MAX_LINE_BYTES {
            return Err(SessionError::LineTooLong {
                line: i + 1,
                bytes: line.len(),
                max: MAX_LINE_BYTES,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_blocking() {
        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(e, SessionError::NotRegular("a character device")),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("live.jsonl");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let e = read_file(&fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let e = read_file(dir.path()).unwrap_err();
        assert!(e.to_string().contains("folder") || matches!(e, SessionError::Read(_)));
    }

    #[test]
    fn a_long_line_is_an_error_but_an_array_is_not_lines() {
        let mut text = b"{\"type\":\"user\"}\n".to_vec();
        text.resize(text.len() + MAX_LINE_BYTES + 1, b' ');
        let e = check_lines(&text).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        text[0] = b'[';
        assert!(check_lines(&text[..]).is_ok());
    }

    #[test]
    fn a_file_over_the_cap_is_refused_and_a_cancel_ends_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "{}\n".repeat(100)).unwrap();
        let e = read_session_bytes(&path, &|_| {}, &|| true).unwrap_err();
        assert!(matches!(e, SessionError::Cancelled));
        assert!(reserve(u64::MAX).is_err());
        let e = open_capped(&path, 100).err().unwrap();
        assert!(
            matches!(
                e,
                SessionError::TooLarge {
                    bytes: 300,
                    max: 100
                }
            ),
            "{e}"
        );
        assert!(open_capped(&path, 300).is_ok());
    }

    #[test]
    fn a_large_file_read_in_parts_is_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let text: Vec<u8> = (0..3_000_001u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        // Raw bytes, not JSON lines: the line cap does not apply to what is under it.
        assert_eq!(read_file(&path).unwrap(), text);
        std::fs::write(&path, b"small").unwrap();
        assert_eq!(read_file(&path).unwrap(), b"small");
    }

    #[test]
    fn a_file_is_read_up_to_the_length_it_had_when_opened() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.jsonl");
        let text = b"{}\n".repeat(2 << 20);
        std::fs::write(&path, &text).unwrap();
        // The file grows after every chunk read, as a live session (or /dev/zero-like
        // writer) would: the read still ends at the length it had.
        let grow = || {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(&[b'x'; 1 << 20]).unwrap();
        };
        let bytes = read_session_bytes(&path, &|_| grow(), &|| false).unwrap();
        assert_eq!(bytes.len(), text.len());
        assert!(std::fs::metadata(&path).unwrap().len() > text.len() as u64);
    }
}
