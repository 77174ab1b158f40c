//! Finding session files: the tools' default folders (Claude Code's `projects/` under
//! `$CLAUDE_CONFIG_DIR` or `~/.claude`, Codex's `sessions/` under `$CODEX_HOME` or
//! `~/.codex`, ctxlab's own recordings in `sessions/` of its data dir, `ctxlab proxy`'s
//! captures in `captures/`) and any file or
//! folder a person names. Codex's `archived_sessions/` beside its `sessions/` is listed too,
//! its files marked archived; a `.jsonl.zst` file is a session read as it decompresses,
//! unless its plain `.jsonl` twin is beside it (then the plain one is listed). A listing entry costs one `stat` and
//! a peek at the file's first lines, read by the session readers themselves, so its project
//! and start are the ones `ctxlab inspect` gives; the counts a listing shows beside it come
//! from `numbers::numbers_of_file`, filled in lazily. A `.jsonl` file that is no session
//! is reported with the reason (`entry_or_reason`), never dropped in silence. Files are only
//! ever read.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::format_of_line;
use super::model::{SessionFormat, Tool};
use super::numbers::{ProjectSource, SessionNumbers, note_project_folder};

/// How deep a folder walk goes (Codex nests sessions as YYYY/MM/DD).
const MAX_DEPTH: usize = 8;
/// How much of a file the listing peeks at for its format, project and start.
const PEEK_BYTES: usize = 256 * 1024;

/// Why a file has no listing row, or no counts beside it: what a listing says of it. It
/// clones and serializes because the listing cache keeps it, so a read error is kept as
/// its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum NotListed {
    /// The file could not be read (the error's text).
    #[error("{0}")]
    Unreadable(String),
    /// The words every command gives for an empty file (`SessionError::Empty`).
    #[error("no messages (the file is empty)")]
    Empty,
    #[error("not a session: only blank lines")]
    OnlyBlankLines,
    #[error("not a session: no whole line in its first {kib} KiB")]
    NoWholeLine { kib: usize },
    #[error("not a session: no line of it is JSON")]
    NoJsonLine,
    #[error("not a session: no line is in a format ctxlab reads")]
    NoKnownFormat,
    /// A session whose counts no scan has given yet.
    #[error("not counted")]
    NotCounted,
}

/// A folder where a tool keeps its sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    pub tool: Tool,
    pub path: PathBuf,
}

/// The default roots, from the environment (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `HOME`),
/// and ctxlab's own recordings (`ctxlab_sessions_dir`).
pub fn default_roots() -> Vec<Root> {
    let mut roots = roots_from(
        std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from),
        std::env::var_os("CODEX_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    );
    if let Some(path) = ctxlab_sessions_dir() {
        roots.push(Root {
            tool: Tool::Ctxlab,
            path,
        });
    }
    if let Some(path) = ctxlab_captures_dir() {
        roots.push(Root {
            tool: Tool::Proxy,
            path,
        });
    }
    roots
}

/// ctxlab's data dir: `CTXLAB_DATA_DIR` when set, else the platform's
/// (`~/.local/share/ctxlab` on Linux).
pub fn ctxlab_data_dir() -> Option<PathBuf> {
    match std::env::var_os("CTXLAB_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            directories::ProjectDirs::from("", "", "ctxlab").map(|d| d.data_dir().to_path_buf())
        }
    }
}

/// Where ctxlab records its live sessions: `sessions/` in its data dir.
pub fn ctxlab_sessions_dir() -> Option<PathBuf> {
    ctxlab_data_dir().map(|d| d.join("sessions"))
}

/// Where `ctxlab proxy` writes its captures by default: `captures/` in the data dir.
pub fn ctxlab_captures_dir() -> Option<PathBuf> {
    ctxlab_data_dir().map(|d| d.join("captures"))
}

/// The default roots for the given variables: a tool's own variable wins over the home dir.
pub fn roots_from(
    claude_config_dir: Option<PathBuf>,
    codex_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Vec<Root> {
    let mut roots = Vec::new();
    let non_empty = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    let home = non_empty(home);
    if let Some(dir) =
        non_empty(claude_config_dir).or_else(|| home.as_ref().map(|h| h.join(".claude")))
    {
        roots.push(Root {
            tool: Tool::ClaudeCode,
            path: dir.join("projects"),
        });
    }
    if let Some(dir) = non_empty(codex_home).or_else(|| home.as_ref().map(|h| h.join(".codex"))) {
        roots.push(Root {
            tool: Tool::Codex,
            path: dir.join("sessions"),
        });
        // Codex moves a session it archives here, beside `sessions/`.
        roots.push(Root {
            tool: Tool::Codex,
            path: dir.join(ARCHIVED_DIR),
        });
    }
    roots
}

/// The folder of Codex's archived sessions, in `CODEX_HOME`.
const ARCHIVED_DIR: &str = "archived_sessions";

/// Whether a session file sits in Codex's archive (`archived_sessions/` in `CODEX_HOME`).
pub fn is_archived(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == ARCHIVED_DIR)
}

