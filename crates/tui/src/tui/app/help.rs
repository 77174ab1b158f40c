//! The help (`?`, `keys::HELP`'s rows) as a view (`layers.rs`): its state (the first row
//! shown), its keys (scroll, close) and its drawing (`draw.rs`). `help_at.rs` picks the
//! section it opens at.

mod draw;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Outcome, View};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};

/// The help overlay, scrolled to `top`.
#[derive(Debug, Clone, Default)]
pub struct HelpView {
    top: usize,
}

impl HelpView {
    /// The help scrolled to its row `top` (`?` opens it at the section of the view).
    pub fn at(top: usize) -> HelpView {
        HelpView { top }
    }
}

impl View for HelpView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self.top);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let page = app.overlay_viewport().max(1);
        // Help rows wrap at the overlay's width: scrolling counts the rows drawn.
        let len = keys::help_rows(app.overlay_inner().width as usize).len();
        match keys::action(&key) {
            Some(Action::Back | Action::Help | Action::Quit) => return Outcome::Close(Vec::new()),
            Some(a) => scroll(&mut self.top, a, len, page),
            None => {}
        }
        Outcome::Consumed
    }
}

/// Moves `top` as `action` asks over `len` rows, `page` of them shown (the legend scrolls
/// the same way).
pub(super) fn scroll(top: &mut usize, action: Action, len: usize, page: usize) {
    let max = len.saturating_sub(1);
    *top = match action {
        Action::Up => top.saturating_sub(1),
        Action::Down => (*top + 1).min(max),
        Action::PageUp => top.saturating_sub(page),
        Action::PageDown => (*top + page).min(max),
        Action::Top => 0,
        Action::Bottom => len.saturating_sub(page),
        _ => *top,
    };
}
