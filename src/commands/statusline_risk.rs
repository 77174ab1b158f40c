//! The status line's "N at risk" (docs/forgot.md): once the context is within the set
//! distance of Claude Code's threshold, how many facts a compaction now would have to
//! carry, by `forgot::at_risk`'s rules (those of `watch --text` and the live view). The
//! status line has a budget of milliseconds, so this reads only the tail: from the last
//! compaction the status line's index records (its summary and what came after: the
//! messages the next compaction would summarise), at most `TAIL_CAP` bytes from the end,
//! and only the lines that may hold the conversation: Claude Code's request records and
//! attachments (most of a 2.1.332 file's bytes: the system prompt, the tool schemas and the
//! reminders again and again) are passed over unparsed; the rules look at the conversation
//! only. A cut tail says "N+".
//!
//! Claude Code runs the status line after each answer, and also when nothing was written (a
//! mode change, a refresh): the count is remembered per transcript in
//! `statusline-risk.json` of the data dir with the file's size, mtime and the tail's
//! start, and a run on an unchanged file answers from it; a run that finds lines appended
//! counts only those and carries the count on (`resume`, the same count as the whole
//! tail's). That file is ctxlab's own but read as outside input: capped in size and
//! entries; one that does not parse, or another version's (its rules may count
//! otherwise), is an empty memory.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::session::open::open_regular_any_size;
use crate::session::parse_session_text;

#[path = "statusline_resume.rs"]
mod resume;

/// Bytes read from the end at most.
pub const TAIL_CAP: u64 = 8 << 20;

// The lines that may hold the conversation: the filter `watch`'s warning reads with too.
use crate::session::watch::since::conversation_text as kept_text;
pub use crate::session::watch::since::{is_record, passed_over};

/// Facts at risk in `path` from byte `from` (the last compaction's line, 0 without one)
/// to its end; the flag says the tail was cut at `TAIL_CAP`. None: not readable. With a
/// data dir, an unchanged file's count comes from the memory there, and a file that grew
/// by a few lines is counted on from where the last run stopped (`resume`).
pub fn at_risk_count(path: &Path, from: u64, data_dir: Option<&Path>) -> Option<(usize, bool)> {
    let stamp = Stamp::of(path, from);
    let mut memory = data_dir.map(load).unwrap_or_default();
    let key = path.to_string_lossy().into_owned();
    let known = memory.entries.remove(&key);
    if let (Some(e), Some(stamp)) = (&known, stamp)
        && e.stamp == stamp
    {
        return Some((e.count, e.cut));
    }
    let mut opened = open_regular_any_size(path).ok()?;
    let resumed = known
        .as_ref()
        .filter(|e| e.stamp.from == from)
        .and_then(|e| e.resume.as_ref())
        .filter(|r| r.start >= from)
        .and_then(|r| resume::go_on(&mut opened.file, opened.len, r));
    let (count, cut, resume) = match resumed {
        Some((n, r)) => (n, r.cut, Some(r)),
        None => count_tail(&mut opened.file, opened.len, from)?,
    };
    // Counted from a file that changed meanwhile: its stamp may not match what was read.
    if let (Some(dir), Some(stamp)) = (data_dir, stamp)
        && Stamp::of(path, from) == Some(stamp)
    {
        let entry = Entry {
            stamp,
            count,
            cut,
            resume,
        };
        if let Err(e) = save(dir, memory, key, entry) {
            tracing::debug!("statusline at-risk memory not saved: {e}");
        }
    }
    Some((count, cut))
}

/// The count of the tail of `file` (`len` bytes) read whole from `from`, whether it was
/// cut, and what a later run goes on from.
fn count_tail(
    file: &mut std::fs::File,
    len: u64,
    from: u64,
) -> Option<(usize, bool, Option<resume::Resume>)> {
    let start = from.max(len.saturating_sub(TAIL_CAP));
    let cut = start > from;
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(len.saturating_sub(start))
        .read_to_end(&mut bytes)
        .ok()?;
    // A cut tail starts inside a line: from the next one.
    let skip = if cut {
        memchr::memchr(b'\n', &bytes)? + 1
    } else {
        0
    };
    let body = &bytes[skip..];
    let session = parse_session_text(&kept_text(body)).ok()?;
    let (count, resume) = resume::count_whole(&session, start + skip as u64, body, cut);
    Some((count, cut, resume))
}

/// The memory's name in the data dir.
pub const MEMORY_FILE: &str = "statusline-risk.json";
/// A memory file larger than this is not read (and is replaced). A transcript's entry
/// holds its facts (at most `MAX_FACTS` of `MAX_FACT_CHARS`: under 100 KB).
const MAX_MEMORY_BYTES: u64 = 1 << 20;
/// Transcripts remembered at most; past it the memory starts over.
const MAX_MEMORY_ENTRIES: usize = 32;
const MEMORY_FORMAT: &str = "ctxlab-statusline-risk";

/// What a count was made from: a file that differs in any of these is counted again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub len: u64,
    pub mtime_ns: u128,
    /// The tail's start (the last compaction's line).
    pub from: u64,
}

impl Stamp {
    /// `path`'s stamp now; None when its metadata cannot be read.
    pub fn of(path: &Path, from: u64) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let mtime_ns = meta
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(Stamp {
            len: meta.len(),
            mtime_ns,
            from,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    stamp: Stamp,
    count: usize,
    cut: bool,
    /// What the next run goes on from (none when it cannot).
    #[serde(default)]
    resume: Option<resume::Resume>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RiskFile {
    format: String,
    /// ctxlab's version: another one's rules may count otherwise.
    version: String,
    entries: BTreeMap<String, Entry>,
}

fn load(data_dir: &Path) -> RiskFile {
    let Ok(opened) = open_regular_any_size(&data_dir.join(MEMORY_FILE)) else {
        return RiskFile::default();
    };
    let mut bytes = Vec::new();
    if opened
        .file
        .take(MAX_MEMORY_BYTES + 1)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.len() as u64 > MAX_MEMORY_BYTES
    {
        return RiskFile::default();
    }
    match serde_json::from_slice::<RiskFile>(&bytes) {
        Ok(f) if f.format == MEMORY_FORMAT && f.version == env!("CARGO_PKG_VERSION") => f,
        _ => RiskFile::default(),
    }
}

/// Writes the memory whole with `entry` for `key` (through a temp file renamed over the old
/// one). Past the caps it starts over with that entry only.
fn save(data_dir: &Path, mut file: RiskFile, key: String, entry: Entry) -> std::io::Result<()> {
    file.format = MEMORY_FORMAT.to_string();
    file.version = env!("CARGO_PKG_VERSION").to_string();
    if file.entries.len() >= MAX_MEMORY_ENTRIES {
        file.entries.clear();
    }
    file.entries.insert(key.clone(), entry);
    let mut bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    if bytes.len() as u64 > MAX_MEMORY_BYTES {
        file.entries.retain(|k, _| *k == key);
        bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    }
    std::fs::create_dir_all(data_dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(data_dir)?;
    std::io::Write::write_all(&mut temp, &bytes)?;
    temp.persist(data_dir.join(MEMORY_FILE))
        .map_err(|e| e.error)?;
    Ok(())
}

/// The part of the status line: "N at risk" (`N+` when cut), nothing when none.
pub fn part(count: usize, cut: bool) -> Option<String> {
    (count > 0).then(|| format!("{count}{} at risk", if cut { "+" } else { "" }))
}

#[cfg(test)]
#[path = "statusline_risk_tests.rs"]
mod tests;