/// Whether a file name is a session's: `.jsonl`, or `.jsonl.zst` (read as it decompresses).
fn is_session_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".jsonl") || name.ends_with(".jsonl.zst")
}

/// A `.jsonl.zst` file whose plain `.jsonl` twin is beside it: the plain one is listed.
fn has_plain_twin(path: &Path) -> bool {
    super::compressed::is_compressed(path) && path.with_extension("").is_file()
}

/// One session file found.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SessionFile {
    pub path: PathBuf,
    pub tool: Tool,
    pub format: SessionFormat,
    /// The project folder the session worked in (`numbers::SessionNumbers::project`).
    pub project: Option<String>,
    pub project_source: Option<ProjectSource>,
    /// ISO 8601 time of the first timestamped line, when the first lines have one.
    pub started: Option<String>,
    pub size_bytes: u64,
    #[serde(skip)]
    pub modified: Option<SystemTime>,
    /// The session's first request, on one line (`title::first_request`), from its first
    /// lines; None when they hold none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// In Codex's `archived_sessions/`.
    #[serde(default)]
    pub archived: bool,
}

/// Session files under `paths` (files or folders); the default roots when none is given.
/// Sorted by project, then start, then path. Unreadable folders are passed over.
pub fn discover(paths: &[PathBuf]) -> Vec<SessionFile> {
    discover_reporting(paths).0
}

/// A folder or file that could not be read while discovering, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoverError {
    pub path: PathBuf,
    pub message: String,
}

/// `discover`, with the folders and named files that could not be read (a default root that
/// does not exist is not an error: the tool is just not installed).
pub fn discover_reporting(paths: &[PathBuf]) -> (Vec<SessionFile>, Vec<DiscoverError>) {
    let (files, mut errors) = find_files(paths);
    let mut entries = Vec::with_capacity(files.len());
    for f in files {
        match entry_or_reason(&f) {
            Ok(entry) => entries.push(entry),
            // Named, never dropped in silence: a person looking for a session sees why.
            Err(reason) => errors.push(skipped(f, &reason)),
        }
    }
    entries
        .sort_by(|a, b| (&a.project, &a.started, &a.path).cmp(&(&b.project, &b.started, &b.path)));
    (entries, errors)
}

/// How a listing names a file it found that is not a session.
pub fn skipped(path: PathBuf, reason: &dyn std::fmt::Display) -> DiscoverError {
    DiscoverError {
        path,
        message: format!("skipped: {reason}"),
    }
}

/// The session files under `paths` (the default roots when empty), sorted, before any is
/// opened: the walk's `stat`s only (and a peek at an `agent-*.jsonl` for its session), with
/// the folders and named files that could not be read.
pub fn find_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<DiscoverError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    if paths.is_empty() {
        for root in default_roots() {
            if root.path.exists() {
                walk(&root.path, 0, &mut files, &mut errors);
            }
        }
    } else {
        for p in paths {
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => walk(p, 0, &mut files, &mut errors),
                Ok(m) if !m.is_file() => errors.push(DiscoverError {
                    path: p.clone(),
                    message: format!(
                        "skipped: {}, not a regular file",
                        super::open::not_regular(m.file_type()).unwrap_or("not a regular file")
                    ),
                }),
                Ok(_) => files.push(p.clone()),
                Err(e) => errors.push(DiscoverError {
                    path: p.clone(),
                    message: e.to_string(),
                }),
            }
        }
    }
    files.sort();
    files.dedup();
    (files, errors)
}

/// The one order of every listing (`ctxlab sessions` and the browser): sessions grouped by
/// project, the project with the newest session first, each project's sessions newest
/// first; a session without a start goes last in its project, ties by path. `key` gives an
/// item's project, start (ISO 8601, so text order is time order) and path.
pub fn order_newest_first<T>(
    items: &mut [T],
    key: impl Fn(&T) -> (Option<&str>, Option<&str>, &Path),
) {
    use std::cmp::Reverse;
    let mut newest: std::collections::HashMap<Option<String>, Option<String>> =
        std::collections::HashMap::new();
    for item in items.iter() {
        let (project, started, _) = key(item);
        let slot = newest.entry(project.map(str::to_string)).or_default();
        if started.map(str::to_string) > *slot {
            *slot = started.map(str::to_string);
        }
    }
    items.sort_by_cached_key(|item| {
        let (project, started, path) = key(item);
        let project = project.map(str::to_string);
        let group_newest = newest.get(&project).cloned().flatten();
        (
            Reverse(group_newest),
            project,
            Reverse(started.map(str::to_string)),
            path.to_path_buf(),
        )
    });
}

