//! Session files compressed with zstd (`rollout-*.jsonl.zst`, as Codex can keep old
//! rollouts): read as they decompress, a chunk at a time like a plain file, never
//! decompressed whole first. The session caps apply to what comes out: past
//! `open::max_file_bytes` of decompressed text the read stops with
//! `SessionError::DecompressedTooLarge`, so a small file that inflates without end (a
//! zip bomb) costs one chunk of memory and a clear error.

use std::io::Read;
use std::path::Path;

use super::SessionError;
use super::open::{OpenedFile, max_file_bytes, open_regular};

/// Whether a session file is read through zstd: its name ends in `.zst`.
pub fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// The error a capped decompression returns once past its cap.
#[derive(Debug)]
struct OverCap;

impl std::fmt::Display for OverCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decompressed past the cap")
    }
}

impl std::error::Error for OverCap {}

/// A reader that fails once more than `max` bytes came through it.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the cap is enough to know it is over.
        let want = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => Err(std::io::Error::other(OverCap)),
        }
    }
}

/// A session file's content: its bytes, or for a `.zst` file its decompressed bytes
/// (capped), with the file's length on disk when opened.
pub fn open_content(path: &Path) -> Result<(Box<dyn Read>, u64), SessionError> {
    let OpenedFile { file, len } = open_regular(path)?;
    let raw = file.take(len);
    if !is_compressed(path) {
        return Ok((Box::new(raw), len));
    }
    let decoder = zstd::stream::read::Decoder::new(raw).map_err(SessionError::Read)?;
    let capped = Capped {
        inner: decoder,
        left: max_file_bytes(),
    };
    Ok((Box::new(capped), len))
}

/// A read error as a session error: past the decompression cap it says so.
pub fn read_error(e: std::io::Error) -> SessionError {
    if e.get_ref().is_some_and(|inner| inner.is::<OverCap>()) {
        SessionError::DecompressedTooLarge {
            max: max_file_bytes(),
        }
    } else {
        SessionError::Read(e)
    }
}

/// The first `limit` bytes of a session file's content (decompressed for `.zst`).
pub fn read_head(path: &Path, limit: usize) -> Result<Vec<u8>, SessionError> {
    let (reader, _) = open_content(path)?;
    let mut buf = Vec::with_capacity(limit.min(16 * 1024));
    reader
        .take(limit as u64)
        .read_to_end(&mut buf)
        .map_err(read_error)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_reader_stops_one_byte_past_its_cap() {
        let mut r = Capped {
            inner: &[7u8; 10][..],
            left: 10,
        };
        let mut out = Vec::new();
        assert!(r.read_to_end(&mut out).is_ok());
        assert_eq!(out.len(), 10);
        let mut r = Capped {
            inner: &[7u8; 11][..],
            left: 10,
        };
        let e = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(matches!(
            read_error(e),
            SessionError::DecompressedTooLarge { .. }
        ));
    }
}

#[cfg(test)]
mod file_tests {
    use std::path::PathBuf;

    use crate::session::discover::discover;
    use crate::session::load_session;

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/sessions/codex_0171.jsonl")
    }

    fn compress(bytes: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(bytes, 3).unwrap()
    }

    #[test]
    fn a_zst_rollout_reads_as_the_plain_one_and_a_plain_twin_wins_the_listing() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let sessions = home.join("sessions/2026/12/02");
        let archived = home.join("archived_sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(&archived).unwrap();
        let plain = std::fs::read(fixture()).unwrap();
        std::fs::write(sessions.join("rollout-a.jsonl"), &plain).unwrap();
        std::fs::write(sessions.join("rollout-a.jsonl.zst"), compress(&plain)).unwrap();
        let zst = sessions.join("rollout-b.jsonl.zst");
        std::fs::write(&zst, compress(&plain)).unwrap();
        std::fs::write(archived.join("rollout-c.jsonl"), &plain).unwrap();

        let read = load_session(&zst).unwrap();
        let want = load_session(&fixture()).unwrap();
        assert_eq!(read.messages, want.messages);
        assert_eq!(read.calls, want.calls);
        assert_eq!(read.compactions, want.compactions);

        let found = discover(&[home.to_path_buf()]);
        let names: Vec<(String, bool)> = found
            .iter()
            .map(|f| {
                let name = f.path.file_name().unwrap().to_string_lossy().to_string();
                (name, f.archived)
            })
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(
            names,
            [
                ("rollout-a.jsonl".to_string(), false),
                ("rollout-b.jsonl.zst".to_string(), false),
                ("rollout-c.jsonl".to_string(), true),
            ]
        );
        // The compressed file's listing entry has the project its first lines give.
        let b = found.iter().find(|f| f.path == zst).unwrap();
        assert_eq!(b.project.as_deref(), Some("/tmp/ra2/proj"));
    }

    #[test]
    fn a_corrupt_zst_file_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.jsonl.zst");
        std::fs::write(&path, b"not zstd at all\n").unwrap();
        let e = load_session(&path).unwrap_err();
        assert!(matches!(e, crate::session::SessionError::Read(_)), "{e}");
    }
}
