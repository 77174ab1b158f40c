//! The "where the context goes" view (`w` in the timeline, in the conversation pane, a
//! click on the gauge; `w` in an opened session): every call of the timeline broken down
//! by category (`timeline::breakdown`), or of the opened session's recorded calls
//! (`breakdown::session`), taken when the view opens, and the selected call. Its keys (a
//! `View`, `layers.rs`) move the selection and close it; `draw.rs` draws it.

mod draw;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::explain::{ExplainView, call_paragraphs};
use super::{App, Layer, Outcome, View};
use crate::breakdown::CallBreakdown;
use crate::breakdown::session::SessionBreakdown;
use crate::timeline::breakdown::{TimelineBreakdown, of_timeline};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::section;

/// The view's state: the breakdown as of its opening and the selected call.
#[derive(Debug, Clone)]
pub struct ContextView {
    breakdown: TimelineBreakdown,
    /// Index into `breakdown.calls`.
    selected: usize,
    /// The workbench's own run (its usage is the provider's, synthetic when scripted), not
    /// an opened session's recorded calls.
    live: bool,
}

impl ContextView {
    /// The breakdown of `t`'s calls, on call index `selected`.
    pub fn of(t: &crate::timeline::Timeline, selected: usize) -> ContextView {
        let breakdown = of_timeline(t);
        let selected = selected.min(breakdown.calls.len().saturating_sub(1));
        ContextView {
            breakdown,
            selected,
            live: true,
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
            live: false,
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
    fn select_key(&mut self, key: KeyEvent) -> bool {
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
        self.layers().iter().find_map(|l| match l {
            Layer::Context(v) => Some(v),
            _ => None,
        })
    }

    /// Opens the view on the timeline's selected call.
    pub(super) fn open_context(&mut self) {
        if self.timeline().calls.is_empty() {
            self.notify("no model call yet: nothing to break down");
            return;
        }
        let selected = self.timeline_view().map_or(0, |v| v.selected());
        let view = ContextView::of(self.timeline(), selected);
        self.push_layer(Layer::Context(view));
    }
}

impl View for ContextView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        if key.code == KeyCode::Char('?') {
            return Outcome::Pass;
        }
        if key.code == KeyCode::Char('e') {
            // Opened on top; this view is put back beneath it (`route_to_top`).
            if let Some(call) = self.call() {
                let synthetic = self.live && app.api_is_synthetic();
                let text = call_paragraphs(call, &self.breakdown.counting, synthetic);
                let title = format!("What call {}'s bars are", call.call);
                app.push_layer(Layer::Explain(ExplainView::new(title, text)));
            }
            return Outcome::Consumed;
        }
        Outcome::stay_if(self.select_key(key))
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(section::CONTEXT)
    }

    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        Some(&[("h/l", "call"), ("e", "explain"), ("Esc", "close")])
    }
}
