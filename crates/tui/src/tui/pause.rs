//! What a step-mode pause says and shows: the rows of the conversation the next step will
//! change (from the preview's `StageReport.changes`, indices into the history as it stands
//! at the pause) and the lines of the pause card drawn in place of the input box. Pure
//! functions of the `NextStep` the agent sent; no state, no drawing.

use std::ops::Range;

use crate::agent::events::NextStep;
use crate::compact::{Change, Stage};
use crate::util::{group_digits, plural};

/// The step keys, as the card, the status bar and the help say them.
pub const STEP_KEYS: &str = "Space step  s next stage  c next call  p back a call";

/// The history rows `next` will change: a persisted or replaced result, the snipped run,
/// everything a summary replaces. Empty before a model call.
pub fn rows_to_change(next: &NextStep) -> Vec<Range<usize>> {
    match next {
        NextStep::Stage { preview, .. } => preview.changes.iter().map(Change::messages).collect(),
        NextStep::Summarize { messages, .. } => std::iter::once(0..*messages).collect(),
        NextStep::Reactive { replaced, .. } | NextStep::SummaryCall { replaced, .. } => {
            std::iter::once(0..*replaced).collect()
        }
        NextStep::ModelCall { .. } => Vec::new(),
    }
}

/// Whether row `i` is one `ranges` covers.
pub fn covers(ranges: &[Range<usize>], i: usize) -> bool {
    ranges.iter().any(|r| r.contains(&i))
}

/// The stage a pause is about (None before a model call).
pub fn stage_of(next: &NextStep) -> Option<Stage> {
    match next {
        NextStep::Stage { stage, .. }
        | NextStep::Summarize { stage, .. }
        | NextStep::Reactive { stage, .. }
        | NextStep::SummaryCall { stage, .. } => Some(*stage),
        NextStep::ModelCall { .. } => None,
    }
}

