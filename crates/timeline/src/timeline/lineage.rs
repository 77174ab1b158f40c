//! Which row of a history each row after a stage comes from, read from the stage's own
//! report (`StageReport::changes`), never guessed from message text.
//!
//! Guessing by text goes wrong exactly where it matters: a second snip removes the first
//! snip's `[snipped 3 messages]` marker and inserts a new marker with the same text, and a
//! text match takes the new marker for the old one (the diff then said "- 2 removed" under a
//! title saying "snipped 3"). The report knows what it did; this module only reads it.

use std::iter::once;

use crate::compact::{Change, Stage, StageReport};
use crate::message::Message;

/// Where one row after a stage comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFrom {
    /// Row `i` of the history the stage was given, untouched.
    Kept(usize),
    /// Row `i`, with some of its content replaced (a persisted or a placeholder result).
    Changed(usize),
    /// A row the stage made: a snip marker or a summary message.
    New,
}

impl RowFrom {
    /// The row before the stage, when there is one.
    pub fn old(self) -> Option<usize> {
        match self {
            RowFrom::Kept(i) | RowFrom::Changed(i) => Some(i),
            RowFrom::New => None,
        }
    }
}

/// For each row after the stage, where it comes from; None when the report does not
/// describe a history of `messages_before` rows becoming one of `messages_after` rows
/// (a report from another source, or a bug), so callers can fall back to text matching.
pub fn row_map(report: &StageReport) -> Option<Vec<RowFrom>> {
    let mut rows: Vec<RowFrom> = (0..report.messages_before).map(RowFrom::Kept).collect();
    if !report.changed {
        return (report.messages_after == report.messages_before).then_some(rows);
    }
    let mut cut: Option<(usize, usize)> = None;
    for change in &report.changes {
        match change {
            Change::Persisted { message, .. }
            | Change::Placeholder { message, .. }
            | Change::Saved { message, .. } => {
                let row = rows.get_mut(*message)?;
                *row = RowFrom::Changed(*message);
            }
            Change::Snipped { .. } | Change::Archived { .. } => {
                let span = change.messages();
                cut = Some((span.start, span.end));
            }
            Change::Summarized { replaced, .. } => cut = Some((0, *replaced)),
        }
    }
    if let Some((start, end)) = cut {
        if start > end || end > rows.len() {
            return None;
        }
        rows.splice(start..end, once(RowFrom::New));
    }
    (rows.len() == report.messages_after).then_some(rows)
}

/// How the rows of a history move to the next one, and whether the stage's report said so
/// (else equal messages were matched, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowMap {
    pub rows: Vec<RowFrom>,
    pub by_report: bool,
}

/// Where each row of `new` comes from in `old` (`message` reads an old row's message): the
/// report's account when it describes `old` becoming `new` (`row_map`), else each new
/// message takes the next equal old one, in order (a replacement no report describes). The
/// timeline and the workbench's mirror move their rows by this one map, so the two never
/// match rows differently.
pub fn rows_through<T>(
    report: Option<&StageReport>,
    old: &[T],
    message: impl Fn(&T) -> &Message,
    new: &[Message],
) -> RowMap {
    let by_report = report
        .filter(|r| r.messages_before == old.len())
        .and_then(row_map)
        .filter(|m| m.len() == new.len());
    if let Some(rows) = by_report {
        return RowMap {
            rows,
            by_report: true,
        };
    }
    let mut next = 0;
    let rows = new
        .iter()
        .map(|m| {
            let size = m.estimate_size();
            let found = (next..old.len()).find(|&k| {
                let o = message(&old[k]);
                o.estimate_size() == size && o == m
            });
            match found {
                Some(k) => {
                    next = k + 1;
                    RowFrom::Kept(k)
                }
                None => RowFrom::New,
            }
        })
        .collect();
    RowMap {
        rows,
        by_report: false,
    }
}

