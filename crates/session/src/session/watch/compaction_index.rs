//! A status line's memory of a Claude Code transcript: how many compactions the whole file
//! holds, the last one's figures, and where the last model call and the last compaction
//! sit, kept per path in `statusline-index.json` of the data dir and extended from the
//! byte where the previous run stopped. So the count covers the whole session whatever was
//! written since, and a run reads only what is new (docs/architecture.md, "Files ctxlab
//! writes").
//!
//! The scan looks for the bytes `compact_boundary` and `"type":"assistant"` (memchr's
//! substring search, no JSON parse of the rest) and parses only the candidate lines, so a
//! tool output that merely quotes those words is not counted. A run scans at most
//! `SCAN_BYTES_PER_RUN` and says whether it reached the end; a file that shrank, or whose
//! first bytes changed, is a new file and is scanned again from its start. The index file
//! is ctxlab's own but read as outside input: capped in size and entries, and one that
//! does not parse is an empty index.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::SessionError;
use crate::session::open::open_regular_any_size;

/// The index's name in the data dir.
pub const FILE_NAME: &str = "statusline-index.json";
/// An index file larger than this is not read (and is replaced).
const MAX_INDEX_BYTES: u64 = 4 << 20;
/// Transcripts remembered at most; past it the ones seen longest ago go.
const MAX_ENTRIES: usize = 256;
/// Bytes one run scans at most: 64 MiB took 40-250 ms on a warm page cache of a loaded
/// two-core machine. A larger backlog (a long session met for the first time) is finished
/// by the following runs, the line saying "counting" meanwhile.
pub const SCAN_BYTES_PER_RUN: u64 = 64 << 20;
/// Bytes read at a time.
const CHUNK_BYTES: usize = 8 << 20;
/// A candidate line longer than this is not parsed (no boundary or call line is near it).
const MAX_CANDIDATE_LINE: usize = 4 << 20;
/// Bytes of the file's start that identify it (a replaced file has other first bytes).
const HEAD_BYTES: usize = 4096;
const FORMAT: &str = "ctxlab-statusline-index";
const VERSION: u32 = 1;

/// One compaction as the boundary line records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedCompaction {
    /// Byte offset of its boundary line.
    pub offset: u64,
    pub trigger: Option<String>,
    pub pre_tokens: Option<u64>,
    pub post_tokens: Option<u64>,
}

/// What the index knows of one transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptIndex {
    /// Bytes scanned from the start (always the end of a whole line).
    pub scanned: u64,
    /// A digest of the first `head_len` bytes, to tell a replaced file.
    head: String,
    head_len: usize,
    pub compactions: u64,
    pub last_compaction: Option<IndexedCompaction>,
    /// `preTokens` of the last automatic compaction: where the agent compacts by itself (a
    /// manual one says nothing of that).
    pub last_auto_pre_tokens: Option<u64>,
    /// Byte offset of the last assistant line with usage (a model call), if any.
    pub last_call: Option<u64>,
    /// Unix seconds of the last use, for the entry cap.
    seen: u64,
}

impl TranscriptIndex {
    /// Whether the last compaction came after the last model call: the context is then the
    /// compaction's `postTokens`, not the last call's usage.
    pub fn compacted_since_last_call(&self) -> Option<&IndexedCompaction> {
        let c = self.last_compaction.as_ref()?;
        match self.last_call {
            Some(call) if call > c.offset => None,
            _ => Some(c),
        }
    }
}

/// The scan of one transcript: its index after this run, and whether it reached the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub index: TranscriptIndex,
    pub complete: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct IndexFile {
    format: String,
    version: u32,
    entries: BTreeMap<String, TranscriptIndex>,
}

