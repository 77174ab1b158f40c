//! The before/after diff of a message list around one stage, as data for the diff view.
//!
//! Rows that survive a stage share one `MessageInfo` (the app reuses it when a replaced
//! history holds an equal message), so matching is by `uid` and the alignment is
//! monotonic. This module computes lines; it does not draw them and keeps no view state.

use std::collections::HashSet;
use std::sync::Arc;

use super::rows::MessageInfo;

/// What happened to one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffOp {
    Same,
    Removed,
    Added,
    /// An old row replaced in place by a new one (persisted, placeholder, summary).
    Changed,
}

/// One line of the unified diff: the old row, the new row, or both.
#[derive(Debug, Clone)]
pub struct DiffLine {
    pub op: DiffOp,
    pub old: Option<(usize, Arc<MessageInfo>)>,
    pub new: Option<(usize, Arc<MessageInfo>)>,
}

/// Aligns `before` and `after`: common rows in order, and between them the removed rows
/// paired with the added ones as changes.
pub fn diff_rows(before: &[Arc<MessageInfo>], after: &[Arc<MessageInfo>]) -> Vec<DiffLine> {
    let old_ids: HashSet<u64> = before.iter().map(|m| m.uid).collect();
    let new_ids: HashSet<u64> = after.iter().map(|m| m.uid).collect();
    let mut out = Vec::with_capacity(before.len().max(after.len()));
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        if i < before.len() && j < after.len() && before[i].uid == after[j].uid {
            out.push(DiffLine {
                op: DiffOp::Same,
                old: Some((i, before[i].clone())),
                new: Some((j, after[j].clone())),
            });
            i += 1;
            j += 1;
            continue;
        }
        let mut removed = Vec::new();
        while i < before.len() && !new_ids.contains(&before[i].uid) {
            removed.push(i);
            i += 1;
        }
        let mut added = Vec::new();
        while j < after.len() && !old_ids.contains(&after[j].uid) {
            added.push(j);
            j += 1;
        }
        if removed.is_empty() && added.is_empty() {
            // Both sides hold rows the other has, out of order: should not happen with
            // monotonic reuse, but never loop forever on it.
            if i < before.len() {
                removed.push(i);
                i += 1;
            } else if j < after.len() {
                added.push(j);
                j += 1;
            }
        }
        let pairs = removed.len().min(added.len());
        // A run of many removed rows next to one added row is a snip or a summary: show
        // the removals, then the row that stands for them, rather than pairing the first.
        let pair_in_place = removed.len() == added.len();
        if pair_in_place {
            for k in 0..pairs {
                out.push(DiffLine {
                    op: DiffOp::Changed,
                    old: Some((removed[k], before[removed[k]].clone())),
                    new: Some((added[k], after[added[k]].clone())),
                });
            }
        } else {
            for &r in &removed {
                out.push(DiffLine {
                    op: DiffOp::Removed,
                    old: Some((r, before[r].clone())),
                    new: None,
                });
            }
            for &a in &added {
                out.push(DiffLine {
                    op: DiffOp::Added,
                    old: None,
                    new: Some((a, after[a].clone())),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    #[test]
    fn snip_shows_removed_then_marker() {
        let a: Vec<_> = (0..6)
            .map(|i| MessageInfo::new(Message::user_text(format!("m{i}"))))
            .collect();
        let marker = MessageInfo::new(Message::user_text("[snipped 3 messages]"));
        let after = vec![a[0].clone(), marker, a[4].clone(), a[5].clone()];
        let d = diff_rows(&a, &after);
        let ops: Vec<DiffOp> = d.iter().map(|l| l.op).collect();
        use DiffOp::*;
        assert_eq!(
            ops,
            vec![Same, Removed, Removed, Removed, Added, Same, Same]
        );
    }

    #[test]
    fn in_place_change_pairs() {
        let a: Vec<_> = (0..3)
            .map(|i| MessageInfo::new(Message::user_text(format!("m{i}"))))
            .collect();
        let b = MessageInfo::new(Message::user_text("placeholder"));
        let after = vec![a[0].clone(), b, a[2].clone()];
        let ops: Vec<DiffOp> = diff_rows(&a, &after).iter().map(|l| l.op).collect();
        assert_eq!(ops, vec![DiffOp::Same, DiffOp::Changed, DiffOp::Same]);
    }
}