/// Whether `old`'s rows are `new`, message for message (sizes first: they are cached).
pub fn same_history<T>(old: &[T], message: impl Fn(&T) -> &Message, new: &[Message]) -> bool {
    old.len() == new.len()
        && old.iter().zip(new).all(|(o, m)| {
            let o = message(o);
            o.estimate_size() == m.estimate_size() && o == m
        })
}

/// What a stage did to one row, in words a diff line can carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowEffect {
    /// A tool result's content went to `path`.
    Persisted {
        tool_use_id: Option<String>,
        path: String,
    },
    /// A tool result became micro_compact's placeholder.
    Placeholder { tool_use_id: Option<String> },
    /// The row is the `[snipped N messages]` marker standing for `removed` rows.
    SnipMarker { removed: usize },
    /// The row is a summary message; the history it replaced is in `transcript`.
    Summary { replaced: usize, transcript: String },
    /// The row was cut by snip_compact; `marker` is the marker's text.
    Snipped { marker: String },
    /// The row was summarized away; the whole history before was saved to `transcript`.
    Summarized { transcript: String },
    /// The history was replaced outside a stage (e.g. the repair after a cancel).
    Replaced,
    /// The agent appended the row (the model's answer, the tool results, a request).
    Appended,
}

impl RowEffect {
    /// One short phrase: `persisted toolu_01 -> .task_outputs/tool-results/toolu_01.txt`.
    pub fn describe(&self) -> String {
        let id = |id: &Option<String>| id.clone().unwrap_or_else(|| "(no id)".into());
        match self {
            RowEffect::Persisted { tool_use_id, path } => {
                format!("persisted {} -> {path}", id(tool_use_id))
            }
            RowEffect::Placeholder { tool_use_id } => {
                format!("{} -> placeholder", id(tool_use_id))
            }
            RowEffect::SnipMarker { removed } => {
                format!("marker for the {removed} rows snipped here")
            }
            RowEffect::Summary {
                replaced,
                transcript,
            } => format!("summary of {replaced} rows (transcript {transcript})"),
            RowEffect::Snipped { marker } => format!("snipped, replaced by {marker}"),
            RowEffect::Summarized { transcript } => {
                format!("summarized away (transcript {transcript})")
            }
            RowEffect::Replaced => "replaced outside a stage".into(),
            RowEffect::Appended => "appended".into(),
        }
    }
}

