//! The on-disk places the pipeline writes: persisted tool outputs, transcripts and the
//! `guarded` strategy's append-only archive.
//!
//! Owns the safety rules of docs/pipeline.md, "Where ctxlab differs from the lesson, and why":
//! file names derived from tool ids can never leave `.task_outputs/tool-results/`, an existing
//! file is never overwritten (a name that is taken is reused only when it already holds exactly
//! the same text; a folder, a FIFO or a link at a name makes it taken, and is never opened),
//! every write is atomic (temp file in the same folder, then a no-clobber hard link into place),
//! and nothing is written outside the workspace: `.task_outputs`, `tool-results` and
//! `.transcripts` are opened one by one without following symlinks, and a symlink among them
//! is an error naming it (docs/architecture.md, "Files ctxlab writes"). The archive is the one
//! file that grows: it is only ever appended to, never through a link, and a torn last line
//! from a crash is closed before the next append. A dry-run store answers the same naming
//! questions without writing, so the agent can preview a stage in step mode. It knows nothing
//! of messages beyond the text it is handed.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::safe_fs::{Dir, DirError, EntryKind};

mod archive;

/// Where persisted tool results live, relative to the workspace.
pub const TOOL_RESULTS_DIR: &str = ".task_outputs/tool-results";
/// Where transcripts live, relative to the workspace.
pub const TRANSCRIPTS_DIR: &str = ".transcripts";
/// The `guarded` strategy's archive of snipped messages, relative to the workspace.
pub const ARCHIVE_PATH: &str = ".transcripts/archive.jsonl";
const MAX_ID_NAME_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A folder on the way is a symlink or not a folder: nothing is written through it.
    #[error(transparent)]
    Folder(#[from] DirError),
    #[error("{path} is not a regular file inside the workspace; nothing was appended")]
    NotAppendable { path: PathBuf },
}

/// Whether a write made a new file or found the same text already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteStatus {
    Created,
    Reused,
    /// Text was added at the end of a file that may already hold more (the archive).
    Appended,
}

/// One file a stage wrote (or reused), with its path relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileWritten {
    pub path: String,
    pub status: WriteStatus,
    pub chars: usize,
    pub bytes: usize,
}

/// A file found in one of the store's folders, for the browsers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    pub path: PathBuf,
    /// Relative to the workspace, with `/` separators.
    pub relative: String,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
}

/// The workspace's persisted outputs and transcripts.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    /// Some in a dry run: the names a dry run has handed out, with their text.
    reserved: Option<Mutex<HashMap<String, String>>>,
    /// Per name stem, the first transcript suffix not known to be taken: compactions within
    /// one second would otherwise probe every earlier name again.
    transcript_hint: Mutex<HashMap<String, usize>>,
    /// Whether each write is flushed to disk before it counts (a live session: the only
    /// copy). A replay's source still exists, so it writes without syncing (`without_sync`;
    /// docs/pipeline.md, "Replay").
    sync_each: bool,
}

impl Clone for Store {
    fn clone(&self) -> Self {
        Store {
            root: self.root.clone(),
            reserved: self
                .reserved
                .as_ref()
                .map(|r| Mutex::new(r.lock().map(|g| g.clone()).unwrap_or_default())),
            transcript_hint: Mutex::new(HashMap::new()),
            sync_each: self.sync_each,
        }
    }
}

