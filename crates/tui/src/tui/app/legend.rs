//! The first-run legend (`l`; its text is `tui::legend`) as a view (`layers.rs`): its state
//! (the first row shown), its keys (scroll; closing it the first time asks for it to be
//! remembered, `?` opens the help in its place) and its drawing (`draw.rs`).

mod draw;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::help::scroll;
use super::{App, HelpView, Layer, Outcome, View};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};

/// The first-run legend, scrolled to `top`.
#[derive(Debug, Clone, Default)]
pub struct LegendView {
    top: usize,
}

impl View for LegendView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self.top);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let page = app.overlay_viewport().max(1);
        let len = crate::tui::legend::lines(
            &app.screen.theme,
            &app.agent.config,
            &app.notices(),
            app.screen.size,
        )
        .len();
        match keys::action(&key) {
            Some(
                a @ (Action::Back
                | Action::Enter
                | Action::Step
                | Action::Legend
                | Action::Quit
                | Action::Help),
            ) => {
                let effects = app.legend_seen();
                if a == Action::Help {
                    app.push_layer(Layer::Help(HelpView::default()));
                }
                return Outcome::Close(effects);
            }
            Some(a) => scroll(&mut self.top, a, len, page),
            None => {}
        }
        Outcome::Consumed
    }
}
