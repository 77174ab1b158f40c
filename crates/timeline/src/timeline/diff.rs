//! Structural diffs: the request of call N-1 against call N, and the history before a
//! stage against after it. Each line pairs an old row with a new one (or stands alone) and
//! carries the touches that explain it (which stage, what it did), read from the lineage
//! the builder kept; nothing is matched by text here. `fold` collapses unchanged runs for
//! the views that draw these lines (the workbench's diff overlay, the exported page).

use std::sync::Arc;

use super::lineage::{RowEffect, RowFrom};
use super::{StepId, Timeline, Touch};
use crate::message::Message;

/// What happened to one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffOp {
    Same,
    Removed,
    Added,
    /// The same row with content replaced (persisted, placeholder).
    Changed,
}

/// One side of a diff line: the row's index in its list (None for a row appended after
/// call N-1 and gone before call N) and the message.
#[derive(Debug, Clone)]
pub struct DiffSide {
    pub index: Option<usize>,
    pub message: Arc<Message>,
}

/// One line of a structural diff.
#[derive(Debug, Clone)]
pub struct DiffRow {
    pub op: DiffOp,
    pub old: Option<DiffSide>,
    pub new: Option<DiffSide>,
    /// Why: the stages' effects on this row (empty for unchanged rows; `Appended` for rows
    /// the agent added).
    pub touches: Vec<Touch>,
}

impl DiffRow {
    /// The stage names that made this line, joined: `tool_result_budget`, `appended`.
    pub fn cause(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for t in &self.touches {
            let name = match (t.stage, &t.effect) {
                (Some(s), _) => s.name(),
                (None, RowEffect::Appended) => "appended",
                (None, _) => "replaced",
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.join(", ")
    }
}

/// A diff line or a run of unchanged lines folded into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Line(usize),
    /// `count` unchanged lines starting at line `start`.
    Folded {
        start: usize,
        count: usize,
    },
}

/// Folds runs of unchanged lines longer than `2 * context + 1`, keeping `context` lines on
/// each side of a change (and at the ends next to one).
pub fn fold(rows: &[DiffRow], context: usize) -> Vec<Fold> {
    fold_by(rows.len(), |i| rows[i].op == DiffOp::Same, context)
}

/// `fold` over any list of `len` lines where `same(i)` says line `i` is unchanged.
pub fn fold_by(len: usize, same: impl Fn(usize) -> bool, context: usize) -> Vec<Fold> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < len {
        if !same(i) {
            out.push(Fold::Line(i));
            i += 1;
            continue;
        }
        let start = i;
        while i < len && same(i) {
            i += 1;
        }
        let end = i;
        let keep_head = if start == 0 { 0 } else { context };
        let keep_tail = if end == len { 0 } else { context };
        if end - start > keep_head + keep_tail + 1 {
            out.extend((start..start + keep_head).map(Fold::Line));
            out.push(Fold::Folded {
                start: start + keep_head,
                count: end - start - keep_head - keep_tail,
            });
            out.extend((end - keep_tail..end).map(Fold::Line));
        } else {
            out.extend((start..end).map(Fold::Line));
        }
    }
    out
}

/// One new row for `merge`: the old row it comes from, and whether it changed.
struct NewRow {
    old: Option<usize>,
}

/// The order lines are shown in: every old row that did not survive just before the row
/// that follows it (so a snip shows its removed rows, then the marker), rows in order.
/// Yields `Ok(new index)` and `Err(position in removed)`.
fn merge(new: &[NewRow], removed: &[Option<usize>]) -> Vec<Result<usize, usize>> {
    let mut out = Vec::with_capacity(new.len() + removed.len());
    let mut next_removed = 0;
    // Removed rows that were in the old list, by old index; those without one come last.
    let emit_until =
        |limit: Option<usize>, next: &mut usize, out: &mut Vec<Result<usize, usize>>| {
            while *next < removed.len() {
                match (removed[*next], limit) {
                    (Some(i), Some(l)) if i >= l => break,
                    (None, Some(_)) => break,
                    _ => {}
                }
                out.push(Err(*next));
                *next += 1;
            }
        };
    for (j, row) in new.iter().enumerate() {
        let limit = match row.old {
            Some(i) => Some(i),
            // A new row goes after the removed rows before the next surviving one.
            None => new[j..].iter().find_map(|r| r.old),
        };
        emit_until(limit, &mut next_removed, &mut out);
        out.push(Ok(j));
    }
    emit_until(None, &mut next_removed, &mut out);
    out
}

impl Timeline {
    /// The request of call `number` against the one before (for call 1: against nothing).
    pub fn call_diff(&self, number: usize) -> Vec<DiffRow> {
        let Some(call) = self.call(number) else {
            return Vec::new();
        };
        let prev = number
            .checked_sub(1)
            .and_then(|p| self.call(p))
            .map(|c| c.rows.as_slice())
            .unwrap_or(&[]);
        let new: Vec<NewRow> = call.rows.iter().map(|r| NewRow { old: r.prev }).collect();
        let mut gone: Vec<&super::GoneRow> = call.gone.iter().collect();
        // Old rows by index, then the ones appended since (in the order they went).
        gone.sort_by_key(|g| (g.prev.is_none(), g.prev));
        let removed: Vec<Option<usize>> = gone.iter().map(|g| g.prev).collect();
        merge(&new, &removed)
            .into_iter()
            .map(|item| match item {
                Ok(j) => {
                    let r = &call.rows[j];
                    let op = match r.prev {
                        None => DiffOp::Added,
                        Some(_) if r.touches.is_empty() => DiffOp::Same,
                        Some(_) => DiffOp::Changed,
                    };
                    let touches = if r.prev.is_none() && r.touches.is_empty() {
                        vec![appended(number)]
                    } else {
                        r.touches.clone()
                    };
                    DiffRow {
                        op,
                        old: r.prev.and_then(|i| {
                            prev.get(i).map(|p| DiffSide {
                                index: Some(i),
                                message: Arc::clone(&p.message),
                            })
                        }),
                        new: Some(DiffSide {
                            index: Some(j),
                            message: Arc::clone(&r.message),
                        }),
                        touches,
                    }
                }
                Err(k) => {
                    let g = gone[k];
                    // The old side shows the row as the previous request had it.
                    let message = g
                        .prev
                        .and_then(|i| prev.get(i))
                        .map(|p| Arc::clone(&p.message))
                        .unwrap_or_else(|| Arc::clone(&g.message));
                    DiffRow {
                        op: DiffOp::Removed,
                        old: Some(DiffSide {
                            index: g.prev,
                            message,
                        }),
                        new: None,
                        touches: g.touches.clone(),
                    }
                }
            })
            .collect()
    }