fn head_digest(head: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(head);
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Extends `known` (the index of an earlier run, or the default) over what `path` holds now,
/// scanning at most `budget` bytes.
pub fn scan(path: &Path, known: TranscriptIndex, budget: u64) -> Result<Scanned, SessionError> {
    let mut opened = open_regular_any_size(path)?;
    let len = opened.len;
    let mut head = vec![0u8; HEAD_BYTES.min(usize::try_from(len).unwrap_or(HEAD_BYTES))];
    opened
        .file
        .read_exact(&mut head)
        .map_err(SessionError::Read)?;
    // A file that shrank, or whose first bytes changed, was replaced: start again.
    let same_file = !known.head.is_empty()
        && known.scanned <= len
        && known.head_len <= head.len()
        && head_digest(&head[..known.head_len]) == known.head;
    let mut index = if same_file {
        known
    } else {
        TranscriptIndex::default()
    };
    index.head = head_digest(&head);
    index.head_len = head.len();
    index.seen = now_secs();
    opened
        .file
        .seek(SeekFrom::Start(index.scanned))
        .map_err(SessionError::Read)?;
    let stop = len.min(index.scanned.saturating_add(budget));
    let mut pending: Vec<u8> = Vec::new();
    let mut pending_from = index.scanned;
    let mut pos = index.scanned;
    let mut chunk = vec![0u8; CHUNK_BYTES];
    while pos < stop {
        let want = usize::try_from((stop - pos).min(CHUNK_BYTES as u64)).unwrap_or(CHUNK_BYTES);
        let got = opened
            .file
            .read(&mut chunk[..want])
            .map_err(SessionError::Read)?;
        if got == 0 {
            break;
        }
        pos += got as u64;
        pending.extend_from_slice(&chunk[..got]);
        // Only whole lines are scanned; the rest waits for the next chunk or run.
        let Some(last_nl) = memchr::memrchr(b'\n', &pending) else {
            if pending.len() > MAX_CANDIDATE_LINE {
                // A line this long holds no boundary: drop what was read of it.
                pending_from += pending.len() as u64;
                pending.clear();
            }
            continue;
        };
        scan_lines(&pending[..=last_nl], pending_from, &mut index);
        pending_from += (last_nl + 1) as u64;
        pending.drain(..=last_nl);
    }
    index.scanned = pending_from.min(len);
    Ok(Scanned {
        complete: index.scanned >= len || (pos >= len && !pending.is_empty()),
        index,
    })
}

/// Finds the boundary and call lines in `bytes` (whole lines starting at file offset `base`).
fn scan_lines(bytes: &[u8], base: u64, index: &mut TranscriptIndex) {
    let line_at = |hit: usize| -> (usize, usize) {
        let start = memchr::memrchr(b'\n', &bytes[..hit]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i);
        (start, end)
    };
    let mut boundary_lines = Vec::new();
    for hit in memchr::memmem::find_iter(bytes, b"compact_boundary") {
        let (start, end) = line_at(hit);
        if boundary_lines.last() != Some(&start) {
            boundary_lines.push(start);
            if end - start <= MAX_CANDIDATE_LINE
                && let Some(c) = boundary(&bytes[start..end], base + start as u64)
            {
                index.compactions += 1;
                if c.trigger.as_deref() == Some("auto") && c.pre_tokens.is_some() {
                    index.last_auto_pre_tokens = c.pre_tokens;
                }
                index.last_compaction = Some(c);
            }
        }
    }
    // Only the last model call matters: look from the end, a few candidates at most.
    let calls: Vec<usize> = memchr::memmem::find_iter(bytes, b"\"type\":\"assistant\"").collect();
    for &hit in calls.iter().rev().take(16) {
        let (start, end) = line_at(hit);
        if end - start <= MAX_CANDIDATE_LINE && is_call(&bytes[start..end]) {
            index.last_call = Some(base + start as u64);
            break;
        }
    }
}

fn boundary(line: &[u8], offset: u64) -> Option<IndexedCompaction> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let subtype = v.get("subtype").and_then(Value::as_str)?;
    if v.get("type").and_then(Value::as_str) != Some("system")
        || !matches!(subtype, "compact_boundary" | "microcompact_boundary")
        || v.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let meta = v
        .get("compactMetadata")
        .or_else(|| v.get("microcompactMetadata"));
    let number = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_u64);
    Some(IndexedCompaction {
        offset,
        trigger: meta
            .and_then(|m| m.get("trigger"))
            .and_then(Value::as_str)
            .map(|t| t.chars().take(32).collect()),
        pre_tokens: number("preTokens"),
        post_tokens: number("postTokens"),
    })
}

