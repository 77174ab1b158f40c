//! The help and the legend as views (`layers.rs`): they scroll and close (closing the
//! legend the first time asks for it to be remembered); the config panel is
//! `config_panel.rs`. The diff (`diff_view.rs`) and the viewer (`viewer.rs`) have
//! their own modules. A view opened from another (the viewer from a diff) sits on top of it
//! and returns to it when closed.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Layer, Outcome, View, Viewer, ViewerKey};
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

    /// The first row shown.
    pub fn top(&self) -> usize {
        self.top
    }
}

/// The first-run legend, scrolled to `top`.
#[derive(Debug, Clone, Default)]
pub struct LegendView {
    top: usize,
}

impl LegendView {
    /// The first row shown.
    pub fn top(&self) -> usize {
        self.top
    }
}

impl View for HelpView {
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

impl View for LegendView {
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

fn scroll(top: &mut usize, action: Action, len: usize, page: usize) {
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

impl App {
    /// Columns the viewer's text gets (the overlay minus the line numbers).
    pub(super) fn viewer_width(&self, v: &Viewer) -> usize {
        let num_w = v.lines().len().to_string().len().max(3);
        (self.overlay_inner().width as usize).saturating_sub(num_w + 1)
    }
}

/// The viewer's keys are its own (`Viewer::key`); `App` gives it the width and the page.
impl View for Viewer {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        // `?` outside its search prompt: the viewer's help.
        if key.code == KeyCode::Char('?') && !self.typing() {
            return Outcome::Pass;
        }
        // `B` in the forgot view of a session file's compaction: fork before it.
        if keys::action(&key) == Some(Action::Fork) && !self.typing() {
            let source = self.fork_source().cloned();
            return Outcome::Effects(app.fork_from_viewer(source));
        }
        let page = app.overlay_viewport().max(1) as isize;
        let width = app.viewer_width(self).max(1);
        match Viewer::key(self, key, width, page) {
            ViewerKey::Close => Outcome::Close(Vec::new()),
            _ => Outcome::Consumed,
        }
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(Viewer::help_section(self))
    }
}
