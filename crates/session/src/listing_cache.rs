//! The sessions listing's cache: what a listing shows of each file (its entry, or why it is
//! no session, and once counted its numbers), kept in one file `listing-cache.json` of the
//! data dir and keyed by path, size and modification time, so a listing of a home it has
//! seen costs a `stat` per file instead of a read. `ctxlab sessions` and the browser's
//! listing jobs share it (docs/architecture.md, "Files ctxlab writes").
//!
//! The file is ctxlab's own but read as outside input: at most `MAX_BYTES`, and one that does
//! not parse, or was written by another ctxlab version or cache format, is an empty cache
//! (rebuilt by the next listing), never an error. It is written whole to a temp file
//! (mode 0600) and renamed over the old one, so a reader never sees half of it; at most
//! `MAX_ENTRIES` files are kept, the ones seen last. Two listings writing at once lose at
//! most the other's new rows, which the next listing counts again.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::session::discover::{NotListed, SessionFile, entry_or_reason};
use crate::session::numbers::{FileNumbers, file_numbers};

/// The cache's name in the data dir.
pub const FILE_NAME: &str = "listing-cache.json";
/// A cache file larger than this is not read (and is replaced).
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Files kept at most; past it the ones seen longest ago go.
pub const MAX_ENTRIES: usize = 50_000;
const FORMAT: &str = "ctxlab-listing-cache";
/// Bumped whenever what a row holds, or how it is computed, changes.
const VERSION: u32 = 3;

/// What identifies one state of a file: a different size or modification time is a
/// different file for the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileKey {
    pub size: u64,
    pub mtime_secs: i64,
    pub mtime_nanos: u32,
}

impl FileKey {
    /// The key of the file at `path` now (one `stat`, following a symlink as the listing
    /// does); None when it cannot be had.
    pub fn of(path: &Path) -> Option<FileKey> {
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok()?;
        let (mtime_secs, mtime_nanos) = match modified.duration_since(UNIX_EPOCH) {
            Ok(d) => (i64::try_from(d.as_secs()).ok()?, d.subsec_nanos()),
            Err(e) => (
                -i64::try_from(e.duration().as_secs()).ok()?,
                e.duration().subsec_nanos(),
            ),
        };
        Some(FileKey {
            size: meta.len(),
            mtime_secs,
            mtime_nanos,
        })
    }
}

impl FileKey {
    /// The modification time the key holds.
    pub fn modified(&self) -> Option<std::time::SystemTime> {
        let nanos = std::time::Duration::from_nanos(u64::from(self.mtime_nanos));
        let secs = std::time::Duration::from_secs(self.mtime_secs.unsigned_abs());
        if self.mtime_secs >= 0 {
            UNIX_EPOCH.checked_add(secs + nanos)
        } else {
            UNIX_EPOCH.checked_sub(secs + nanos)
        }
    }
}

/// What a listing shows of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The entry its first lines give, or why it is no session (the "skipped: ..." reason).
    pub entry: Result<SessionFile, NotListed>,
    /// The whole file's numbers, or why they could not be had; None when the entry is an
    /// error.
    pub numbers: Option<Result<FileNumbers, NotListed>>,
}

