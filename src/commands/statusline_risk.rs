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
//! Claude Code also runs the status line when nothing was written (a mode change, a
//! refresh): the count is remembered per transcript in `statusline-risk.json` of the data
//! dir with the file's size, mtime and the tail's start, and a run on an unchanged file
//! answers from it instead of reading the tail, parsing it and extracting its facts again
//! (most of what a run near the threshold costs beyond the process's start). That file is ctxlab's own but read as outside input:
//! capped in size and entries; one that does not parse, or another version's (its rules may
//! count otherwise), is an empty memory.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::forgot::at_risk::at_risk;
use crate::session::open::open_regular_any_size;
use crate::session::parse_session_text;

/// Bytes read from the end at most.
pub const TAIL_CAP: u64 = 8 << 20;

/// Line prefixes of Claude Code's request records (the whole system prompt, the tool
/// schemas and each request's messages again, tens of KB a line): never conversation.
const RECORD_PREFIXES: &[&[u8]] = &[b"{\"type\":\"api-request"];
/// An attachment line (reminders, file and prompt snapshots: injected, never conversation)
/// names its `attachment` object within its first bytes (at byte 73 in 2.1.332's lines).
const ATTACHMENT_KEY: &[u8] = b"\"attachment\":{";
const ATTACHMENT_WITHIN: usize = 256;

/// Whether `line` cannot hold a conversation message.
fn passed_over(line: &[u8]) -> bool {
    RECORD_PREFIXES.iter().any(|p| line.starts_with(p))
        || memchr::memmem::find(&line[..line.len().min(ATTACHMENT_WITHIN)], ATTACHMENT_KEY)
            .is_some()
}

/// Facts at risk in `path` from byte `from` (the last compaction's line, 0 without one)
/// to its end; the flag says the tail was cut at `TAIL_CAP`. None: not readable. With a
/// data dir, an unchanged file's count comes from the memory there.
pub fn at_risk_count(path: &Path, from: u64, data_dir: Option<&Path>) -> Option<(usize, bool)> {
    let stamp = Stamp::of(path, from);
    if let (Some(dir), Some(stamp)) = (data_dir, stamp)
        && let Some(count) = remembered(dir, path, stamp)
    {
        return Some(count);
    }
    let count = count_tail(path, from)?;
    // Counted from a file that changed meanwhile: its stamp may not match what was read.
    if let (Some(dir), Some(stamp)) = (data_dir, stamp)
        && Stamp::of(path, from) == Some(stamp)
        && let Err(e) = remember(dir, path, stamp, count)
    {
        tracing::debug!("statusline at-risk memory not saved: {e}");
    }
    Some(count)
}

fn count_tail(path: &Path, from: u64) -> Option<(usize, bool)> {
    let mut opened = open_regular_any_size(path).ok()?;
    let start = from.max(opened.len.saturating_sub(TAIL_CAP));
    let cut = start > from;
    opened.file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    (&mut opened.file)
        .take(opened.len.saturating_sub(start))
        .read_to_end(&mut bytes)
        .ok()?;
    // A cut tail starts inside a line: from the next one.
    let body = if cut {
        let nl = memchr::memchr(b'\n', &bytes)?;
        &bytes[nl + 1..]
    } else {
        &bytes[..]
    };
    let mut kept = Vec::with_capacity(body.len() / 4);
    for line in body.split(|b| *b == b'\n') {
        if passed_over(line) {
            continue;
        }
        kept.extend_from_slice(line);
        kept.push(b'\n');
    }
    // One UTF-8 check for the whole text; invalid bytes are replaced, as line by line.
    let text = match String::from_utf8(kept) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let session = parse_session_text(&text).ok()?;
    Some((at_risk(&session, 1).total, cut))
}

/// The memory's name in the data dir.
pub const MEMORY_FILE: &str = "statusline-risk.json";
/// A memory file larger than this is not read (and is replaced).
const MAX_MEMORY_BYTES: u64 = 256 << 10;
/// Transcripts remembered at most; past it the memory starts over.
const MAX_MEMORY_ENTRIES: usize = 64;
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

/// The count remembered for `path` at `stamp`, if any.
fn remembered(data_dir: &Path, path: &Path, stamp: Stamp) -> Option<(usize, bool)> {
    let file = load(data_dir);
    let e = file.entries.get(path.to_string_lossy().as_ref())?;
    (e.stamp == stamp).then_some((e.count, e.cut))
}

/// Remembers `count` for `path` at `stamp` (through a temp file renamed over the old one).
fn remember(
    data_dir: &Path,
    path: &Path,
    stamp: Stamp,
    count: (usize, bool),
) -> std::io::Result<()> {
    let mut file = load(data_dir);
    if file.entries.len() >= MAX_MEMORY_ENTRIES {
        file.entries.clear();
    }
    file.format = MEMORY_FORMAT.to_string();
    file.version = env!("CARGO_PKG_VERSION").to_string();
    file.entries.insert(
        path.to_string_lossy().into_owned(),
        Entry {
            stamp,
            count: count.0,
            cut: count.1,
        },
    );
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
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
mod tests {
    use super::*;

    /// On a session the real Claude Code 2.1.332 wrote: every request record and attachment
    /// line is passed over, no line of the conversation is.
    #[test]
    fn only_records_and_attachments_are_passed_over() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sessions/claude_code_2_1_332.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let mut over = 0;
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let kind = v["type"].as_str().unwrap_or("");
            let skipped = passed_over(line.as_bytes());
            if kind == "attachment" || kind.starts_with("api-request") {
                assert!(skipped, "{kind}: {}", &line[..line.len().min(200)]);
                over += 1;
            }
            if matches!(kind, "user" | "assistant" | "system") {
                assert!(!skipped, "{kind}: {}", &line[..line.len().min(200)]);
            }
        }
        assert!(over > 10, "{over}");
    }

    /// A run on an unchanged file answers from the memory (here made to say 999, which no
    /// count of this file is); once the file grows, the tail is counted again.
    #[test]
    fn an_unchanged_file_is_answered_from_the_memory_and_a_changed_one_counted_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forgot/eval_claude.jsonl");
        std::fs::copy(&fixture, &path).unwrap();
        let data = dir.path().join("data");
        let counted = at_risk_count(&path, 0, Some(&data)).unwrap();
        assert!(counted.0 > 0, "{counted:?}");
        assert_eq!(count_tail(&path, 0), Some(counted));
        let stamp = Stamp::of(&path, 0).unwrap();
        assert_eq!(remembered(&data, &path, stamp), Some(counted));
        remember(&data, &path, stamp, (999, false)).unwrap();
        assert_eq!(at_risk_count(&path, 0, Some(&data)), Some((999, false)));
        // Another tail start is another count.
        assert_eq!(remembered(&data, &path, Stamp { from: 1, ..stamp }), None);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"type\":\"progress\"}\n").unwrap();
        drop(f);
        assert_eq!(at_risk_count(&path, 0, Some(&data)), count_tail(&path, 0));
        assert_ne!(at_risk_count(&path, 0, Some(&data)), Some((999, false)));
        // A memory written by another version, or not ours, is empty.
        std::fs::write(data.join(MEMORY_FILE), b"not json").unwrap();
        assert_eq!(remembered(&data, &path, Stamp::of(&path, 0).unwrap()), None);
    }
}