    /// The history before stage step `step` against after it; empty when it changed nothing.
    pub fn step_diff(&self, step: StepId) -> Vec<DiffRow> {
        let Some(s) = self.step(step) else {
            return Vec::new();
        };
        let Some(change) = &s.change else {
            return Vec::new();
        };
        let new: Vec<NewRow> = change.map.iter().map(|f| NewRow { old: f.old() }).collect();
        let removed: Vec<Option<usize>> = (0..change.before.len())
            .filter(|i| !change.map.iter().any(|f| f.old() == Some(*i)))
            .map(Some)
            .collect();
        let touch = |effect| Touch {
            call: s.call,
            step: Some(step),
            stage: Some(s.report.stage),
            effect,
        };
        let marker = change
            .map
            .iter()
            .position(|f| *f == RowFrom::New)
            .and_then(|j| change.after.get(j))
            .and_then(|m| m.text());
        merge(&new, &removed)
            .into_iter()
            .map(|item| match item {
                Ok(j) => {
                    let side_new = Some(DiffSide {
                        index: Some(j),
                        message: Arc::clone(&change.after[j]),
                    });
                    let old_side = |i: usize| {
                        change.before.get(i).map(|m| DiffSide {
                            index: Some(i),
                            message: Arc::clone(m),
                        })
                    };
                    match change.map[j] {
                        RowFrom::Kept(i) => DiffRow {
                            op: DiffOp::Same,
                            old: old_side(i),
                            new: side_new,
                            touches: Vec::new(),
                        },
                        RowFrom::Changed(i) => DiffRow {
                            op: DiffOp::Changed,
                            old: old_side(i),
                            new: side_new,
                            touches: super::lineage::in_place_effects(&s.report, i)
                                .into_iter()
                                .map(touch)
                                .collect(),
                        },
                        RowFrom::New => DiffRow {
                            op: DiffOp::Added,
                            old: None,
                            new: side_new,
                            touches: vec![touch(super::lineage::new_row_effect(&s.report))],
                        },
                    }
                }
                Err(k) => {
                    let i = removed[k].unwrap_or_default();
                    DiffRow {
                        op: DiffOp::Removed,
                        old: change.before.get(i).map(|m| DiffSide {
                            index: Some(i),
                            message: Arc::clone(m),
                        }),
                        new: None,
                        touches: vec![touch(super::lineage::removal_effect(&s.report, marker))],
                    }
                }
            })
            .collect()
    }
}

impl Timeline {
    /// For a snip step: what its cut held and how much of the session snips removed so
    /// far, e.g. `3 rows cut here (2 messages, 1 earlier marker); 8 messages snipped so
    /// far`. The marker's own number counts only this cut, earlier markers included (the
    /// lesson's text, kept), so a second snip's `[snipped 3 messages]` can stand for
    /// eleven messages in all; this sentence says so.
    pub fn snip_note(&self, step: StepId) -> Option<String> {
        let s = self.step(step)?;
        let change = s.change.as_ref()?;
        let removed = s.report.changes.iter().find_map(|c| match c {
            crate::compact::Change::Snipped { removed, .. } => Some(*removed),
            _ => None,
        })?;
        let markers = (0..change.before.len())
            .filter(|i| !change.map.iter().any(|f| f.old() == Some(*i)))
            .filter(|&i| {
                change.before[i]
                    .text()
                    .is_some_and(super::label::is_snip_marker)
            })
            .count();
        let so_far = self
            .session
            .iter()
            .filter(|e| {
                e.touches.iter().any(|t| {
                    t.step.is_some_and(|k| k <= step)
                        && matches!(t.effect, RowEffect::Snipped { .. })
                })
            })
            .count();
        let held = match markers {
            0 => crate::util::plural(removed, "message"),
            m => format!(
                "{}, {} earlier marker{}",
                crate::util::plural(removed - m, "message"),
                m,
                if m == 1 { "" } else { "s" }
            ),
        };
        Some(format!(
            "{removed} rows cut here ({held}); {} snipped so far",
            crate::util::plural(so_far, "session message")
        ))
    }
}

fn appended(call: usize) -> Touch {
    Touch {
        call,
        step: None,
        stage: None,
        effect: RowEffect::Appended,
    }
}

/// How many lines of each kind: (removed, added, changed).
pub fn counts(rows: &[DiffRow]) -> (usize, usize, usize) {
    let mut c = (0, 0, 0);
    for r in rows {
        match r.op {
            DiffOp::Removed => c.0 += 1,
            DiffOp::Added => c.1 += 1,
            DiffOp::Changed => c.2 += 1,
            DiffOp::Same => {}
        }
    }
    c
}
