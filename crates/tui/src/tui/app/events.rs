//! The events pane's state, owned here: its rows (stage reports, retries, errors, notices,
//! ...), the "all stages" filter, the selection, and the before/after lists behind each
//! row's `Δ`. Other parts of `App` change it through these methods only; `draw.rs`
//! draws it. And the pane's keys (`events_action`): moving, `u`, `F`, and Enter, which
//! opens the row's diff or the row in full in the viewer.

pub mod draw;

use super::{App, DiffView, EventKind, EventRow, ListState, StageDiff};
use crate::tui::diff::diff_rows;
use crate::tui::event_rows::DiffId;
use crate::tui::keys::Action;

#[derive(Debug, Clone, Default)]
pub struct EventsState {
    rows: Vec<EventRow>,
    /// Rows of stages that changed nothing are shown too (`u`).
    show_unchanged: bool,
    /// Selection among the visible rows.
    list: ListState,
    /// The message lists before and after each change, oldest first; `EventKind::diff`
    /// names one.
    diffs: Vec<StageDiff>,
    /// The last `EventRow::seq` handed out.
    seq: usize,
}

impl EventsState {
    pub fn rows(&self) -> &[EventRow] {
        &self.rows
    }

    pub fn diffs(&self) -> &[StageDiff] {
        &self.diffs
    }

    /// The lists a row's `DiffId` names.
    pub fn diff(&self, id: DiffId) -> Option<&StageDiff> {
        self.diffs.get(id.index())
    }

    pub fn show_unchanged(&self) -> bool {
        self.show_unchanged
    }

    pub fn list(&self) -> &ListState {
        &self.list
    }

    pub(super) fn list_mut(&mut self) -> &mut ListState {
        &mut self.list
    }

    /// Indices into `rows` that the pane shows.
    pub fn visible(&self) -> Vec<usize> {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, e)| match &e.kind {
                EventKind::Stage { report, .. } => report.changed || self.show_unchanged,
                _ => true,
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The visible row the selection is on.
    pub fn selected_row(&self) -> Option<&EventRow> {
        let visible = self.visible();
        visible
            .get(self.list.selected)
            .and_then(|&i| self.rows.get(i))
    }

    /// Adds a row at `tick`; the selection follows when it was on the last row.
    pub(super) fn push(&mut self, kind: EventKind, tick: u64) {
        let follow = self.list.selected + 1 >= self.visible().len();
        self.seq += 1;
        self.rows.push(EventRow {
            seq: self.seq,
            tick,
            kind,
        });
        if follow {
            self.list.selected = self.visible().len().saturating_sub(1);
        }
    }

    /// Keeps a change's before/after lists; returns the id a row refers to them by.
    pub(super) fn push_diff(&mut self, diff: StageDiff) -> DiffId {
        let id = DiffId::new(self.diffs.len());
        self.diffs.push(diff);
        id
    }

    /// The API's input tokens for the newest summary call's row.
    pub(super) fn summary_tokens(&mut self, tokens: u64) {
        if let Some(EventKind::SummaryCall { input_tokens, .. }) = self
            .rows
            .iter_mut()
            .rev()
            .map(|e| &mut e.kind)
            .find(|k| matches!(k, EventKind::SummaryCall { .. }))
        {
            *input_tokens = Some(tokens);
        }
    }

    /// Turns the "all stages" filter on or off, keeping the same row selected (or the next
    /// one shown).
    pub(super) fn toggle_unchanged(&mut self) {
        let current = self.visible().get(self.list.selected).copied();
        self.show_unchanged = !self.show_unchanged;
        let now = self.visible();
        self.list.selected = current
            .and_then(|c| now.iter().position(|&i| i >= c))
            .unwrap_or(now.len().saturating_sub(1));
    }

    /// Selects row `k` (an index into `rows`), showing every stage when it is hidden.
    pub(super) fn select_row(&mut self, k: usize) {
        if !self.visible().contains(&k) {
            self.show_unchanged = true;
        }
        if let Some(pos) = self.visible().iter().position(|&v| v == k) {
            self.list.selected = pos;
        }
    }
}

impl App {
    pub(super) fn events_action(&mut self, action: Action) {
        let visible = self.visible_events();
        let page = self.events_viewport().max(1) as isize;
        if self.events.list_mut().apply(action, visible.len(), page) {
            self.fix_scroll();
            return;
        }
        match action {
            Action::ToggleUnchanged => {
                self.events.toggle_unchanged();
                self.fix_scroll();
            }
            Action::Forgot => self.forgot_of_selected_event(),
            Action::Enter => {
                let event = self.events.selected_row();
                let step = event.and_then(|e| match e.kind {
                    EventKind::Stage { step, .. } => step,
                    _ => None,
                });
                let diff = event.and_then(|e| e.kind.diff());
                if step.is_some_and(|s| self.open_step_diff(s)) {
                    return;
                }
                match diff.and_then(|d| self.events.diff(d)) {
                    Some(d) => {
                        let view =
                            DiffView::new(d.title.clone(), None, diff_rows(&d.before, &d.after));
                        self.show_diff(view);
                    }
                    None => {
                        // No diff: the row itself, in full (reasons and notices are long).
                        let kind = self.events.selected_row().map(|e| e.kind.clone());
                        match kind {
                            Some(k) => {
                                let (title, text) = crate::tui::event_rows::detail(&k);
                                let width = self.detail_width();
                                let lines: Vec<String> = text
                                    .lines()
                                    .flat_map(|l| crate::tui::pause::wrap_words(l, width))
                                    .collect();
                                self.open_viewer(title, &lines.join("\n"));
                            }
                            None => self.notify("no event selected"),
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Columns of text the viewer shows for an event's detail: the overlay minus the line
    /// numbers of a short text (the viewer's own wrap then leaves the words whole).
    fn detail_width(&self) -> usize {
        (self.overlay_inner().width as usize)
            .saturating_sub(4)
            .max(1)
    }
}
