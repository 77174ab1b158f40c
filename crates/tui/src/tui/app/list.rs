//! The viewports each list gets from the layout, and `fix_scroll`, which keeps every
//! list's selection in range and on screen after anything changed (`ListState` itself is
//! `tui::list`).

use ratatui::layout::Rect;

use super::App;
use crate::tui::layout;
pub use crate::tui::list::{
    EXPANDED_INDENT, ListState, expanded_cap, expanded_lines, layout_transcript, row_height,
};

impl App {
    /// Columns and lines the main pane's list may use.
    pub(super) fn main_viewport(&self) -> (usize, usize) {
        let Some(a) = self.areas() else {
            return (1, 1);
        };
        let inner = layout::inner(a.main);
        (inner.width as usize, inner.height as usize)
    }

    fn transcript_viewport(&self) -> (usize, usize) {
        let Some(a) = self.areas() else {
            return (1, 1);
        };
        let has_replay = self
            .transcripts
            .open()
            .is_some_and(|t| t.replay().is_some());
        let (list, _) = layout_transcript(a.main, has_replay);
        let inner = layout::inner(list);
        (inner.width as usize, inner.height as usize)
    }

    /// The events rows (positions among the visible ones) taller than one line, with their
    /// height: the selected row and the notices show their whole text (`event_rows`).
    fn events_row_heights(&self, viewport: usize) -> std::collections::HashMap<usize, usize> {
        let width = self
            .areas()
            .map(|a| layout::inner(a.events).width as usize)
            .unwrap_or(1);
        let selected = self.events.list().selected;
        let rows = self.events.rows();
        self.visible_events()
            .iter()
            .enumerate()
            .filter_map(|(pos, &i)| {
                let kind = &rows.get(i)?.kind;
                let h = crate::tui::event_rows::row_height(kind, width, pos == selected, viewport);
                (h > 1).then_some((pos, h))
            })
            .collect()
    }

    pub(super) fn events_viewport(&self) -> usize {
        self.areas()
            .map(|a| layout::inner(a.events).height as usize)
            .unwrap_or(1)
    }

    fn list_viewport(&self) -> usize {
        // Browsers draw a header line under the border.
        self.main_viewport().1.saturating_sub(1)
    }

    pub(super) fn overlay_viewport(&self) -> usize {
        self.overlay_inner().height.saturating_sub(1) as usize
    }

    /// The inside of a centered overlay (diff, viewer) at the current size.
    pub(super) fn overlay_inner(&self) -> Rect {
        let area = Rect::new(0, 0, self.screen.size.0, self.screen.size.1);
        layout::inner(layout::centered(area, 90, 85))
    }

    /// Rows a page key moves in the main pane.
    pub(super) fn page(&self) -> isize {
        (self.main_viewport().1.saturating_sub(1)).max(1) as isize
    }

    /// Keeps every list's selection in range and on screen.
    pub(super) fn fix_scroll(&mut self) {
        let (w, h) = self.main_viewport();
        self.conversation.fit(w, h);
        let calls = self.timeline.calls.len();
        let call_rows = self.areas().map(layout::timeline_list_rows).unwrap_or(1);
        if let Some(v) = &mut self.timeline_view {
            v.fit(calls, call_rows, w, h);
        }
        let ev_len = self.visible_events().len();
        let ev_h = self.events_viewport();
        self.events.list_mut().clamp(ev_len);
        let heights = self.events_row_heights(ev_h);
        self.events
            .list_mut()
            .ensure_visible(ev_len, ev_h, |pos| heights.get(&pos).copied().unwrap_or(1));
        let lh = self.list_viewport();
        let outputs = self.outputs.files().len();
        self.outputs.list_mut().clamp(outputs);
        self.outputs.list_mut().ensure_visible(outputs, lh, |_| 1);
        let (tw, th) = self.transcript_viewport();
        self.transcripts.fit(lh, tw, th);
    }
}
