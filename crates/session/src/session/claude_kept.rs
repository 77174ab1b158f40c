//! What a Claude Code compaction boundary records as kept (`preservedSegment`, or the
//! newer `preservedMessages`), held while the file is read and resolved into each
//! compaction's kept messages once every line is in (docs/forgot.md). `claude.rs` reads
//! the boundaries; this file only resolves them.

use super::assemble::Builder;
use super::model::{KeptMessage, MessageKind};

/// What a compaction's boundary records as kept, resolved once every line is read.
pub(super) struct Preserved {
    pub(super) compaction: usize,
    pub(super) line: usize,
    pub(super) what: PreservedKind,
}

/// The two ways a boundary names its kept messages (docs/forgot.md).
pub(super) enum PreservedKind {
    /// `preservedSegment`: the messages from the head's line to the tail's, in order.
    Segment { head: String, tail: String },
    /// `preservedMessages.uuids`: the kept messages' line uuids (it supersedes the segment
    /// where both are written).
    Uuids(Vec<String>),
}

/// Each boundary's kept messages set on its compaction, or a warning on its line when the
/// file does not hold what it names (then nothing is claimed kept).
pub(super) fn resolve_kept(builder: &mut Builder, preserved: Vec<Preserved>) {
    for p in preserved {
        resolve_one(builder, &p);
    }
}

/// One boundary's kept messages, as `resolve_kept` sets them.
pub(super) fn resolve_one(builder: &mut Builder, p: &Preserved) {
    let (kept, what) = match &p.what {
        PreservedKind::Segment { head, tail } => (
            segment_indices(builder, head, tail),
            "the compaction's preserved segment names lines that are not in the file",
        ),
        PreservedKind::Uuids(uuids) => (
            uuid_indices(builder, p.line, uuids),
            "the compaction's preserved messages name no message line of the file",
        ),
    };
    // Messages a streamed read let go of come before the ones it holds (`claude_windows`
    // resolves a boundary only when every message it names is held).
    let gone = builder.forgotten();
    let s = &mut builder.session;
    match kept {
        Some(indices) => {
            let kept = indices
                .into_iter()
                .filter_map(|i| {
                    let at = i.checked_sub(gone)?;
                    let info = s.info.get(at)?;
                    (info.kind != MessageKind::CompactSummary).then(|| KeptMessage {
                        message: s.messages[at].clone(),
                        from: Some(i),
                    })
                })
                .collect();
            s.compactions[p.compaction].kept = Some(kept);
        }
        None => {
            s.compactions[p.compaction].kept = None;
            builder.warn(p.line, what);
        }
    }
}

/// The uuids a boundary names.
pub(super) fn named(p: &Preserved) -> Vec<&str> {
    match &p.what {
        PreservedKind::Segment { head, tail } => vec![head.as_str(), tail.as_str()],
        PreservedKind::Uuids(uuids) => uuids.iter().map(String::as_str).collect(),
    }
}

/// Whether the boundary resolves now as it would once the whole file is read: every uuid
/// it names that is a line already read is a line of a message held, and one not found is
/// not one whose entry was let go of. A streamed read (`claude_windows`) asks before it
/// resolves one, and watches the uuids for a later line: one not read yet must stay so to
/// the end (a whole read would find it).
pub(super) fn resolves_now(b: &Builder, p: &Preserved) -> bool {
    let held = b.forgotten()..b.end();
    let dropped = b.uuid_index.dropped_some();
    named(p).into_iter().all(|u| match b.uuid_index.get(u) {
        Some(i) => held.contains(&i),
        None => !dropped,
    })
}

/// The messages from the segment's head line to its tail line; None when either is not
/// a message line of the file.
fn segment_indices(b: &Builder, head: &str, tail: &str) -> Option<Vec<usize>> {
    let h = b.uuid_index.get(head)?;
    let t = b.uuid_index.get(tail)?;
    (h <= t && t < b.end()).then(|| (h..=t).collect())
}

/// The messages holding the listed lines, in order, each once (an answer split over
/// several lines is one message; a line that is no message, an attachment, stands for the
/// message it hangs after). A uuid that is no line of the file is passed over with a
/// warning; None when no listed uuid is found at all, so nothing is claimed kept.
fn uuid_indices(b: &mut Builder, line: usize, uuids: &[String]) -> Option<Vec<usize>> {
    let len = b.end();
    let found: std::collections::BTreeSet<usize> = uuids
        .iter()
        .filter_map(|u| b.uuid_index.get(u))
        .filter(|&i| i < len)
        .collect();
    let missing = uuids.iter().filter(|u| !b.uuid_index.contains(u)).count();
    if found.is_empty() && !uuids.is_empty() {
        return None;
    }
    if missing > 0 {
        b.warn(
            line,
            format!(
                "{missing} of the {} preserved message uuids are not message lines of the file",
                uuids.len()
            ),
        );
    }
    Some(found.into_iter().collect())
}