/// The file stem a tool id names, without `.txt` (docs/pipeline.md, "Where ctxlab differs
/// from the lesson, and why").
pub fn tool_result_stem(tool_use_id: Option<&str>) -> String {
    let id = match tool_use_id {
        None | Some("") => return "unknown".to_string(),
        Some(id) => id,
    };
    let safe_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if id.chars().all(safe_char)
        && id.chars().count() <= MAX_ID_NAME_CHARS
        && id != "."
        && id != ".."
    {
        return id.to_string();
    }
    let sanitized: String = id
        .chars()
        .map(|c| if safe_char(c) { c } else { '_' })
        .take(MAX_ID_NAME_CHARS)
        .collect();
    let digest = Sha256::digest(id.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{sanitized}-{hex}")
}

impl Store {
    /// A store rooted at a workspace. Nothing is created until something is written.
    pub fn new(workspace: impl Into<PathBuf>) -> Store {
        Store {
            root: workspace.into(),
            reserved: None,
            transcript_hint: Mutex::new(HashMap::new()),
            sync_each: true,
        }
    }

    /// This store, writing without syncing (a replay, whose source still exists: see
    /// docs/pipeline.md, "Replay").
    pub fn without_sync(mut self) -> Store {
        self.sync_each = false;
        self
    }

    pub fn syncs_each_write(&self) -> bool {
        self.sync_each
    }

    /// A store that decides names exactly as this one would but writes nothing.
    pub fn dry_run(&self) -> Store {
        Store {
            root: self.root.clone(),
            reserved: Some(Mutex::new(HashMap::new())),
            transcript_hint: Mutex::new(HashMap::new()),
            sync_each: self.sync_each,
        }
    }

    pub fn is_dry_run(&self) -> bool {
        self.reserved.is_some()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens one of the store's folders (`.task_outputs/tool-results` or `.transcripts`)
    /// component by component without following a symlink; with `create`, missing folders
    /// are made. `Ok(None)`: it does not exist (and `create` is false).
    fn open_dir(&self, relative: &str, create: bool) -> Result<Option<Dir>, StoreError> {
        let mut dir = Dir::open(&self.root)?;
        for part in relative.split('/') {
            match dir.child(part, create)? {
                Some(child) => dir = child,
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// Removes the temp files that killed processes left in the store's folders; returns
    /// how many. Folders that are missing or unsafe are left alone.
    pub fn remove_stale_temp_files(&self) -> usize {
        [TOOL_RESULTS_DIR, TRANSCRIPTS_DIR]
            .into_iter()
            .filter_map(|d| self.open_dir(d, false).ok().flatten())
            .map(|dir| dir.remove_stale_temps())
            .sum()
    }

    /// Persists the full text of a tool result; returns where it is (or already was).
    pub fn persist_tool_result(
        &self,
        tool_use_id: Option<&str>,
        text: &str,
    ) -> Result<FileWritten, StoreError> {
        let stem = tool_result_stem(tool_use_id);
        let dir = self.open_dir(TOOL_RESULTS_DIR, !self.is_dry_run())?;
        for n in 1usize.. {
            let name = if n == 1 {
                format!("{stem}.txt")
            } else {
                format!("{stem}-{n}.txt")
            };
            let relative = format!("{TOOL_RESULTS_DIR}/{name}");
            match self.existing(dir.as_ref(), &name, &relative)? {
                Existing::Bytes(existing) if existing == text.as_bytes() => {
                    return Ok(written(relative, WriteStatus::Reused, text));
                }
                Existing::Bytes(_) | Existing::Other => continue,
                Existing::Nothing => {
                    if self.claim(dir.as_ref(), &name, &relative, text)? {
                        return Ok(written(relative, WriteStatus::Created, text));
                    }
                }
            }
        }
        unreachable!("1usize.. is endless")
    }

    /// Writes a transcript under a fresh name: `transcript_<secs>.jsonl`, then `-2`, `-3`, ...
    pub fn write_transcript(&self, now_secs: u64, text: &str) -> Result<FileWritten, StoreError> {
        self.write_transcript_named(&now_secs.to_string(), text)
    }

    /// Writes a transcript under a fresh name: `transcript_<stem>.jsonl`, then `-2`, `-3`, ...
    /// The stem is made by the caller (seconds, or 32 hex digits for s08-latest) and must be
    /// a plain name; anything else is replaced so the file stays in `.transcripts/`.
    pub fn write_transcript_named(
        &self,
        stem: &str,
        text: &str,
    ) -> Result<FileWritten, StoreError> {
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = self.open_dir(TRANSCRIPTS_DIR, !self.is_dry_run())?;
        let first = self
            .transcript_hint
            .lock()
            .ok()
            .and_then(|h| h.get(&stem).copied())
            .unwrap_or(1);
        for n in first.. {
            let name = if n == 1 {
                format!("transcript_{stem}.jsonl")
            } else {
                format!("transcript_{stem}-{n}.jsonl")
            };
            let relative = format!("{TRANSCRIPTS_DIR}/{name}");
            // Only the name matters here, so a taken one is not read.
            if self.is_taken(dir.as_ref(), &name, &relative)? {
                continue;
            }
            if self.claim(dir.as_ref(), &name, &relative, text)? {
                if let Ok(mut hint) = self.transcript_hint.lock() {
                    hint.insert(stem.clone(), n + 1);
                }
                return Ok(written(relative, WriteStatus::Created, text));
            }
        }
        unreachable!("1usize.. is endless")
    }

    /// The workspace-relative path of an existing saved tool result, if `candidate` names
    /// one: relative, made only of plain components, inside `.task_outputs/tool-results/`,
    /// and a regular file (or a name this dry run handed out). Anything else is not a copy
    /// the pipeline may rely on, so the caller saves the text again.
    pub fn saved_tool_result(&self, candidate: &str) -> Option<String> {
        self.existing_file_in(TOOL_RESULTS_DIR, candidate)
    }

    /// The same check for a transcript in `.transcripts/` (an archive marker's file).
    pub fn saved_transcript(&self, candidate: &str) -> Option<String> {
        self.existing_file_in(TRANSCRIPTS_DIR, candidate)
    }

    /// The file is looked up folder by folder without following a link, like every write:
    /// a copy reached through a symlinked folder is not one the store vouches for.
    fn existing_file_in(&self, dir: &str, candidate: &str) -> Option<String> {
        let relative = candidate.strip_prefix("./").unwrap_or(candidate);
        let path = Path::new(relative);
        let plain = path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        let inside = path.starts_with(dir)
            && path.components().count() > Path::new(dir).components().count();
        if !plain || !inside {
            return None;
        }
        if self.reserved_text(relative).is_some() {
            return Some(relative.to_string());
        }
        let (folder, name) = relative.rsplit_once('/')?;
        let kind = self.open_dir(folder, false).ok()??.entry_kind(name).ok()?;
        (kind == Some(EntryKind::File)).then(|| relative.to_string())
    }

    fn reserved_text(&self, relative: &str) -> Option<String> {
        self.reserved
            .as_ref()
            .and_then(|r| r.lock().ok().and_then(|r| r.get(relative).cloned()))
    }

    /// Whether a name is taken, on disk (any kind of entry) or by this dry run.
    fn is_taken(&self, dir: Option<&Dir>, name: &str, relative: &str) -> Result<bool, StoreError> {
        if self.reserved_text(relative).is_some() {
            return Ok(true);
        }
        let Some(dir) = dir else { return Ok(false) };
        dir.entry_kind(name)
            .map(|kind| kind.is_some())
            .map_err(|source| StoreError::Read {
                path: dir.path().join(name),
                source,
            })
    }

    /// What is at a name (on disk, or reserved by this dry run). Compared as bytes: a file
    /// that only decodes lossily to a text does not hold it. Anything but a regular file (a
    /// folder, a FIFO, a symlink) is never opened: the name is simply taken.
    fn existing(
        &self,
        dir: Option<&Dir>,
        name: &str,
        relative: &str,
    ) -> Result<Existing, StoreError> {
        if let Some(text) = self.reserved_text(relative) {
            return Ok(Existing::Bytes(text.into_bytes()));
        }
        let Some(dir) = dir else {
            return Ok(Existing::Nothing);
        };
        match dir.read_regular(name) {
            Ok(Some(bytes)) => Ok(Existing::Bytes(bytes)),
            Ok(None) => Ok(Existing::Nothing),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Ok(Existing::Other),
            Err(source) => Err(StoreError::Read {
                path: dir.path().join(name),
                source,
            }),
        }
    }

    /// Puts `text` at `dir/name` unless someone got there first (then `Ok(false)`).
    fn claim(
        &self,
        dir: Option<&Dir>,
        name: &str,
        relative: &str,
        text: &str,
    ) -> Result<bool, StoreError> {
        if let Some(reserved) = &self.reserved {
            if let Ok(mut r) = reserved.lock() {
                r.insert(relative.to_string(), text.to_string());
            }
            return Ok(true);
        }
        let dir = dir.ok_or_else(|| StoreError::Write {
            path: self.root.join(relative),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
        // A hard link never replaces an existing entry, so two writers racing for one name
        // cannot clobber each other; the loser moves on to the next name.
        dir.write_new_synced(name, text.as_bytes(), self.sync_each)
            .map_err(|source| StoreError::Write {
                path: dir.path().join(name),
                source,
            })
    }

    /// The text at a workspace-relative path this store wrote (or, in a dry run, would have).
    /// Read like a write: no symlink is followed and only a regular file is opened.
    pub fn read_text(&self, relative: &str) -> Result<String, StoreError> {
        self.read_text_with(relative, str::to_string)
    }

    /// Hands the text at `relative` (see [`Store::read_text`]) to `f` without copying it
    /// again: a dry run's reserved text is lent as it is, a file's bytes become the text.
    pub fn read_text_with<R>(
        &self,
        relative: &str,
        f: impl FnOnce(&str) -> R,
    ) -> Result<R, StoreError> {
        let not_found = || StoreError::Read {
            path: self.root.join(relative),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        if let Some(reserved) = &self.reserved
            && let Ok(r) = reserved.lock()
            && let Some(text) = r.get(relative)
        {
            return Ok(f(text));
        }
        let (folder, name) = relative.rsplit_once('/').ok_or_else(not_found)?;
        let Some(dir) = self.open_dir(folder, false)? else {
            return Err(not_found());
        };
        match dir.read_regular(name) {
            Ok(Some(bytes)) => Ok(f(&utf8_lossy(bytes))),
            Ok(None) => Err(not_found()),
            Err(source) => Err(StoreError::Read {
                path: dir.path().join(name),
                source,
            }),
        }
    }

    /// The persisted tool outputs, newest first.
    pub fn list_tool_results(&self) -> Vec<StoredFile> {
        self.list(TOOL_RESULTS_DIR, ".txt")
    }

    /// The saved transcripts, newest first.
    pub fn list_transcripts(&self) -> Vec<StoredFile> {
        self.list(TRANSCRIPTS_DIR, ".jsonl")
    }

    /// The regular files of one folder; nothing when the folder is missing or reached
    /// through a symlink (what is there was not written by this store).
    fn list(&self, dir: &str, suffix: &str) -> Vec<StoredFile> {
        let Ok(Some(_)) = self.open_dir(dir, false) else {
            return Vec::new();
        };
        let Ok(entries) = fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        let mut files: Vec<StoredFile> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // Temp files of atomic writes (`.ctxlab-tmp-PID-N`) have no suffix, so this
                // already skips them; a safe id like `.tmp-1` names a real `.tmp-1.txt`.
                if !name.ends_with(suffix) {
                    return None;
                }
                // `DirEntry::metadata` does not follow a symlink: links are not listed.
                let meta = e.metadata().ok()?;
                meta.is_file().then(|| StoredFile {
                    path: e.path(),
                    relative: format!("{dir}/{name}"),
                    bytes: meta.len(),
                    modified: meta.modified().ok(),
                })
            })
            .collect();
        files.sort_by(|a, b| {
            b.modified
                .cmp(&a.modified)
                .then(a.relative.cmp(&b.relative))
        });
        files
    }
}

/// What a name holds, for the naming loop.
enum Existing {
    Nothing,
    Bytes(Vec<u8>),
    /// A folder, a FIFO, a symlink, a device: taken, never opened.
    Other,
}

/// The bytes as text, copied only when they are not valid UTF-8.
fn utf8_lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

pub(crate) fn written(path: String, status: WriteStatus, text: &str) -> FileWritten {
    FileWritten {
        path,
        status,
        chars: text.chars().count(),
        bytes: text.len(),
    }
}

#[cfg(test)]
mod tests;
