//! The on-disk places the pipeline writes: persisted tool outputs, transcripts and the
//! `guarded` strategy's append-only archive.
//!
//! Owns the safety rules of docs/pipeline.md, "Where ctxlab differs from the lesson, and
//! why": file names derived from tool ids can never leave `.task_outputs/tool-results/`, an
//! existing file is never overwritten (a name that is taken is reused only when it already
//! holds exactly the same text), and every write is
//! atomic (temp file in the same folder, then a no-clobber hard link into place). The
//! archive is the one file that grows: it is only ever appended to, never through a link,
//! and a torn last line from a crash is closed before the next append. A dry-run store
//! answers the same naming questions without writing, so the agent can preview a stage in
//! step mode. It knows nothing of messages beyond the text it is handed.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;
use sha2::{Digest, Sha256};

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
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
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
        }
    }

    /// A store that decides names exactly as this one would but writes nothing.
    pub fn dry_run(&self) -> Store {
        Store {
            root: self.root.clone(),
            reserved: Some(Mutex::new(HashMap::new())),
            transcript_hint: Mutex::new(HashMap::new()),
        }
    }

    pub fn is_dry_run(&self) -> bool {
        self.reserved.is_some()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Persists the full text of a tool result; returns where it is (or already was).
    pub fn persist_tool_result(
        &self,
        tool_use_id: Option<&str>,
        text: &str,
    ) -> Result<FileWritten, StoreError> {
        let stem = tool_result_stem(tool_use_id);
        let dir = self.root.join(TOOL_RESULTS_DIR);
        for n in 1usize.. {
            let name = if n == 1 {
                format!("{stem}.txt")
            } else {
                format!("{stem}-{n}.txt")
            };
            let relative = format!("{TOOL_RESULTS_DIR}/{name}");
            match self.existing_bytes(&dir.join(&name), &relative)? {
                Some(existing) if existing == text.as_bytes() => {
                    return Ok(written(relative, WriteStatus::Reused, text));
                }
                Some(_) => continue,
                None => {
                    if self.claim(&dir, &name, &relative, text)? {
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
        let dir = self.root.join(TRANSCRIPTS_DIR);
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
            if self.is_taken(&dir.join(&name), &relative) {
                continue;
            }
            if self.claim(&dir, &name, &relative, text)? {
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
        let reserved = self
            .reserved
            .as_ref()
            .is_some_and(|r| r.lock().map(|r| r.contains_key(relative)).unwrap_or(false));
        let is_file = fs::symlink_metadata(self.root.join(relative)).is_ok_and(|m| m.is_file());
        (reserved || is_file).then(|| relative.to_string())
    }

    /// Whether a name is taken, on disk (any kind of entry) or by this dry run.
    fn is_taken(&self, path: &Path, relative: &str) -> bool {
        let reserved = self
            .reserved
            .as_ref()
            .is_some_and(|r| r.lock().map(|r| r.contains_key(relative)).unwrap_or(false));
        reserved || fs::symlink_metadata(path).is_ok()
    }

    /// The bytes at a name, if the name is taken (on disk, or reserved by this dry run).
    /// Compared as bytes: a file that only decodes lossily to a text does not hold it.
    fn existing_bytes(&self, path: &Path, relative: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(reserved) = &self.reserved
            && let Some(text) = reserved.lock().ok().and_then(|r| r.get(relative).cloned())
        {
            return Ok(Some(text.into_bytes()));
        }
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Puts `text` at `dir/name` unless someone got there first (then `Ok(false)`).
    fn claim(
        &self,
        dir: &Path,
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
        fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let target = dir.join(name);
        let write_err = |source| StoreError::Write {
            path: target.clone(),
            source,
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(dir)
            .map_err(write_err)?;
        tmp.write_all(text.as_bytes()).map_err(write_err)?;
        tmp.as_file().sync_all().map_err(write_err)?;
        // A hard link never replaces an existing file, so two writers racing for one name
        // cannot clobber each other; the loser moves on to the next name.
        match fs::hard_link(tmp.path(), &target) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(source) => Err(StoreError::Write {
                path: target,
                source,
            }),
        }
    }

    /// The text at a workspace-relative path this store wrote (or, in a dry run, would have).
    pub fn read_text(&self, relative: &str) -> Result<String, StoreError> {
        let path = self.root.join(relative);
        self.existing_bytes(&path, relative)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .ok_or_else(|| StoreError::Read {
                path,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            })
    }

    /// The persisted tool outputs, newest first.
    pub fn list_tool_results(&self) -> Vec<StoredFile> {
        self.list(TOOL_RESULTS_DIR, ".txt")
    }

    /// The saved transcripts, newest first.
    pub fn list_transcripts(&self) -> Vec<StoredFile> {
        self.list(TRANSCRIPTS_DIR, ".jsonl")
    }

    fn list(&self, dir: &str, suffix: &str) -> Vec<StoredFile> {
        let Ok(entries) = fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        let mut files: Vec<StoredFile> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                // Temp files of atomic writes (`.tmp-XXXXXX`) have no suffix, so this
                // already skips them; a safe id like `.tmp-1` names a real `.tmp-1.txt`.
                if !name.ends_with(suffix) {
                    return None;
                }
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

pub(crate) fn written(path: String, status: WriteStatus, text: &str) -> FileWritten {
    FileWritten {
        path,
        status,
        chars: text.chars().count(),
        bytes: text.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_ids_name_their_file_as_is() {
        assert_eq!(tool_result_stem(Some("toolu_01.A-b")), "toolu_01.A-b");
        assert_eq!(tool_result_stem(None), "unknown");
        assert_eq!(tool_result_stem(Some("")), "unknown");
        let s64 = "a".repeat(64);
        assert_eq!(tool_result_stem(Some(&s64)), s64);
    }

    #[test]
    fn unsafe_ids_are_sanitized_and_hashed() {
        // sha256("../escape") starts with these 8 hex digits (checked with Python's hashlib).
        let hex = {
            let d = Sha256::digest(b"../escape");
            d.iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        assert_eq!(
            tool_result_stem(Some("../escape")),
            format!(".._escape-{hex}")
        );
        assert!(tool_result_stem(Some("..")).starts_with("..-"));
        assert!(tool_result_stem(Some(".")).starts_with(".-"));
        let long = "x".repeat(65);
        let stem = tool_result_stem(Some(&long));
        assert_eq!(stem.len(), 64 + 1 + 8);
        assert_eq!(tool_result_stem(Some("a/b")).len(), 3 + 1 + 8);
        assert!(tool_result_stem(Some("é")).starts_with("_-"));
    }

    #[test]
    fn taken_names_are_reused_only_for_identical_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let a = store.persist_tool_result(Some("t1"), "first").unwrap();
        assert_eq!(a.path, ".task_outputs/tool-results/t1.txt");
        assert_eq!(a.status, WriteStatus::Created);
        let again = store.persist_tool_result(Some("t1"), "first").unwrap();
        assert_eq!(again.status, WriteStatus::Reused);
        assert_eq!(again.path, a.path);
        let b = store.persist_tool_result(Some("t1"), "second").unwrap();
        assert_eq!(b.path, ".task_outputs/tool-results/t1-2.txt");
        assert_eq!(
            fs::read_to_string(dir.path().join(&a.path)).unwrap(),
            "first"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join(&b.path)).unwrap(),
            "second"
        );
    }

    #[test]
    fn transcripts_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let a = store.write_transcript(1_700_000_000, "x\n").unwrap();
        let b = store.write_transcript(1_700_000_000, "x\n").unwrap();
        assert_eq!(a.path, ".transcripts/transcript_1700000000.jsonl");
        assert_eq!(b.path, ".transcripts/transcript_1700000000-2.jsonl");
        assert_eq!(store.list_transcripts().len(), 2);
    }

    #[test]
    fn saved_copies_must_be_files_inside_the_results_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let f = store.persist_tool_result(Some("t1"), "text").unwrap();
        assert_eq!(store.saved_tool_result(&f.path), Some(f.path.clone()));
        assert_eq!(
            store.saved_tool_result(&format!("./{}", f.path)),
            Some(f.path.clone())
        );
        for bad in [
            ".task_outputs/tool-results/missing.txt",
            ".task_outputs/tool-results",
            ".task_outputs/tool-results/../tool-results/t1.txt",
            "/etc/passwd",
            "t1.txt",
        ] {
            assert_eq!(store.saved_tool_result(bad), None, "{bad}");
        }
        let dry = store.dry_run();
        let g = dry.persist_tool_result(Some("t2"), "other").unwrap();
        assert_eq!(dry.saved_tool_result(&g.path), Some(g.path.clone()));
        assert_eq!(store.saved_tool_result(&g.path), None);
    }

    #[test]
    fn named_transcripts_keep_to_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let a = store.write_transcript_named("../x", "t\n").unwrap();
        assert_eq!(a.path, ".transcripts/transcript____x.jsonl");
        let b = store.write_transcript_named("00ff", "t\n").unwrap();
        let c = store.write_transcript_named("00ff", "u\n").unwrap();
        assert_eq!(b.path, ".transcripts/transcript_00ff.jsonl");
        assert_eq!(c.path, ".transcripts/transcript_00ff-2.jsonl");
    }

    #[test]
    fn dry_run_names_like_the_real_store_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        store.persist_tool_result(Some("t1"), "old").unwrap();
        let dry = store.dry_run();
        assert_eq!(
            dry.persist_tool_result(Some("t1"), "new").unwrap().path,
            ".task_outputs/tool-results/t1-2.txt"
        );
        assert_eq!(
            dry.persist_tool_result(Some("t1"), "newer").unwrap().path,
            ".task_outputs/tool-results/t1-3.txt"
        );
        assert!(
            !dir.path()
                .join(".task_outputs/tool-results/t1-2.txt")
                .exists()
        );
        assert_eq!(store.list_tool_results().len(), 1);
    }
}
