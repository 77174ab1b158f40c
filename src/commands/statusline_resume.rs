//! The status line's "N at risk", carried on from where the previous run stopped
//! (docs/forgot.md). Claude Code runs the status line after each answer, so the usual run
//! finds a few lines more than the last one: instead of reading and parsing the whole tail
//! since the last compaction again, it parses only the lines appended and adds their facts
//! to the ones the last run remembered, the same count a full count of the tail gives.
//!
//! The facts `forgot::at_risk` counts are those of `facts::Extractor`, which reads the tail
//! from its end back, keeps the first item of each key, takes only the latest plan and
//! stops at `MAX_FACTS`; `facts::check` then merges the spellings of one file. So the
//! remembered facts are kept in the order the extractor met them: the appended lines'
//! facts come first, then the remembered ones not seen among them (without their pending
//! items when the new lines set a plan), and the merge and count run on that list as on a
//! full count's. A result in the new lines may answer a call read before: the calls whose
//! results are read as task documents are remembered with the facts.
//!
//! The lines are counted on their own only when that cannot differ from counting them with
//! the rest (otherwise the tail is counted whole): no compaction among them (it moves the
//! tail's start), every line naming its parent names the line before it (a rewind would
//! take earlier messages out of the conversation), the facts under the cap, the bytes
//! counted before still the same (their first and last KBs' digest). A tail longer than
//! the cap was counted from the first line within the cap's last bytes ("N+"); it goes on
//! from there, so its count covers at least those bytes (still a part of the tail: "N+").
//! Tool ids are taken as never reused (Claude Code's are random).

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};

use serde::{Deserialize, Serialize};

use crate::forgot::at_risk::since_last_compaction;
use crate::forgot::carry::Reference;
use crate::forgot::facts::{Extractor, Fact, FactKind, Known, MAX_FACTS, check, dedup_key};
use crate::forgot::parts::{Part, PartKind, Target, parts_of, tool_names};
use crate::forgot::task_text::task_document;
use crate::session::model::SessionFormat;
use crate::session::{Session, parse_session_text};

/// Appended bytes counted on their own at most; more is counted with the whole tail.
pub const MAX_APPENDED: u64 = 4 << 20;
/// Task-document calls remembered at most (past it, no resume).
const MAX_TASK_CALLS: usize = 256;
/// Bytes at each end of the counted bytes whose digest tells they are unchanged.
const CHECKED_BYTES: u64 = 4096;

/// A call whose result is read as a task document, as its target says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaskCall {
    Read(String),
    Ran(String),
}

/// What a later run goes on from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    /// The file offset the counted bytes start at: the tail's start, or for a tail longer
    /// than the cap, the first line within it when it was counted whole.
    pub start: u64,
    /// The tail was cut at the cap: the count is of the bytes from `start` only ("N+").
    pub cut: bool,
    /// The file offset the counted bytes end at (after the last whole line).
    pub upto: u64,
    /// A digest of the counted bytes' first and last `CHECKED_BYTES`.
    check: String,
    /// The `uuid` of the last line that had one.
    last_uuid: Option<String>,
    /// The facts, in the order the extractor met them (nearest the end first), each once.
    facts: Vec<(FactKind, String)>,
    /// Calls by id whose results are read as task documents.
    task_calls: Vec<(String, TaskCall)>,
}

/// The count of a tail parsed whole (`s`, from `body`: the lines read from file offset
/// `start`; `cut`: the tail's start was before it) and what a later run goes on from (None
/// when it cannot).
pub fn count_whole(s: &Session, start: u64, body: &[u8], cut: bool) -> (usize, Option<Resume>) {
    let parts = conversation_parts(s);
    let Some((count, facts)) = extend(&[], &[], &parts) else {
        return (full_count(&parts), None);
    };
    let resume = (|| {
        let whole = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
        let body = &body[..whole];
        let mut last = None;
        if !chained(body, &mut last, true) {
            return None;
        }
        let (a, b) = ends(body);
        Some(Resume {
            start,
            cut,
            upto: start + whole as u64,
            check: digest(a, b),
            last_uuid: last,
            facts,
            task_calls: task_calls(&[], &parts)?,
        })
    })();
    (count, resume)
}

