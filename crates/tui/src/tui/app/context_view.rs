//! The "where the context goes" view (`w` in the timeline, in the conversation pane, a
//! click on the gauge; `w` in an opened session): every call of the timeline broken down
//! by category (`timeline::breakdown`), or of the opened session's recorded calls
//! (`breakdown::session`), taken when the view opens, and the selected call. Its keys move the selection and close it; `panes::context` draws it.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Effect};
use crate::breakdown::CallBreakdown;
use crate::breakdown::session::SessionBreakdown;
use crate::timeline::breakdown::{TimelineBreakdown, of_timeline};

/// The view's state: the breakdown as of its opening and the selected call.
#[derive(Debug, Clone)]
pub struct ContextView {
    breakdown: TimelineBreakdown,
    /// Index into `breakdown.calls`.
    selected: usize,
}

impl ContextView {
    /// The breakdown of `t`'s calls, on call index `selected`.
    pub fn of(t: &crate::timeline::Timeline, selected: usize) -> ContextView {
        let breakdown = of_timeline(t);
        let selected = selected.min(breakdown.calls.len().saturating_sub(1));
        ContextView {
            breakdown,
            selected,
        }
    }

    /// A recorded session's calls (`breakdown::session`), on call index `selected`.
    pub fn of_session(b: SessionBreakdown, selected: usize) -> ContextView {
        let breakdown = TimelineBreakdown {
            counting: b.counting,
            calls: b.calls,
        };
        let selected = selected.min(breakdown.calls.len().saturating_sub(1));
        ContextView {
            breakdown,
            selected,
        }
    }

    pub fn breakdown(&self) -> &TimelineBreakdown {
        &self.breakdown
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The selected call's breakdown.
    pub fn call(&self) -> Option<&CallBreakdown> {
        self.breakdown.calls.get(self.selected)
    }

    /// Moves the selection; returns false for a key that closes the view.
    fn key(&mut self, key: KeyEvent) -> bool {
        let last = self.breakdown.calls.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q' | 'w') => return false,
            KeyCode::Left | KeyCode::Up | KeyCode::Char('h' | 'k') => {
                self.selected = self.selected.saturating_sub(1)
            }
            KeyCode::Right | KeyCode::Down | KeyCode::Char('l' | 'j') => {
                self.selected = (self.selected + 1).min(last)
            }
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            _ => {}
        }
        true
    }
}

impl App {
    /// The context view, when open.
    pub fn context_view(&self) -> Option<&ContextView> {
        self.context.as_ref()
    }

    /// Opens the view on the timeline's selected call.
    pub(super) fn open_context(&mut self) {
        if self.timeline().calls.is_empty() {
            self.notify("no model call yet: nothing to break down");
            return;
        }
        let selected = self.timeline_view().map_or(0, |v| v.selected());
        self.context = Some(ContextView::of(self.timeline(), selected));
    }

    pub(super) fn context_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.code == KeyCode::Char('?') {
            self.open_help();
            return Vec::new();
        }
        if let Some(v) = &mut self.context
            && !v.key(key)
        {
            self.context = None;
        }
        Vec::new()
    }
}