/// `ranges` sorted, with overlapping, repeated and touching ones merged: two changes of a
/// stage may name the same row, which is still one row.
fn merged(ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut sorted: Vec<Range<usize>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `rows 3-5`, `row 12`, `rows 0-16`: which rows are highlighted, each once.
fn rows_text(ranges: &[Range<usize>]) -> Option<String> {
    let parts: Vec<String> = merged(ranges)
        .iter()
        .map(|r| {
            if r.len() == 1 {
                format!("{}", r.start)
            } else {
                format!("{}-{}", r.start, r.end - 1)
            }
        })
        .collect();
    match parts.len() {
        0 => None,
        1 if !parts[0].contains('-') => Some(format!("row {} highlighted", parts[0])),
        _ => Some(format!("rows {} highlighted", parts.join(", "))),
    }
}

/// The status bar's short sentence for a pause, for a line too narrow for
/// `NextStep::describe`: `next: micro_compact, 6,647 -> 5,471 chars`. The card under it
/// says why and what in full.
pub fn short(next: &NextStep) -> String {
    match next {
        NextStep::Stage { stage, preview } => {
            format!("next: {}, {}", stage.name(), preview.delta().sizes())
        }
        NextStep::Summarize {
            stage,
            messages,
            size,
            ..
        } => format!(
            "next: {} summarizes {} ({} chars)",
            stage.name(),
            plural(*messages, "message"),
            group_digits(*size)
        ),
        NextStep::Reactive { stage, .. } => {
            format!("next: {} (the API said: too long)", stage.name())
        }
        NextStep::SummaryCall { stage, chars, .. } => format!(
            "next: summary call of {}, {} chars",
            stage.name(),
            group_digits(*chars)
        ),
        NextStep::ModelCall { messages, size } => format!(
            "next: model call, {}, {} chars",
            plural(*messages, "message"),
            group_digits(*size)
        ),
    }
}

/// The card's title and its text lines (the keys line is added by the pane): what is
/// about to happen and why, in the teacher's words.
pub fn card(next: &NextStep, limit: usize) -> (String, Vec<String>) {
    let rows = rows_text(&rows_to_change(next));
    let with_rows = |s: String| match &rows {
        Some(r) => format!("{s} ({r})"),
        None => s,
    };
    match next {
        NextStep::Stage { stage, preview } => {
            let delta = preview.delta();
            (
                format!("before {}", stage.name()),
                vec![
                    format!("why: {}", preview.why()),
                    with_rows(format!("will do: {}; {}", delta.what, delta.sizes())),
                ],
            )
        }
        NextStep::Summarize {
            stage,
            messages,
            size,
            reason,
            focus,
        } => {
            let mut first = format!("why: {reason}");
            if focus.is_none() && reason.contains('>') {
                first.push_str(" (still over the limit after micro_compact)");
            }
            (
                format!("before {}", stage.name()),
                vec![
                    first,
                    with_rows(format!(
                        "will save a transcript, then summarize all {messages} messages ({} \
                         chars) into one [Compacted] message",
                        group_digits(*size)
                    )),
                ],
            )
        }
        NextStep::Reactive {
            stage,
            api_message,
            replaced,
            kept,
            ..
        } => (
            format!("before {}", stage.name()),
            vec![
                format!("the API said: {api_message}"),
                with_rows(format!(
                    "will save a transcript, summarize the first {replaced} messages, keep the \
                     last {kept} and retry the call"
                )),
            ],
        ),
        NextStep::SummaryCall {
            stage,
            replaced,
            chars,
            focus,
            transcript,
        } => {
            let focus = match focus {
                Some(f) => format!("; focus: {f}"),
                None => String::new(),
            };
            (
                format!("before the summary call of {}", stage.name()),
                vec![
                    format!(
                        "the summarizer gets {replaced} messages as one message of {} chars{focus}",
                        group_digits(*chars)
                    ),
                    with_rows(format!("transcript saved first: {transcript}")),
                ],
            )
        }
        NextStep::ModelCall { messages, size } => (
            "before the model call".to_string(),
            vec![
                format!(
                    "the request: {}, {} / {} chars after the pipeline",
                    plural(*messages, "message"),
                    group_digits(*size),
                    group_digits(limit)
                ),
                "the API answers with text or tool calls, and reports its input tokens".to_string(),
            ],
        ),
    }
}

/// `text` in lines of at most `width` columns, broken between words (a word longer than
/// the line is cut by columns): `rows::word_wrap`, at least one line.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = crate::tui::rows::word_wrap(text, width);
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::StageReport;

    fn report(stage: Stage, changes: Vec<Change>) -> StageReport {
        let mut r = StageReport::unchanged(stage, 100, 10);
        r.changed = true;
        r.size_after = 90;
        r.messages_after = 8;
        r.changes = changes;
        r.reason = "53 messages > 50 (head 3, kept 47)".into();
        r
    }

    #[test]
    fn a_snip_preview_highlights_the_snipped_run() {
        let next = NextStep::Stage {
            stage: Stage::SnipCompact,
            preview: report(
                Stage::SnipCompact,
                vec![Change::Snipped {
                    head_end: 3,
                    tail_start: 6,
                    removed: 3,
                }],
            ),
        };
        let rows = rows_to_change(&next);
        assert_eq!(rows, vec![3..6]);
        assert!(!covers(&rows, 2) && covers(&rows, 3) && covers(&rows, 5) && !covers(&rows, 6));
        let (title, lines) = card(&next, 50_000);
        assert_eq!(title, "before snip_compact");
        assert_eq!(lines[0], "why: 53 messages > 50 (head 3, kept 47)");
        assert!(lines[1].ends_with("(rows 3-5 highlighted)"), "{}", lines[1]);
    }

    #[test]
    fn placeholders_highlight_their_rows_and_a_model_call_none() {
        let next = NextStep::Stage {
            stage: Stage::MicroCompact,
            preview: report(
                Stage::MicroCompact,
                vec![
                    Change::Placeholder {
                        message: 4,
                        block: 0,
                        tool_use_id: None,
                        chars: 300,
                    },
                    Change::Placeholder {
                        message: 8,
                        block: 0,
                        tool_use_id: None,
                        chars: 300,
                    },
                ],
            ),
        };
        assert_eq!(rows_to_change(&next), vec![4..5, 8..9]);
        assert!(card(&next, 1).1[1].contains("(rows 4, 8 highlighted)"));
        let call = NextStep::ModelCall {
            messages: 3,
            size: 10,
        };
        assert!(rows_to_change(&call).is_empty());
        assert_eq!(stage_of(&call), None);
    }

    #[test]
    fn a_row_two_changes_name_is_listed_once() {
        // Two placeholders in one message (two of its blocks): row 4, once.
        let next = NextStep::Stage {
            stage: Stage::MicroCompact,
            preview: report(
                Stage::MicroCompact,
                [(2, 0), (4, 0), (4, 1)]
                    .into_iter()
                    .map(|(message, block)| Change::Placeholder {
                        message,
                        block,
                        tool_use_id: None,
                        chars: 300,
                    })
                    .collect(),
            ),
        };
        let line = &card(&next, 1).1[1];
        assert!(line.ends_with("(rows 2, 4 highlighted)"), "{line}");
        assert_eq!(
            rows_text(&[5..9, 2..3, 6..7, 2..3, 9..10]).as_deref(),
            Some("rows 2, 5-9 highlighted")
        );
        assert_eq!(
            rows_text(&[7..8, 7..8]).as_deref(),
            Some("row 7 highlighted")
        );
    }

    #[test]
    fn the_next_calls_size_has_thousands_separators() {
        let call = NextStep::ModelCall {
            messages: 3,
            size: 96_266,
        };
        assert_eq!(
            call.describe(),
            "next: model call with 3 messages (96,266 chars)"
        );
    }

    #[test]
    fn words_wrap_at_the_width_and_long_words_are_cut() {
        assert_eq!(
            wrap_words("the API said: prompt is too long", 14),
            vec!["the API said:", "prompt is too", "long"]
        );
        assert_eq!(
            wrap_words("abcdefghij xy", 4),
            vec!["abcd", "efgh", "ij", "xy"]
        );
        assert_eq!(wrap_words("", 10), vec![""]);
    }

    #[test]
    fn the_reactive_card_quotes_the_api() {
        let next = NextStep::Reactive {
            stage: Stage::ReactiveCompact,
            api_message: "prompt is too long: 52,000 chars > 50,000 maximum".into(),
            messages: 22,
            size: 52_000,
            replaced: 17,
            kept: 5,
        };
        assert_eq!(rows_to_change(&next), vec![0..17]);
        let (title, lines) = card(&next, 50_000);
        assert_eq!(title, "before reactive_compact");
        assert_eq!(
            lines[0],
            "the API said: prompt is too long: 52,000 chars > 50,000 maximum"
        );
        assert!(lines[1].contains("first 17 messages") && lines[1].contains("last 5"));
    }
}
