//! The `guarded` strategy's archive, `.transcripts/archive.jsonl`: the one file the store
//! appends to. Every other file is written once and never changed; this one only grows, and
//! a crash can at worst leave an unfinished last line, which the next append closes.

use std::fs;
use std::io::Write;

use super::{ARCHIVE_PATH, FileWritten, Store, StoreError, TRANSCRIPTS_DIR, WriteStatus, written};

/// The archive's file name inside `.transcripts`.
const ARCHIVE_NAME: &str = "archive.jsonl";

impl Store {
    /// Appends `text` (whole lines) to the archive, creating it if needed, and syncs it.
    ///
    /// Append-only and crash-safe: the file is opened with `O_APPEND` and without following
    /// a link (so it can never point outside the workspace), the text goes out in one write
    /// and is synced before this returns, and a last line left unfinished by an earlier
    /// crash is closed with a newline first, so every complete line stays readable. A dry
    /// run records the text and writes nothing.
    pub fn append_archive(&self, text: &str) -> Result<FileWritten, StoreError> {
        let path = self.root.join(ARCHIVE_PATH);
        let name = ARCHIVE_NAME;
        if let Some(reserved) = &self.reserved {
            // What is on disk, read like every other file: only a regular file, never
            // through a link (a FIFO here must not block a preview).
            let on_disk = self
                .open_dir(TRANSCRIPTS_DIR, false)
                .ok()
                .flatten()
                .and_then(|dir| dir.read_regular(name).ok().flatten())
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
            if let Ok(mut r) = reserved.lock() {
                let entry = r.entry(ARCHIVE_PATH.to_string()).or_insert(on_disk);
                entry.push_str(&torn_line_fix(entry.as_bytes()));
                entry.push_str(text);
            }
            return Ok(written(
                ARCHIVE_PATH.to_string(),
                WriteStatus::Appended,
                text,
            ));
        }
        // `.transcripts` is opened without following a link (a symlink there is an error
        // naming it), and the archive inside it is opened only if it is a regular file.
        let Some(dir) = self.open_dir(TRANSCRIPTS_DIR, true)? else {
            return Err(StoreError::NotAppendable { path });
        };
        let mut file = match dir.open_append(name) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(StoreError::NotAppendable { path });
            }
            Err(source) => return Err(StoreError::Write { path, source }),
        };
        let write_err = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        let fix = last_byte(&mut file)
            .map_err(write_err)?
            .map(|b| torn_line_fix(&[b]))
            .unwrap_or_default();
        let mut all = fix;
        all.push_str(text);
        file.write_all(all.as_bytes()).map_err(write_err)?;
        if self.syncs_each_write() {
            file.sync_all().map_err(write_err)?;
        }
        Ok(written(
            ARCHIVE_PATH.to_string(),
            WriteStatus::Appended,
            text,
        ))
    }
}

/// A newline when the archive's last byte is not one (a line torn by a crash).
fn torn_line_fix(existing: &[u8]) -> String {
    match existing.last() {
        Some(b) if *b != b'\n' => "\n".to_string(),
        _ => String::new(),
    }
}

/// The last byte of a file, if it has one.
fn last_byte(file: &mut fs::File) -> std::io::Result<Option<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut b = [0u8; 1];
    file.read_exact(&mut b)?;
    Ok(Some(b[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_only_grows_and_closes_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let a = store.append_archive("{\"index\": 3}\n").unwrap();
        assert_eq!(
            (a.path.as_str(), a.status),
            (ARCHIVE_PATH, WriteStatus::Appended)
        );
        store.append_archive("{\"index\": 4}\n").unwrap();
        let path = dir.path().join(ARCHIVE_PATH);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"index\": 3}\n{\"index\": 4}\n"
        );
        // A crash in the middle of a line: the next append starts on a line of its own.
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"ind").unwrap();
        store.append_archive("{\"index\": 5}\n").unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("{\"ind\n{\"index\": 5}\n"), "{text}");
        assert!(text.starts_with("{\"index\": 3}\n{\"index\": 4}\n"));
    }

    #[test]
    fn the_archive_is_never_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("victim.txt");
        fs::write(&target, "keep").unwrap();
        fs::create_dir_all(dir.path().join(TRANSCRIPTS_DIR)).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(ARCHIVE_PATH)).unwrap();
        let store = Store::new(dir.path());
        assert!(store.append_archive("x\n").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_fifo_or_a_linked_folder_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(TRANSCRIPTS_DIR)).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join(ARCHIVE_PATH),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let store = Store::new(dir.path());
        // Neither a real append nor a preview opens the FIFO for good (it would block).
        assert!(matches!(
            store.append_archive("x\n"),
            Err(StoreError::NotAppendable { .. })
        ));
        let dry = store.dry_run();
        dry.append_archive("y\n").unwrap();
        assert_eq!(dry.read_text(ARCHIVE_PATH).unwrap(), "y\n");

        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join(TRANSCRIPTS_DIR)).unwrap();
        let err = Store::new(ws.path()).append_archive("z\n").unwrap_err();
        assert!(err.to_string().contains(".transcripts"), "{err}");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_dry_run_archive_appends_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        store.append_archive("a\n").unwrap();
        let dry = store.dry_run();
        dry.append_archive("b\n").unwrap();
        assert_eq!(dry.read_text(ARCHIVE_PATH).unwrap(), "a\nb\n");
        assert_eq!(
            fs::read_to_string(dir.path().join(ARCHIVE_PATH)).unwrap(),
            "a\n"
        );
    }
}