fn is_call(line: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    v.get("type").and_then(Value::as_str) == Some("assistant")
        && v.get("isSidechain").and_then(Value::as_bool) != Some(true)
        && v.get("message").and_then(|m| m.get("usage")).is_some()
}

/// The usage of the model call whose line starts at `offset` (input + cache read + cache
/// creation: the context it sent) and its model; None when that line is no call now.
pub fn call_at(path: &Path, offset: u64) -> Option<(u64, Option<String>)> {
    let mut opened = open_regular_any_size(path).ok()?;
    opened.file.seek(SeekFrom::Start(offset)).ok()?;
    let mut line = Vec::new();
    (&mut opened.file)
        .take(MAX_CANDIDATE_LINE as u64)
        .read_to_end(&mut line)
        .ok()?;
    let end = memchr::memchr(b'\n', &line).unwrap_or(line.len());
    let v: Value = serde_json::from_slice(&line[..end]).ok()?;
    let message = v.get("message")?;
    let usage = message.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let model = message
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((
        n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens"),
        model,
    ))
}

/// The index file of `data_dir`, read as outside input: empty when missing, too large or
/// not ours.
fn load(data_dir: &Path) -> IndexFile {
    let path = data_dir.join(FILE_NAME);
    let Ok(opened) = open_regular_any_size(&path) else {
        return IndexFile::default();
    };
    let mut bytes = Vec::new();
    if opened
        .file
        .take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.len() as u64 > MAX_INDEX_BYTES
    {
        return IndexFile::default();
    }
    match serde_json::from_slice::<IndexFile>(&bytes) {
        Ok(f) if f.format == FORMAT && f.version == VERSION => f,
        _ => IndexFile::default(),
    }
}

/// Writes the index whole through a temp file renamed over the old one (mode 0600).
fn save(data_dir: &Path, mut file: IndexFile) -> std::io::Result<()> {
    if file.entries.len() > MAX_ENTRIES {
        let mut by_age: Vec<(u64, String)> = file
            .entries
            .iter()
            .map(|(k, v)| (v.seen, k.clone()))
            .collect();
        by_age.sort();
        for (_, key) in by_age.iter().take(file.entries.len() - MAX_ENTRIES) {
            file.entries.remove(key);
        }
    }
    file.format = FORMAT.to_string();
    file.version = VERSION;
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(data_dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(data_dir)?;
    std::io::Write::write_all(&mut temp, &bytes)?;
    temp.persist(data_dir.join(FILE_NAME))
        .map_err(|e| e.error)?;
    Ok(())
}

/// The transcript's index after scanning what is new, remembered in `data_dir` when given
/// (without one, every run scans from the start, within the same budget).
pub fn indexed(path: &Path, data_dir: Option<&Path>) -> Result<Scanned, SessionError> {
    let key = path.to_string_lossy().into_owned();
    let mut file = data_dir.map(load).unwrap_or_default();
    let known = file.entries.remove(&key).unwrap_or_default();
    let scanned = scan(path, known, SCAN_BYTES_PER_RUN)?;
    if let Some(dir) = data_dir {
        file.entries.insert(key, scanned.index.clone());
        // A status line never fails for its memory: a run that cannot save scans again.
        if let Err(e) = save(dir, file) {
            tracing::debug!("statusline index not saved: {e}");
        }
    }
    Ok(scanned)
}

#[cfg(test)]
#[path = "compaction_index_tests.rs"]
mod tests;
