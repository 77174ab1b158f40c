//! The live view's part of `update` (it covers the panes while open): the settings and
//! the session to follow at start (`LiveMsg::Setup`), following a session (`ctxlab watch`,
//! `w` on a sessions browser row) as `Effect::Follow`, the follower's events folded into
//! the view with `Effect::Bell` for a compaction written while following (when the bell
//! is on), and the view's keys: move, `o`/Enter a row's full text, Esc closes it (and stops
//! its follower), `q` quits.

use crossterm::event::KeyEvent;

use super::{App, Effect};
use crate::session::watch::Chosen;
use crate::tui::keys::{self, Action};
use crate::tui::live::{LiveMsg, LiveView, row_full_text};

impl App {
    /// The followed session, when the live view is open.
    pub fn live_view(&self) -> Option<&LiveView> {
        self.live.view()
    }

    /// Whether a compaction written while following rings the terminal bell.
    pub fn bell_on_compaction(&self) -> bool {
        self.live.options().bell()
    }

    pub(super) fn on_live(&mut self, msg: LiveMsg) -> Vec<Effect> {
        match msg {
            LiveMsg::Setup(options) => {
                self.live.set_options(options);
                Vec::new()
            }
            LiveMsg::Event { id, event } => {
                let bell = self.live.options().bell();
                let Some(view) = self.live.view_mut().filter(|v| v.id() == id) else {
                    return Vec::new();
                };
                if view.fold(event) && bell {
                    vec![Effect::Bell]
                } else {
                    Vec::new()
                }
            }
            LiveMsg::AtRisk { id, risk } => {
                if let Some(view) = self.live.view_mut().filter(|v| v.id() == id) {
                    view.set_at_risk(*risk);
                }
                Vec::new()
            }
            LiveMsg::Ended { id, error } => {
                if let Some(view) = self.live.view_mut().filter(|v| v.id() == id) {
                    view.end(error);
                }
                Vec::new()
            }
        }
    }

    /// Follows `chosen` in the live view (a follower it replaces is stopped by the loop).
    pub fn follow_session(&mut self, chosen: Chosen) -> Vec<Effect> {
        vec![Effect::Follow(self.live.start(chosen))]
    }

    /// The session `ctxlab watch` named, once the loop runs.
    pub(super) fn live_start_effects(&mut self) -> Vec<Effect> {
        match self.live.take_start() {
            Some(chosen) => self.follow_session(chosen),
            None => Vec::new(),
        }
    }

    pub(super) fn live_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(action) = keys::action(&key) else {
            return Vec::new();
        };
        let page = self.page();
        let Some(view) = self.live.view_mut() else {
            return Vec::new();
        };
        match action {
            Action::Quit => return vec![Effect::Quit],
            Action::Help => self.screen.overlay = Some(super::Overlay::Help { top: 0 }),
            Action::Up => view.move_by(-1),
            Action::Down => view.move_by(1),
            Action::PageUp => view.move_by(-page),
            Action::PageDown => view.move_by(page),
            Action::Top => view.select(0),
            Action::Bottom => view.select(usize::MAX),
            Action::Enter | Action::OpenFull => {
                if let Some((title, text)) = view
                    .selected()
                    .and_then(|k| view.rows().get(k))
                    .map(row_full_text)
                {
                    let text = crate::sanitize::sanitize(&text).into_owned();
                    self.open_viewer(crate::sanitize::sanitize_line(&title).into_owned(), &text);
                }
            }
            Action::Back => {
                self.live.close();
                return vec![Effect::StopFollowing];
            }
            _ => {}
        }
        Vec::new()
    }
}
