//! Diff lines for the diff view: from the timeline's structural diffs (a stage, or one
//! call's request against the previous one), each line labelled with the stage that made
//! it; or, for a replacement no stage reported, from the rows' shared identity.
//!
//! Rows that survive a change share one `MessageInfo` (the app reuses it for rows a stage's
//! report says it kept), so that matching is by `uid` and the alignment is monotonic. This
//! module computes lines; it does not draw them and keeps no view state.

use std::collections::HashSet;
use std::sync::Arc;

use super::rows::MessageInfo;
use crate::timeline::lineage::RowEffect;
use crate::timeline::{DiffRow, Touch};

pub use crate::timeline::DiffOp;

/// One side of a diff line: the row's index in its list (None: a row appended after the
/// previous call and gone before this one) and the row.
#[derive(Debug, Clone)]
pub struct DiffCell {
    pub index: Option<usize>,
    pub info: Arc<MessageInfo>,
}

/// One line of the unified diff: the old row, the new row, or both, and why.
#[derive(Debug, Clone)]
pub struct DiffLine {
    pub op: DiffOp,
    pub old: Option<DiffCell>,
    pub new: Option<DiffCell>,
    /// The stages that made it and what they did; empty for unchanged rows.
    pub cause: String,
    /// The short name of the stage (or `appended`) for the cause column.
    pub tag: &'static str,
}

fn cell(index: usize, info: &Arc<MessageInfo>) -> Option<DiffCell> {
    Some(DiffCell {
        index: Some(index),
        info: Arc::clone(info),
    })
}

/// The short name of what made a line.
fn tag_of(touches: &[Touch]) -> &'static str {
    match touches.last() {
        Some(Touch { stage: Some(s), .. }) => crate::tui::event_rows::short_name(*s),
        Some(Touch {
            effect: RowEffect::Appended,
            ..
        }) => "appended",
        Some(_) => "replaced",
        None => "",
    }
}

/// The timeline's structural diff as lines; `info` turns a message into a row (callers
/// reuse rows they already have).
pub fn from_timeline(
    rows: &[DiffRow],
    mut info: impl FnMut(&Arc<crate::message::Message>) -> Arc<MessageInfo>,
) -> Vec<DiffLine> {
    rows.iter()
        .map(|r| {
            let side = |s: &Option<crate::timeline::DiffSide>,
                        info: &mut dyn FnMut(&Arc<crate::message::Message>) -> Arc<MessageInfo>| {
                s.as_ref().map(|s| DiffCell {
                    index: s.index,
                    info: info(&s.message),
                })
            };
            let causes: Vec<String> = r
                .touches
                .iter()
                .map(|t| match t.stage {
                    Some(stage) => format!("{}: {}", stage.name(), t.effect.describe()),
                    None => t.effect.describe(),
                })
                .collect();
            DiffLine {
                op: r.op,
                old: side(&r.old, &mut info),
                new: side(&r.new, &mut info),
                cause: causes.join("; "),
                tag: tag_of(&r.touches),
            }
        })
        .collect()
}

/// Aligns `before` and `after` by shared rows (a replacement outside any stage): common
/// rows in order, and between them the removed rows paired with the added ones as changes.
pub fn diff_rows(before: &[Arc<MessageInfo>], after: &[Arc<MessageInfo>]) -> Vec<DiffLine> {
    let old_ids: HashSet<u64> = before.iter().map(|m| m.uid).collect();
    let new_ids: HashSet<u64> = after.iter().map(|m| m.uid).collect();
    let mut out = Vec::with_capacity(before.len().max(after.len()));
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        if i < before.len() && j < after.len() && before[i].uid == after[j].uid {
            out.push(DiffLine {
                op: DiffOp::Same,
                old: cell(i, &before[i]),
                new: cell(j, &after[j]),
                cause: String::new(),
                tag: "",
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
                    old: cell(removed[k], &before[removed[k]]),
                    new: cell(added[k], &after[added[k]]),
                    cause: "replaced".into(),
                    tag: "replaced",
                });
            }
        } else {
            for &r in &removed {
                out.push(DiffLine {
                    op: DiffOp::Removed,
                    old: cell(r, &before[r]),
                    new: None,
                    cause: "replaced".into(),
                    tag: "replaced",
                });
            }
            for &a in &added {
                out.push(DiffLine {
                    op: DiffOp::Added,
                    old: None,
                    new: cell(a, &after[a]),
                    cause: "replaced".into(),
                    tag: "replaced",
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