/// The effects `report` had on row `old` of its input (in-place changes only).
pub fn in_place_effects(report: &StageReport, old: usize) -> Vec<RowEffect> {
    report
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Persisted {
                message,
                tool_use_id,
                path,
                ..
            }
            | Change::Saved {
                message,
                tool_use_id,
                path,
                ..
            } if *message == old => Some(RowEffect::Persisted {
                tool_use_id: tool_use_id.clone(),
                path: path.clone(),
            }),
            Change::Placeholder {
                message,
                tool_use_id,
                ..
            } if *message == old => Some(RowEffect::Placeholder {
                tool_use_id: tool_use_id.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// What the row a stage made stands for (`RowFrom::New`).
pub fn new_row_effect(report: &StageReport) -> RowEffect {
    for c in &report.changes {
        match c {
            Change::Snipped { removed, .. } | Change::Archived { removed, .. } => {
                return RowEffect::SnipMarker { removed: *removed };
            }
            Change::Summarized {
                replaced,
                transcript,
                ..
            } => {
                return RowEffect::Summary {
                    replaced: *replaced,
                    transcript: transcript.clone(),
                };
            }
            _ => {}
        }
    }
    RowEffect::Replaced
}

/// What happened to a row the stage removed; `marker` is the snip marker's text when the
/// stage was a snip.
pub fn removal_effect(report: &StageReport, marker: Option<&str>) -> RowEffect {
    for c in &report.changes {
        match c {
            Change::Snipped { removed, .. } => {
                return RowEffect::Snipped {
                    marker: marker.map(str::to_string).unwrap_or_else(|| {
                        crate::compact::markers::Marker::Snipped { removed: *removed }.write()
                    }),
                };
            }
            // The marker names the archive; the rows are in that file.
            Change::Archived { path, .. } => {
                return RowEffect::Snipped {
                    marker: marker
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("archived to {path}")),
                };
            }
            Change::Summarized { transcript, .. } => {
                return RowEffect::Summarized {
                    transcript: transcript.clone(),
                };
            }
            _ => {}
        }
    }
    RowEffect::Replaced
}

/// The one-letter tag of a stage (the conversation pane's mark, the timeline's letters).
pub fn stage_letter(stage: Stage) -> char {
    match stage {
        Stage::ToolResultBudget => 'B',
        Stage::SnipCompact => 'S',
        Stage::MicroCompact => 'M',
        Stage::FitToolResults => 'F',
        Stage::CompactHistory => 'C',
        Stage::ReactiveCompact => 'R',
        Stage::AutoCompact => 'A',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::{PipelineConfig, snip_compact};
    use crate::message::Message;

    fn history(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect()
    }

    #[test]
    fn a_second_snip_removes_the_first_marker_and_says_so() {
        let cfg = PipelineConfig {
            snip_max_messages: 6,
            snip_keep_head: 2,
            ..PipelineConfig::default()
        };
        let mut h = history(8);
        let first = snip_compact(&mut h, &cfg);
        assert_eq!(
            row_map(&first).unwrap(),
            vec![
                RowFrom::Kept(0),
                RowFrom::Kept(1),
                RowFrom::New,
                RowFrom::Kept(4),
                RowFrom::Kept(5),
                RowFrom::Kept(6),
                RowFrom::Kept(7)
            ]
        );
        h.push(Message::user_text("m8"));
        h.push(Message::user_text("m9"));
        let second = snip_compact(&mut h, &cfg);
        let map = row_map(&second).unwrap();
        // The old marker (row 2) is among the removed rows, not kept.
        assert!(!map.contains(&RowFrom::Kept(2)));
        let removed = (0..second.messages_before)
            .filter(|i| !map.iter().any(|r| r.old() == Some(*i)))
            .count();
        let Change::Snipped { removed: said, .. } = second.changes[0] else {
            panic!("not a snip");
        };
        assert_eq!(removed, said);
        assert_eq!(map.iter().filter(|r| **r == RowFrom::New).count(), 1);
    }

    #[test]
    fn an_inconsistent_report_gives_no_map() {
        let mut r = StageReport::within_limit(10, 3, 50_000);
        r.messages_after = 2;
        assert_eq!(row_map(&r), None);
    }

    #[test]
    fn saved_results_and_archived_runs_are_followed_by_the_report() {
        // s08-latest's and guarded's changes: a placeholder naming a saved file, and a
        // run of rows replaced by a marker naming the archive.
        let mut r = StageReport::unchanged(Stage::SnipCompact, 100, 6);
        r.changed = true;
        r.messages_after = 5;
        r.changes = vec![
            Change::Saved {
                message: 1,
                block: 0,
                tool_use_id: Some("t1".into()),
                chars: 10,
                placeholder_chars: 5,
                path: "saved/t1.txt".into(),
            },
            Change::Archived {
                head_end: 2,
                tail_start: 4,
                removed: 2,
                path: "archive.jsonl".into(),
            },
        ];
        assert_eq!(
            row_map(&r).unwrap(),
            vec![
                RowFrom::Kept(0),
                RowFrom::Changed(1),
                RowFrom::New,
                RowFrom::Kept(4),
                RowFrom::Kept(5)
            ]
        );
        assert_eq!(
            in_place_effects(&r, 1),
            vec![RowEffect::Persisted {
                tool_use_id: Some("t1".into()),
                path: "saved/t1.txt".into()
            }]
        );
        assert_eq!(new_row_effect(&r), RowEffect::SnipMarker { removed: 2 });
        assert_eq!(
            removal_effect(&r, None),
            RowEffect::Snipped {
                marker: "archived to archive.jsonl".into()
            }
        );
    }
}
