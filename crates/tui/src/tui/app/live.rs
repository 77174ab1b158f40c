//! The live view's part of `update` (it covers the panes while open): the settings and
//! the session to follow at start (`LiveMsg::Setup`), following a session (`ctxlab watch`,
//! `w` on a sessions browser row) as `Effect::Follow`, the follower's events folded into
//! the view with `Effect::Bell` for a compaction written while following (when the bell
//! is on), and the view's keys: move, `o`/Enter a row's full text, Esc closes it (and stops
//! its follower), `q` quits; and its drawing (`draw.rs`). The view's state and fold are
//! `tui::live::LiveView`, which knows nothing of `App`.

mod draw;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Effect, HelpView, Layer, Outcome, View};
use crate::session::watch::Chosen;
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};
use crate::tui::live::{LiveMsg, LiveView, row_full_text};

impl App {
    /// The followed session, when the live view is open.
    pub fn live_view(&self) -> Option<&LiveView> {
        self.layers().iter().find_map(|l| match l {
            Layer::Live(v) => Some(v),
            _ => None,
        })
    }

    /// The live view following `id` (a replaced follower's events find none).
    fn live_view_of(&mut self, id: u64) -> Option<&mut LiveView> {
        self.layers.iter_mut().find_map(|l| match l {
            Layer::Live(v) if v.id() == id => Some(v),
            _ => None,
        })
    }

    pub(super) fn on_live(&mut self, msg: LiveMsg) -> Vec<Effect> {
        match msg {
            LiveMsg::Setup(options) => {
                self.live.set_options(options);
                Vec::new()
            }
            LiveMsg::Event { id, event } => {
                let bell = self.live.options().bell();
                let Some(view) = self.live_view_of(id) else {
                    return Vec::new();
                };
                if view.fold(event) && bell {
                    vec![Effect::Bell]
                } else {
                    Vec::new()
                }
            }
            LiveMsg::AtRisk { id, risk } => {
                if let Some(view) = self.live_view_of(id) {
                    view.set_at_risk(*risk);
                }
                Vec::new()
            }
            LiveMsg::Ended { id, error } => {
                if let Some(view) = self.live_view_of(id) {
                    view.end(error);
                }
                Vec::new()
            }
        }
    }

    /// Follows `chosen` in the live view, opened on top (a follower it replaces is stopped
    /// by the loop).
    pub(super) fn follow_session(&mut self, chosen: Chosen) -> Vec<Effect> {
        let (view, request) = self.live.start(chosen);
        self.push_layer(Layer::Live(view));
        vec![Effect::Follow(request)]
    }

    /// The session `ctxlab watch` named, once the loop runs: its live view is the
    /// workbench's first screen, with nothing beneath to return to, so Esc quits.
    pub(super) fn live_start_effects(&mut self) -> Vec<Effect> {
        match self.live.take_start() {
            Some(chosen) => {
                let (mut view, request) = self.live.start(chosen);
                view.set_root();
                self.push_layer(Layer::Live(view));
                vec![Effect::Follow(request)]
            }
            None => Vec::new(),
        }
    }
}

impl View for LiveView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let Some(action) = keys::action(&key) else {
            return Outcome::Consumed;
        };
        let page = app.page();
        let view = self;
        match action {
            Action::Quit => return Outcome::Effects(vec![Effect::Quit]),
            Action::Help => app.push_layer(Layer::Help(HelpView::default())),
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
                    app.open_viewer(crate::sanitize::sanitize_line(&title).into_owned(), &text);
                }
            }
            // `ctxlab watch`'s own view: nothing beneath it to return to (issue 38: Esc
            // dropped into an idle scripted workbench).
            Action::Back if view.root() => return Outcome::Effects(vec![Effect::Quit]),
            // Closing the view stops its follower.
            Action::Back => return Outcome::Close(vec![Effect::StopFollowing]),
            _ => {}
        }
        Outcome::Consumed
    }

    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        if self.root() {
            return Some(&[
                ("j/k", "move"),
                ("o", "text"),
                ("G", "latest"),
                ("Esc", "quit"),
            ]);
        }
        Some(&[
            ("j/k", "move"),
            ("o", "text"),
            ("G", "latest"),
            ("Esc", "close"),
        ])
    }
}
