//! Selection and scrolling: `ListState` (selected row, first row drawn, expanded rows), the
//! viewports each list gets from the layout, and `fix_scroll`, which keeps every list's
//! selection in range and on screen after anything changed. Also the row-height helpers
//! the panes share with it, so drawing and scrolling agree on how tall a row is.

use std::collections::HashSet;

use ratatui::layout::Rect;

use super::App;
use crate::tui::keys::Action;
use crate::tui::layout;
use crate::tui::rows::{MessageInfo, wrap_lines};

/// Expanded rows' text is indented under the row's columns.
pub const EXPANDED_INDENT: usize = 6;

/// Selection and scroll of a list. `top` is the first row drawn.
#[derive(Debug, Clone, Default)]
pub struct ListState {
    pub selected: usize,
    pub top: usize,
    /// `MessageInfo::uid`s of expanded rows (ids survive index shifts).
    pub expanded: HashSet<u64>,
}

impl ListState {
    fn clamp(&mut self, len: usize) {
        if len == 0 {
            self.selected = 0;
            self.top = 0;
        } else {
            self.selected = self.selected.min(len - 1);
            self.top = self.top.min(self.selected);
        }
    }

    fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            return;
        }
        let s = self.selected as isize + delta;
        self.selected = s.clamp(0, len as isize - 1) as usize;
    }

    /// Applies a movement key; false when `action` is not one.
    pub(super) fn apply(&mut self, action: Action, len: usize, page: isize) -> bool {
        match action {
            Action::Up => self.move_by(-1, len),
            Action::Down => self.move_by(1, len),
            Action::PageUp => self.move_by(-page, len),
            Action::PageDown => self.move_by(page, len),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = len.saturating_sub(1),
            _ => return false,
        }
        true
    }

    /// Expands the row with `uid`, or collapses it when it was expanded.
    pub(super) fn toggle(&mut self, uid: u64) {
        if !self.expanded.remove(&uid) {
            self.expanded.insert(uid);
        }
    }

    /// Moves `top` so the selected row fits in `viewport` lines, and pulls it back when
    /// rows below leave free space (after the list shrank or the screen grew).
    /// Keeps the selection among `len` message rows and on a `w` x `h` screen, each row as
    /// tall as `row_height` makes it (expanded rows show their text).
    fn fit_rows<'a>(
        &mut self,
        len: usize,
        info: impl Fn(usize) -> Option<&'a MessageInfo>,
        w: usize,
        h: usize,
    ) {
        self.clamp(len);
        let expanded = std::mem::take(&mut self.expanded);
        self.ensure_visible(len, h, |i| {
            info(i).map(|r| row_height(r, &expanded, w, h)).unwrap_or(1)
        });
        self.expanded = expanded;
    }

    fn ensure_visible(&mut self, len: usize, viewport: usize, height: impl Fn(usize) -> usize) {
        let viewport = viewport.max(1);
        if len == 0 {
            self.top = 0;
            return;
        }
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected - self.top >= viewport {
            // Far below the screen: put the selection on the bottom line.
            self.top = self.selected;
            let mut used = height(self.selected);
            while self.top > 0 {
                let h = height(self.top - 1);
                if used + h > viewport {
                    break;
                }
                used += h;
                self.top -= 1;
            }
        } else {
            let mut used: usize = (self.top..=self.selected).map(&height).sum();
            while used > viewport && self.top < self.selected {
                used -= height(self.top);
                self.top += 1;
            }
        }
        // Rows from `top` to the end, counted only as far as the screen reaches.
        let mut used = 0;
        for i in self.top..len {
            used += height(i);
            if used >= viewport {
                return;
            }
        }
        while self.top > 0 {
            let h = height(self.top - 1);
            if used + h > viewport {
                break;
            }
            used += h;
            self.top -= 1;
        }
    }
}

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
        let has_replay = self.transcript.as_ref().is_some_and(|t| t.replay.is_some());
        let (list, _) = layout_transcript(a.main, has_replay);
        let inner = layout::inner(list);
        (inner.width as usize, inner.height as usize)
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
        let area = Rect::new(0, 0, self.size.0, self.size.1);
        layout::inner(layout::centered(area, 90, 85))
    }

    /// Rows a page key moves in the main pane.
    pub(super) fn page(&self) -> isize {
        (self.main_viewport().1.saturating_sub(1)).max(1) as isize
    }

    /// Keeps every list's selection in range and on screen.
    pub(super) fn fix_scroll(&mut self) {
        let (w, h) = self.main_viewport();
        let history = &self.history;
        self.conv
            .fit_rows(history.len(), |i| history.get(i).map(|r| &*r.info), w, h);
        let session = &self.session;
        self.sess
            .fit_rows(session.len(), |i| session.get(i).map(|r| &*r.info), w, h);
        let calls = self.timeline.calls.len();
        let call_rows = self.areas().map(layout::timeline_list_rows).unwrap_or(1);
        if let Some(v) = &mut self.timeline_view {
            let rows = &v.rows;
            v.list
                .fit_rows(rows.len(), |i| rows.get(i).map(|r| &**r), w, h);
            let mut calls_list = ListState {
                selected: v.selected,
                top: v.top,
                ..ListState::default()
            };
            calls_list.clamp(calls);
            calls_list.ensure_visible(calls, call_rows, |_| 1);
            v.selected = calls_list.selected;
            v.top = calls_list.top;
        }
        let ev_len = self.visible_events().len();
        let ev_h = self.events_viewport();
        self.events_list.clamp(ev_len);
        self.events_list.ensure_visible(ev_len, ev_h, |_| 1);
        let lh = self.list_viewport();
        self.outputs_list.clamp(self.outputs.len());
        self.outputs_list
            .ensure_visible(self.outputs.len(), lh, |_| 1);
        self.transcripts_list.clamp(self.transcripts.len());
        self.transcripts_list
            .ensure_visible(self.transcripts.len(), lh, |_| 1);
        let (tw, th) = self.transcript_viewport();
        if let Some(t) = &mut self.transcript {
            let rows = &t.rows;
            t.list
                .fit_rows(rows.len(), |i| rows.get(i).map(|r| &**r), tw, th);
        }
    }
}

/// The transcript view's split of the main area: the message list, and the replay panel.
pub fn layout_transcript(main: Rect, replay: bool) -> (Rect, Option<Rect>) {
    if !replay {
        return (main, None);
    }
    // The replay needs more room than the list it summarizes.
    let (list, rest) = layout::split_top(main, (main.height / 3).max(3));
    (list, Some(rest))
}

/// Lines an expanded row's text may take so the selected row always fits on screen.
pub fn expanded_cap(viewport: usize) -> usize {
    viewport.saturating_sub(2).max(1)
}

/// The expanded text of a row, wrapped, and whether more was cut.
pub fn expanded_lines(info: &MessageInfo, width: usize, viewport: usize) -> (Vec<String>, bool) {
    wrap_lines(
        &info.full_text(),
        width.saturating_sub(EXPANDED_INDENT).max(1),
        expanded_cap(viewport),
    )
}

/// Lines a row takes: one collapsed; expanded, its text plus a "more" line when cut.
pub fn row_height(
    info: &MessageInfo,
    expanded: &HashSet<u64>,
    width: usize,
    viewport: usize,
) -> usize {
    if !expanded.contains(&info.uid) {
        return 1;
    }
    let (lines, more) = expanded_lines(info, width, viewport);
    1 + lines.len() + usize::from(more)
}