/// Whether a file is a subagent's sidechain, listed with its session rather than alone.
pub(crate) fn is_subagent_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("agent-")
        || path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "subagents")
}

/// Whether a subagent's file is listed with a session of its own: one in a `subagents/`
/// folder always is (the folder is named after it); an older `agent-*.jsonl` only when the
/// session its lines name (`<sessionId>.jsonl` beside it) is there, so a subagent whose
/// session was deleted is still listed rather than lost.
fn has_parent_session(path: &Path) -> bool {
    let in_subagents = path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "subagents");
    if in_subagents {
        return true;
    }
    let Some(id) = first_session_id(path) else {
        return false;
    };
    // A name from the file: only a plain file name is looked up beside it.
    if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\', '\0']) {
        return false;
    }
    let parent = path.with_file_name(format!("{id}.jsonl"));
    parent != path && parent.is_file()
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, errors: &mut Vec<DiscoverError>) {
    if depth > MAX_DEPTH {
        return;
    }
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) => {
            errors.push(DiscoverError {
                path: dir.to_path_buf(),
                message: e.to_string(),
            });
            return;
        }
    };
    for entry in read.flatten() {
        // Not following symlinked folders: a loop cannot trap the walk.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if path.file_name().is_some_and(|n| n == "subagents") {
                continue;
            }
            walk(&path, depth + 1, out, errors);
        } else if is_session_name(&path)
            && !has_plain_twin(&path)
            && !(is_subagent_file(&path) && has_parent_session(&path))
        {
            // Never opened unless regular (a FIFO would block the listing): a symlink is
            // judged by what it leads to.
            let target = if kind.is_symlink() {
                std::fs::metadata(&path).map(|m| m.file_type())
            } else {
                Ok(kind)
            };
            match target.map(super::open::not_regular) {
                Ok(None) => out.push(path),
                Ok(Some(what)) => errors.push(DiscoverError {
                    path,
                    message: format!("skipped: {what}, not a regular file"),
                }),
                Err(e) => errors.push(DiscoverError {
                    path,
                    message: format!("skipped: {e}"),
                }),
            }
        }
    }
}

/// The first bytes of a file, cut at the last whole line.
fn peek(path: &Path) -> Option<String> {
    peek_or_reason(path).ok()
}

fn peek_or_reason(path: &Path) -> Result<String, NotListed> {
    peek_at_most(path, PEEK_BYTES)
}