/// The parts `forgot::at_risk` reads in `s`: its conversation since the last compaction,
/// as `forgot::analyze` cuts it.
fn conversation_parts(s: &Session) -> Vec<Part> {
    let numbered = since_last_compaction(s);
    let names = tool_names(numbered.iter().map(|n| &n.message));
    numbered.iter().flat_map(|n| parts_of(n, &names)).collect()
}

/// The count of `parts` when the extractor reached its cap: the facts nearest the end.
fn full_count(parts: &[Part]) -> usize {
    let refs: Vec<&Part> = parts.iter().collect();
    let ex = Extractor::new(&refs).run(&refs);
    not_carried(ex.items)
}

/// Facts `forgot::at_risk` counts: the ones an empty summary does not carry (its
/// `analyze` with the summary "" and nothing kept).
fn not_carried(facts: Vec<Fact>) -> usize {
    check(facts, &Reference::new(std::iter::once("")), Known::Yes)
        .iter()
        .filter(|f| f.not_carried())
        .count()
}

fn fact(kind: FactKind, text: &str) -> Fact {
    Fact {
        kind,
        text: text.to_string(),
        carried: Some(false),
        message: None,
        role: "",
        from: String::new(),
        command: None,
        seen: 1,
    }
}

fn call_part(id: &str, call: &TaskCall) -> Part {
    Part {
        message: None,
        role: "assistant",
        kind: PartKind::ToolCall(String::new()),
        text: String::new(),
        tool_id: Some(id.to_string()),
        target: Some(match call {
            TaskCall::Read(p) => Target::Read(p.clone()),
            TaskCall::Ran(c) => Target::Ran(c.clone()),
        }),
        failed: false,
    }
}

/// The facts of `parts` (the newest) added to `known` (met before, in order), with the
/// calls `calls` known before; None when the extractor's cap is near (the count is then
/// made afresh). Returns the count and the facts in order.
fn extend(
    known: &[(FactKind, String)],
    calls: &[(String, TaskCall)],
    parts: &[Part],
) -> Option<(usize, Vec<(FactKind, String)>)> {
    let remembered: Vec<Part> = calls.iter().map(|(id, c)| call_part(id, c)).collect();
    let lookup: Vec<&Part> = remembered.iter().chain(parts.iter()).collect();
    let refs: Vec<&Part> = parts.iter().collect();
    let ex = Extractor::new(&lookup).run(&refs);
    if ex.unchecked_through.is_some() {
        return None;
    }
    let took_plan = ex.took_plan();
    let mut seen: HashSet<(FactKind, String)> = ex
        .items
        .iter()
        .map(|f| (f.kind, dedup_key(f.kind, &f.text)))
        .collect();
    let mut facts = ex.items;
    for (kind, text) in known {
        // A newer plan supersedes the one met before.
        if took_plan && *kind == FactKind::Pending {
            continue;
        }
        if seen.insert((*kind, dedup_key(*kind, text))) {
            facts.push(fact(*kind, text));
        }
    }
    // A full count's extractor would have stopped at the cap: count afresh near it.
    if facts.len() >= MAX_FACTS {
        return None;
    }
    let order = facts.iter().map(|f| (f.kind, f.text.clone())).collect();
    Some((not_carried(facts), order))
}

/// The task-document calls among `parts`, added to `known` (a later one wins).
fn task_calls(known: &[(String, TaskCall)], parts: &[Part]) -> Option<Vec<(String, TaskCall)>> {
    let mut out: Vec<(String, TaskCall)> = known.to_vec();
    for p in parts {
        let (PartKind::ToolCall(_), Some(id), Some(target)) = (&p.kind, &p.tool_id, &p.target)
        else {
            continue;
        };
        if task_document(target).is_none() {
            continue;
        }
        let call = match target {
            Target::Read(path) => TaskCall::Read(path.clone()),
            Target::Ran(cmd) => TaskCall::Ran(cmd.clone()),
            Target::Changed(_) => continue,
        };
        out.retain(|(i, _)| i != id);
        out.push((id.clone(), call));
    }
    (out.len() <= MAX_TASK_CALLS).then_some(out)
}

