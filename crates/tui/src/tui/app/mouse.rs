//! The mouse: a view covering the panes takes every mouse event (`layers.rs`: the wheel
//! moves it, a click lands on it, never on what is drawn beneath). Otherwise the wheel
//! scrolls the pane under the cursor by a few rows, a click focuses the pane under it, and a
//! click on the gauge opens its detail (where the context goes, at the latest call).
//! Hit-testing uses the same layout function as drawing, so the two agree. Wheel scrolling
//! never opens anything, so it asks for no work.

use crossterm::event::{MouseEvent, MouseEventKind};

use super::{App, Effect, Pane};
use crate::tui::keys::Action;
use crate::tui::layout;

/// Rows one wheel notch moves.
const WHEEL_ROWS: isize = 3;

impl App {
    pub(super) fn on_mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if let Some(effects) = self.route_to_top(|view, app| view.mouse(m, app), None) {
            return effects;
        }
        let delta = match m.kind {
            MouseEventKind::ScrollUp => -WHEEL_ROWS,
            MouseEventKind::ScrollDown => WHEEL_ROWS,
            MouseEventKind::Down(_) => {
                self.click(m.column, m.row);
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        let action = if delta < 0 { Action::Up } else { Action::Down };
        let Some(a) = self.areas() else {
            return Vec::new();
        };
        let pane = if layout::contains(a.main, m.column, m.row) {
            self.screen.main
        } else if self.timeline_view.is_some()
            && layout::contains(layout::timeline_area(&a), m.column, m.row)
        {
            Pane::Timeline
        } else if layout::contains(a.events, m.column, m.row) {
            Pane::Events
        } else {
            return Vec::new();
        };
        for _ in 0..delta.unsigned_abs() {
            // Up and Down only move selections: the effects lists stay empty.
            match pane {
                Pane::Conversation => self.conversation_action(action),
                Pane::Events => self.events_action(action),
                Pane::Outputs => {
                    self.outputs_action(action);
                }
                Pane::Transcripts => {
                    self.transcripts_action(action);
                }
                Pane::Timeline => self.timeline_action(action),
                Pane::Input => {}
            }
        }
        Vec::new()
    }

    /// A click on the panes (no view covers them).
    fn click(&mut self, x: u16, y: u16) {
        let Some(a) = self.areas() else {
            return;
        };
        if layout::contains(a.main, x, y) {
            self.focus_pane_noeffect(self.screen.main);
        } else if self.timeline_view.is_some() && layout::contains(layout::timeline_area(&a), x, y)
        {
            self.focus_pane_noeffect(Pane::Timeline);
        } else if layout::contains(a.gauge, x, y) {
            self.context_at_latest();
        } else if layout::contains(a.events, x, y) {
            self.focus_pane_noeffect(Pane::Events);
        } else if layout::contains(a.input, x, y) {
            self.focus_pane_noeffect(Pane::Input);
        }
    }
}