fn peek_at_most(path: &Path, limit: usize) -> Result<String, NotListed> {
    // A `.zst` file's first decompressed bytes.
    let mut buf = super::compressed::read_head(path, limit)
        .map_err(|e| NotListed::Unreadable(e.to_string()))?;
    if buf.len() == limit {
        let end = buf.iter().rposition(|&b| b == b'\n').unwrap_or(0);
        buf.truncate(end);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// A listing entry for one file: None when it is not a session ctxlab reads.
pub fn entry_for(path: &Path) -> Option<SessionFile> {
    entry_or_reason(path).ok()
}

/// A listing entry for one file, or why it is none (what a listing says of it).
pub fn entry_or_reason(path: &Path) -> Result<SessionFile, NotListed> {
    entry_from_head(path, PEEK_BYTES)
}

/// `entry_or_reason` from the file's first `limit` bytes only (at most `PEEK_BYTES`): the
/// browser's first look (`tui::sessions::listing`). A recorded project and the start are
/// the first ones the lines give, so once these bytes hold them, more lines do not change
/// them (the title may still change).
pub fn entry_from_head(path: &Path, limit: usize) -> Result<SessionFile, NotListed> {
    let limit = limit.min(PEEK_BYTES);
    let meta = std::fs::metadata(path).map_err(|e| NotListed::Unreadable(e.to_string()))?;
    let head = peek_at_most(path, limit)?;
    if head.trim().is_empty() {
        return Err(if meta.len() == 0 {
            NotListed::Empty
        } else if meta.len() <= limit as u64 {
            NotListed::OnlyBlankLines
        } else {
            NotListed::NoWholeLine { kib: limit / 1024 }
        });
    }
    let format = if head.trim_start().starts_with('[') {
        SessionFormat::MessageArray
    } else {
        let mut json_lines = head
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .peekable();
        if json_lines.peek().is_none() {
            return Err(NotListed::NoJsonLine);
        }
        json_lines
            .find_map(|v| format_of_line(&v))
            .ok_or(NotListed::NoKnownFormat)?
    };
    // The first lines read as a session: the same project and start as the whole file.
    let (numbers, title) = super::parse_session_text(&head)
        .map(|mut s| {
            note_project_folder(&mut s, path);
            (SessionNumbers::of(&s), super::title::first_request(&s))
        })
        .unwrap_or_default();
    Ok(SessionFile {
        path: path.to_path_buf(),
        tool: format.tool(),
        format,
        project: numbers.project,
        project_source: numbers.project_source,
        started: numbers.started,
        size_bytes: meta.len(),
        modified: meta.modified().ok(),
        title,
        archived: is_archived(path),
    })
}

/// A Claude Code session's subagent files: `<session>/subagents/*.jsonl` beside it, and
/// the older `agent-*.jsonl` in its folder whose lines name the session.
pub fn claude_subagent_files(path: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return out;
    };
    if let Ok(read) = std::fs::read_dir(dir.join(stem).join("subagents")) {
        let mut files: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        out.extend(files);
    }
    let Some(id) = session_id else {
        return out;
    };
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"))
    {
        return out;
    }
    if let Ok(read) = std::fs::read_dir(dir) {
        let mut files: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
            })
            .filter(|p| first_session_id(p).as_deref() == Some(id))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

fn first_session_id(path: &Path) -> Option<String> {
    let head = peek(path)?;
    head.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| {
            v.get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_own_variable_wins_over_home() {
        let roots = roots_from(Some("/cfg/claude".into()), None, Some("/home/u".into()));
        assert_eq!(
            roots,
            vec![
                Root {
                    tool: Tool::ClaudeCode,
                    path: "/cfg/claude/projects".into()
                },
                Root {
                    tool: Tool::Codex,
                    path: "/home/u/.codex/sessions".into()
                },
                Root {
                    tool: Tool::Codex,
                    path: "/home/u/.codex/archived_sessions".into()
                },
            ]
        );
        assert!(roots_from(None, None, None).is_empty());
        let empty = roots_from(Some("".into()), Some("/c".into()), None);
        assert_eq!(empty.len(), 2);
        assert_eq!(empty[0].path, PathBuf::from("/c/sessions"));
        assert_eq!(empty[1].path, PathBuf::from("/c/archived_sessions"));
        assert!(is_archived(&empty[1].path.join("rollout-1.jsonl")));
        assert!(!is_archived(&empty[0].path.join("rollout-1.jsonl")));
    }

    #[test]
    fn subagent_files_are_not_listed_alone() {
        assert!(is_subagent_file(Path::new("/p/x/subagents/agent-1.jsonl")));
        assert!(is_subagent_file(Path::new("/p/agent-1.jsonl")));
        assert!(!is_subagent_file(Path::new("/p/abc.jsonl")));
    }

    /// The listing prints these reasons after "skipped: ", and the cache keeps them: each
    /// typed reason says the words it said as text, and survives the cache's round trip.
    #[test]
    fn why_a_file_is_not_listed_reads_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let empty = entry_or_reason(&write("empty.jsonl", b"")).unwrap_err();
        assert_eq!(empty, NotListed::Empty);
        assert_eq!(
            empty.to_string(),
            super::super::SessionError::Empty.to_string()
        );
        let blank = entry_or_reason(&write("blank.jsonl", b"\n  \n")).unwrap_err();
        assert_eq!(blank.to_string(), "not a session: only blank lines");
        let long = write("long.jsonl", &vec![b'x'; 8 * 1024]);
        let cut = entry_from_head(&long, 4 * 1024).unwrap_err();
        assert_eq!(cut, NotListed::NoWholeLine { kib: 4 });
        assert_eq!(
            cut.to_string(),
            "not a session: no whole line in its first 4 KiB"
        );
        let gone = entry_or_reason(&dir.path().join("gone.jsonl")).unwrap_err();
        assert!(matches!(gone, NotListed::Unreadable(_)), "{gone:?}");
        let kept: NotListed = serde_json::from_str(&serde_json::to_string(&cut).unwrap()).unwrap();
        assert_eq!(kept, cut);
        assert_eq!(
            skipped(long, &cut).message,
            "skipped: not a session: no whole line in its first 4 KiB"
        );
    }
}