impl Row {
    /// Reads the file: its entry and, when it is a session, its numbers. `key` must have been
    /// taken before, so a file that grows meanwhile is counted again next time rather than
    /// cached under a key its numbers do not match.
    pub fn read(path: &Path) -> Row {
        match entry_or_reason(path) {
            Ok(entry) => Row {
                entry: Ok(entry),
                numbers: Some(file_numbers(path).map_err(|e| NotListed::Unreadable(e.to_string()))),
            },
            Err(reason) => Row {
                entry: Err(reason),
                numbers: None,
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cached {
    path: PathBuf,
    key: FileKey,
    /// When a listing last saw it (Unix seconds): what goes first past `MAX_ENTRIES`.
    seen: u64,
    row: Row,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    format: String,
    version: u32,
    ctxlab: String,
    entries: Vec<Cached>,
}

/// The cache, loaded (or empty), with what this listing adds.
#[derive(Debug, Default)]
pub struct ListingCache {
    /// The cache file; None: nothing is read or written.
    file: Option<PathBuf>,
    entries: HashMap<PathBuf, Cached>,
    changed: bool,
}

impl ListingCache {
    /// No cache: every row is read from its file, nothing is saved.
    pub fn disabled() -> ListingCache {
        ListingCache::default()
    }

    /// The cache in `data_dir`; empty when missing, too large, unreadable, corrupt or of
    /// another version.
    pub fn load(data_dir: &Path) -> ListingCache {
        let file = data_dir.join(FILE_NAME);
        let entries = read_entries(&file).unwrap_or_default();
        ListingCache {
            file: Some(file),
            entries,
            changed: false,
        }
    }

    /// The row cached for `path` in the state `key`.
    pub fn get(&mut self, path: &Path, key: &FileKey) -> Option<&Row> {
        let now = crate::util::unix_now();
        let hit = self.entries.get_mut(path).filter(|c| c.key == *key)?;
        // Seen again: refreshed once a day, so a warm listing does not rewrite the file.
        if now.saturating_sub(hit.seen) > 24 * 3600 {
            hit.seen = now;
            self.changed = true;
        }
        Some(&hit.row)
    }

    /// Remembers `row` for `path` in the state `key`.
    pub fn put(&mut self, path: &Path, key: FileKey, row: Row) {
        self.entries.insert(
            path.to_path_buf(),
            Cached {
                path: path.to_path_buf(),
                key,
                seen: crate::util::unix_now(),
                row,
            },
        );
        self.changed = true;
    }

    /// The row for `path`: the cached one when its key still matches, else read from the
    /// file and remembered (a file that cannot be `stat`ed is read, not cached).
    pub fn row(&mut self, path: &Path) -> Row {
        let Some(key) = FileKey::of(path) else {
            return Row::read(path);
        };
        if let Some(row) = self.get(path, &key) {
            return row.clone();
        }
        let row = Row::read(path);
        self.put(path, key, row.clone());
        row
    }

    /// Merges what `other` learned into this cache (a job's findings into the one saved).
    pub fn absorb(&mut self, other: ListingCache) {
        if other.changed {
            self.entries.extend(other.entries);
            self.changed = true;
        }
    }

    /// Writes the cache when it changed: whole, through a temp file renamed over the old
    /// one, mode 0600. Errors are the caller's to ignore: a listing works without it.
    pub fn save(&mut self) -> std::io::Result<()> {
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        if !self.changed {
            return Ok(());
        }
        let mut entries: Vec<Cached> = self.entries.values().cloned().collect();
        if entries.len() > MAX_ENTRIES {
            entries.sort_by(|a, b| b.seen.cmp(&a.seen).then_with(|| a.path.cmp(&b.path)));
            entries.truncate(MAX_ENTRIES);
        }
        let text = serde_json::to_vec(&CacheFile {
            format: FORMAT.to_string(),
            version: VERSION,
            ctxlab: env!("CARGO_PKG_VERSION").to_string(),
            entries,
        })
        .map_err(std::io::Error::other)?;
        if text.len() as u64 > MAX_BYTES {
            return Err(std::io::Error::other(
                "the listing cache would be too large",
            ));
        }
        write_replacing(&file, &text)?;
        self.changed = false;
        Ok(())
    }
}

/// The entries of the cache file, or None when it is not one this version wrote.
fn read_entries(file: &Path) -> Option<HashMap<PathBuf, Cached>> {
    let opened = crate::safe_fs::open_regular_path(file).ok()?.ok()?;
    let mut bytes = Vec::new();
    opened.take(MAX_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_BYTES {
        return None;
    }
    let cache: CacheFile = serde_json::from_slice(&bytes).ok()?;
    if cache.format != FORMAT
        || cache.version != VERSION
        || cache.ctxlab != env!("CARGO_PKG_VERSION")
    {
        return None;
    }
    Some(
        cache
            .entries
            .into_iter()
            .take(MAX_ENTRIES)
            .map(|mut c| {
                // Not kept in the file: the key says it.
                if let Ok(entry) = &mut c.row.entry {
                    entry.modified = c.key.modified();
                }
                (c.path.clone(), c)
            })
            .collect(),
    )
}

/// `bytes` at `file`, atomically: a fresh temp file beside it (never an existing name,
/// never through a link), mode 0600, renamed over `file`.
fn write_replacing(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = file
        .parent()
        .ok_or_else(|| std::io::Error::other("the cache has no folder"))?;
    std::fs::create_dir_all(dir)?;
    if let Ok(d) = crate::safe_fs::Dir::open(dir) {
        d.remove_stale_temps();
    }
    let temp = dir.join(crate::safe_fs::temp_name(FILE_NAME));
    let result = (|| {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&temp)?;
        out.write_all(bytes)?;
        drop(out);
        std::fs::rename(&temp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        let line = serde_json::json!({"type": "user", "uuid": "u1", "sessionId": "s",
            "cwd": "/home/dev/x", "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"}});
        std::fs::write(&path, format!("{line}\n")).unwrap();
        path
    }

    #[test]
    fn a_saved_row_comes_back_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = session(dir.path(), "a.jsonl");
        let mut cache = ListingCache::load(dir.path());
        let row = cache.row(&file);
        assert!(row.entry.is_ok(), "{row:?}");
        cache.save().unwrap();
        let saved = dir.path().join(FILE_NAME);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut again = ListingCache::load(dir.path());
        let key = FileKey::of(&file).unwrap();
        assert_eq!(again.get(&file, &key), Some(&row));
        std::fs::write(&file, "changed and longer\n").unwrap();
        let key = FileKey::of(&file).unwrap();
        assert!(again.get(&file, &key).is_none(), "a new size is a miss");
    }

    #[test]
    fn a_corrupt_or_foreign_cache_is_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = session(dir.path(), "a.jsonl");
        let key = FileKey::of(&file).unwrap();
        for text in [
            "{not json".to_string(),
            r#"{"format":"ctxlab-listing-cache","version":999,"ctxlab":"0","entries":[]}"#
                .to_string(),
        ] {
            std::fs::write(dir.path().join(FILE_NAME), &text).unwrap();
            let mut cache = ListingCache::load(dir.path());
            assert!(cache.get(&file, &key).is_none());
            assert!(cache.row(&file).entry.is_ok());
            cache.save().unwrap();
            assert!(ListingCache::load(dir.path()).get(&file, &key).is_some());
        }
    }
}
