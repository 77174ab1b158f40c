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
        let s = &mut builder.session;
        match kept {
            Some(indices) => {
                let kept = indices
                    .into_iter()
                    .filter(|&i| s.info[i].kind != MessageKind::CompactSummary)
                    .map(|i| KeptMessage {
                        message: s.messages[i].clone(),
                        from: Some(i),
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
}

/// The messages from the segment's head line to its tail line; None when either is not
/// a message line of the file.
fn segment_indices(b: &Builder, head: &str, tail: &str) -> Option<Vec<usize>> {
    let h = b.uuid_index.get(head)?;
    let t = b.uuid_index.get(tail)?;
    (h <= t && t < b.session.messages.len()).then(|| (h..=t).collect())
}

/// The messages holding the listed lines, in order, each once (an answer split over
/// several lines is one message; a line that is no message, an attachment, stands for the
/// message it hangs after). A uuid that is no line of the file is passed over with a
/// warning; None when no listed uuid is found at all, so nothing is claimed kept.
fn uuid_indices(b: &mut Builder, line: usize, uuids: &[String]) -> Option<Vec<usize>> {
    let len = b.session.messages.len();
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