/// A line's place in Claude Code's chain of lines.
#[derive(Deserialize)]
struct Link {
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Whether every line of `bytes` (whole lines) that names a parent names the line before it,
/// starting after `last` (the last line with a `uuid` before them; None: the first such
/// line may name any parent, or none: a compaction's boundary starts a chain). Updates
/// `last`. A line that cannot be read this way, or a message line without a `uuid`, is no
/// chain.
fn chained(bytes: &[u8], last: &mut Option<String>, first_free: bool) -> bool {
    let mut free = first_free;
    for line in bytes.split(|b| *b == b'\n') {
        // Request records hold no uuid (and are tens of KB): not read.
        if line.iter().all(u8::is_ascii_whitespace) || super::is_record(line) {
            continue;
        }
        let Ok(link) = serde_json::from_slice::<Link>(line) else {
            return false;
        };
        let Some(uuid) = link.uuid else {
            if matches!(link.kind.as_deref(), Some("user" | "assistant" | "system")) {
                return false;
            }
            continue;
        };
        if !free && (link.parent.is_none() || link.parent != *last) {
            return false;
        }
        free = false;
        *last = Some(uuid);
    }
    true
}

fn digest(first: &[u8], last: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(first);
    h.update(last);
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The ends of `body` (the counted bytes) as `digest` reads them.
fn ends(body: &[u8]) -> (&[u8], &[u8]) {
    let n = body.len();
    let k = usize::try_from(CHECKED_BYTES).unwrap_or(n).min(n);
    (&body[..k], &body[n - k..])
}

/// The digest of the bytes from `from` to `end` of `file`, as `ends` reads them.
fn ends_of(file: &mut std::fs::File, from: u64, end: u64) -> Option<String> {
    let k = usize::try_from(CHECKED_BYTES.min(end.checked_sub(from)?)).ok()?;
    let mut first = vec![0u8; k];
    let mut last = vec![0u8; k];
    file.seek(SeekFrom::Start(from)).ok()?;
    file.read_exact(&mut first).ok()?;
    file.seek(SeekFrom::Start(end - k as u64)).ok()?;
    file.read_exact(&mut last).ok()?;
    Some(digest(&first, &last))
}

/// The count of the tail from `known.start` to `len` in `file`, going on from `known`; None
/// when it cannot (the tail is then counted whole).
pub fn go_on(file: &mut std::fs::File, len: u64, known: &Resume) -> Option<(usize, Resume)> {
    if known.upto < known.start || known.upto > len || len - known.upto > MAX_APPENDED {
        return None;
    }
    let from = known.start;
    // The bytes counted before are still the same (a replaced or rewritten file is not).
    if ends_of(file, from, known.upto)? != known.check {
        return None;
    }
    let mut appended = Vec::new();
    file.seek(SeekFrom::Start(known.upto)).ok()?;
    (&mut *file)
        .take(len - known.upto)
        .read_to_end(&mut appended)
        .ok()?;
    let whole = memchr::memrchr(b'\n', &appended).map_or(0, |i| i + 1);
    let appended = &appended[..whole];
    // A compaction moves the tail's start (the index's next run sees it): count afresh.
    if memchr::memmem::find(appended, b"compact_boundary").is_some()
        || memchr::memmem::find(appended, b"isCompactSummary").is_some()
    {
        return None;
    }
    let mut last_uuid = known.last_uuid.clone();
    if !chained(appended, &mut last_uuid, known.last_uuid.is_none()) {
        return None;
    }
    let text = super::kept_text(appended);
    let parts = if text.trim().is_empty() {
        Vec::new()
    } else {
        let s = parse_session_text(&text).ok()?;
        if s.format != SessionFormat::ClaudeCode || !s.compactions.is_empty() {
            return None;
        }
        conversation_parts(&s)
    };
    let (count, facts) = extend(&known.facts, &known.task_calls, &parts)?;
    let upto = known.upto + whole as u64;
    Some((
        count,
        Resume {
            start: from,
            cut: known.cut,
            upto,
            check: ends_of(file, from, upto)?,
            last_uuid,
            facts,
            task_calls: task_calls(&known.task_calls, &parts)?,
        },
    ))
}
