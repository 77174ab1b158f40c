//! The exported page's bound: a section with a row per call, stage event, summary,
//! compaction or message writes its first and last `EDGE_ROWS` rows whole and, between
//! them, one line saying how many rows were left out and which command shows every one;
//! the plots draw at most `PLOT_BARS` bars. A 1 GB Codex rollout made a 73 MB page that
//! headless Chromium had not drawn after two minutes; the page's size now follows the
//! session's ends, not its length. What is left out is not lost: each left-out line names
//! the command that shows it (`see_every`). See docs/pipeline.md,
//! "The exported page of a long session".

use std::fmt::Write;

use super::html_escape::escape;
use super::{Source, StageStep, StepId, Timeline};
use crate::util::group_digits;

/// Rows written at each end of a long section.
pub const EDGE_ROWS: usize = 100;

/// Bars a plot draws at most: a bar then stands for a run of calls (the tallest of them),
/// the width of a pixel or two at the page's width.
pub const PLOT_BARS: usize = 480;

/// Which of a section's `len` rows the page writes: all of them, or its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    len: usize,
}

impl Shown {
    pub fn of(len: usize) -> Shown {
        Shown { len }
    }

    /// Rows left out between the two ends.
    pub fn left_out(&self) -> usize {
        self.len.saturating_sub(2 * EDGE_ROWS)
    }

    /// Whether row `i` is written.
    pub fn contains(&self, i: usize) -> bool {
        self.left_out() == 0 || i < EDGE_ROWS || i >= self.len - EDGE_ROWS
    }

    /// Whether the line for the rows left out goes right before row `i`: the first row of
    /// the later end.
    pub fn gap_before(&self, i: usize) -> bool {
        self.left_out() > 0 && i == self.len - EDGE_ROWS
    }

    /// The indices written, in order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.contains(i))
    }
}

/// The sentence for the rows left out, `what` counted from 1: `⋯ calls 101 to 9,900 of
/// 10,000 left out here: ctxlab inspect --calls lists every one ⋯`.
pub fn left_out_text(shown: &Shown, what: &str, see: &str) -> String {
    format!(
        "⋯ {what} {} to {} of {} left out here: {see} ⋯",
        group_digits(EDGE_ROWS + 1),
        group_digits(EDGE_ROWS + shown.left_out()),
        group_digits(shown.len),
    )
}

/// The left-out line as a table row across `columns` columns.
pub fn left_out_row(s: &mut String, shown: &Shown, columns: usize, what: &str, see: &str) {
    let _ = writeln!(
        s,
        "<tr class=\"fold\"><td colspan=\"{columns}\">{}</td></tr>",
        escape(&left_out_text(shown, what, see))
    );
}

/// The left-out line as a paragraph.
pub fn left_out_paragraph(s: &mut String, shown: &Shown, what: &str, see: &str) {
    let _ = writeln!(
        s,
        "<p class=\"empty\">{}</p>",
        escape(&left_out_text(shown, what, see))
    );
}

/// A section whose long lists are cut to their ends (`html_cap`).
#[derive(Clone, Copy)]
pub enum Section {
    Calls,
    Steps,
    Forgot,
    History,
}

/// Where to see every row a long section left out: a replay's rows are the replay
/// command's (the same options give the same calls and stages), a live run's the
/// workbench's.
pub fn see_every(t: &Timeline, section: Section) -> &'static str {
    match (&t.source, section) {
        (Source::Replay { .. }, Section::Calls) => {
            "ctxlab replay --json, with the same options, prints every one"
        }
        (Source::Replay { .. }, Section::Steps) => {
            "ctxlab replay, with the same options, prints every one"
        }
        (Source::Replay { .. }, Section::Forgot) => {
            "ctxlab forgot --replay, with the same options, shows every one"
        }
        (Source::Replay { .. }, Section::History) => {
            "the workbench reads every message of the session it came from"
        }
        (Source::Live, Section::Calls | Section::Steps) => {
            "the workbench's timeline (t) shows every one"
        }
        (Source::Live, Section::Forgot) => "the workbench's forgot view (F) shows every one",
        (Source::Live, Section::History) => "the workbench's conversation shows every one",
    }
}

/// The steps that changed the history: the stage events, in step order.
pub fn changed_steps(t: &Timeline) -> Vec<(StepId, &StageStep)> {
    t.steps_by_id()
        .filter(|(_, st)| st.report.changed)
        .collect()
}

/// Per step (by index), whether the page writes its stage event: a link to one left out
/// (`html_cap`) would lead nowhere, so it is not made.
pub fn written_steps(t: &Timeline) -> Vec<bool> {
    let mut written = vec![false; t.steps.len()];
    let changed = changed_steps(t);
    let shown = Shown::of(changed.len());
    for k in shown.indices() {
        if let Some(w) = written.get_mut(changed[k].0.index()) {
            *w = true;
        }
    }
    written
}

/// `stage event`, linked to it when the page writes it.
pub fn event_link(step: usize, written: &[bool]) -> String {
    if written.get(step).copied().unwrap_or(false) {
        format!("<a href=\"#step-{step}\">stage event</a>")
    } else {
        "stage event left out here".to_string()
    }
}

/// Calls a plot bar stands for when there are `calls` calls: 1 up to `PLOT_BARS`.
pub fn calls_per_bar(calls: usize) -> usize {
    calls.div_ceil(PLOT_BARS).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_section_is_written_whole() {
        let s = Shown::of(2 * EDGE_ROWS);
        assert_eq!(s.left_out(), 0);
        assert_eq!(s.indices().count(), 2 * EDGE_ROWS);
        assert!(!(0..2 * EDGE_ROWS).any(|i| s.gap_before(i)));
    }

    #[test]
    fn a_long_section_keeps_its_ends_and_says_what_it_left_out() {
        let s = Shown::of(10_000);
        let written: Vec<usize> = s.indices().collect();
        assert_eq!(written.len(), 2 * EDGE_ROWS);
        assert_eq!(written[EDGE_ROWS - 1], EDGE_ROWS - 1);
        assert_eq!(written[EDGE_ROWS], 10_000 - EDGE_ROWS);
        assert_eq!(written.last(), Some(&9_999));
        // The line goes once, between the two ends, before a row that is written.
        let gaps: Vec<usize> = s.indices().filter(|&i| s.gap_before(i)).collect();
        assert_eq!(gaps, vec![10_000 - EDGE_ROWS]);
        let text = left_out_text(&s, "calls", "ctxlab inspect --calls lists every one");
        assert!(
            text.contains("calls 101 to 9,900 of 10,000 left out here"),
            "{text}"
        );
    }

    #[test]
    fn a_plot_bar_stands_for_more_calls_only_past_the_bar_budget() {
        assert_eq!(calls_per_bar(1), 1);
        assert_eq!(calls_per_bar(PLOT_BARS), 1);
        assert_eq!(calls_per_bar(PLOT_BARS + 1), 2);
        assert!(100_000usize.div_ceil(calls_per_bar(100_000)) <= PLOT_BARS);
    }
}
