//! Selection and scrolling of one list: `ListState` (selected row, first row drawn,
//! expanded rows) and the row-height helpers the panes share with it, so drawing and
//! scrolling agree on how tall a row is. A leaf: the workbench's state, the sessions
//! browser and the drawing all use it.

use std::collections::HashSet;

use ratatui::layout::Rect;

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
    pub(crate) fn clamp(&mut self, len: usize) {
        if len == 0 {
            self.selected = 0;
            self.top = 0;
        } else {
            self.selected = self.selected.min(len - 1);
            self.top = self.top.min(self.selected);
        }
    }

    pub(crate) fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            return;
        }
        let s = self.selected as isize + delta;
        self.selected = s.clamp(0, len as isize - 1) as usize;
    }

    /// Applies a movement key; false when `action` is not one.
    pub(crate) fn apply(&mut self, action: Action, len: usize, page: isize) -> bool {
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
    pub(crate) fn toggle(&mut self, uid: u64) {
        if !self.expanded.remove(&uid) {
            self.expanded.insert(uid);
        }
    }

    /// Moves `top` so the selected row fits in `viewport` lines, and pulls it back when
    /// rows below leave free space (after the list shrank or the screen grew).
    /// Keeps the selection among `len` message rows and on a `w` x `h` screen, each row as
    /// tall as `row_height` makes it (expanded rows show their text).
    pub(crate) fn fit_rows<'a>(
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

    pub(crate) fn ensure_visible(
        &mut self,
        len: usize,
        viewport: usize,
        height: impl Fn(usize) -> usize,
    ) {
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
