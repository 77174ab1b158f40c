//! The help, the legend and the config panel as views (`layers.rs`): help and the legend
//! scroll and close (closing the legend the first time asks for it to be remembered); the
//! config panel selects a threshold, edits it and sends the new config to the agent
//! (`UserCommand::SetConfig`). The diff (`diff_view.rs`) and the viewer (`viewer.rs`) have
//! their own modules. A view opened from another (the viewer from a diff) sits on top of it
//! and returns to it when closed.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, ConfigPanel, Effect, Layer, Outcome, View, Viewer, ViewerKey};
use crate::agent::events::UserCommand;
use crate::compact::{PipelineConfig, Strategy};
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

impl View for ConfigPanel {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let panel = self;
        // The numbers, then the strategy's row (`STRATEGY_ROW`).
        let keys_n = PipelineConfig::KEYS.len();
        let rows_n = keys_n + 1;
        if panel.selected == STRATEGY_ROW && panel.choosing.is_some() {
            return strategy_key(panel, key, app);
        }
        if let Some(buf) = &mut panel.editing {
            match key.code {
                KeyCode::Esc => {
                    panel.editing = None;
                    panel.error = None;
                }
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Char(c) if c.is_ascii_digit() || c == '_' || c == ',' => buf.push(c),
                KeyCode::Enter => {
                    let key_name = PipelineConfig::KEYS[panel.selected.min(keys_n - 1)];
                    let value: String = buf.chars().filter(|c| *c != '_' && *c != ',').collect();
                    let mut config = app.agent.config;
                    match config.set(key_name, &value) {
                        Ok(()) => {
                            panel.editing = None;
                            panel.error = None;
                            app.agent.config = config;
                            app.notify(format!(
                                "{key_name} = {value} (applies from the next call)"
                            ));
                            return Outcome::Effects(vec![Effect::Send(UserCommand::SetConfig(
                                config,
                            ))]);
                        }
                        Err(e) => panel.error = Some(e.to_string()),
                    }
                }
                _ => {}
            }
            return Outcome::Consumed;
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => return Outcome::Close(Vec::new()),
            Some(Action::Up) => panel.selected = panel.selected.saturating_sub(1),
            Some(Action::Down) => panel.selected = (panel.selected + 1).min(rows_n - 1),
            Some(Action::Top) => panel.selected = 0,
            Some(Action::Bottom) => panel.selected = rows_n - 1,
            Some(Action::Enter) if panel.selected == STRATEGY_ROW => {
                // The choice starts on the strategy in force; h/l move it.
                panel.choosing = Some(app.agent.config.strategy);
                panel.error = None;
            }
            Some(Action::Enter) => {
                let key_name = PipelineConfig::KEYS[panel.selected.min(keys_n - 1)];
                panel.editing = Some(
                    app.agent
                        .config
                        .get(key_name)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                );
                panel.error = None;
            }
            _ => {}
        }
        Outcome::Consumed
    }
}

/// The `/config` row that picks the strategy: after the numbers, so a number's row is its
/// index in `PipelineConfig::KEYS`.
pub const STRATEGY_ROW: usize = PipelineConfig::KEYS.len();

/// Keys while the strategy row is being chosen: left/right (or h/l, j/k, Tab) move
/// through the four strategies, Enter sends the choice, Esc leaves it.
fn strategy_key(panel: &mut ConfigPanel, key: KeyEvent, app: &mut App) -> Outcome {
    let current = panel.choosing.unwrap_or(app.agent.config.strategy);
    let at = Strategy::ALL
        .iter()
        .position(|s| *s == current)
        .unwrap_or(0);
    let n = Strategy::ALL.len();
    let step = match key.code {
        KeyCode::Right | KeyCode::Char('l') | KeyCode::Char('j') | KeyCode::Tab => 1,
        KeyCode::Left | KeyCode::Char('h') | KeyCode::Char('k') | KeyCode::BackTab => n - 1,
        KeyCode::Esc => {
            panel.choosing = None;
            return Outcome::Consumed;
        }
        KeyCode::Enter => {
            panel.choosing = None;
            if current == app.agent.config.strategy {
                app.notify(format!("the strategy is already {current}"));
                return Outcome::Consumed;
            }
            let before = app.agent.config.strategy;
            // Numbers still at the old strategy's defaults take the new one's.
            let config = app.agent.config.with_strategy(current);
            app.agent.config = config;
            app.notify(format!(
                "strategy {before} -> {current} (applies from the next model call)"
            ));
            return Outcome::Effects(vec![Effect::Send(UserCommand::SetConfig(config))]);
        }
        _ => 0,
    };
    panel.choosing = Some(Strategy::ALL[(at + step) % n]);
    Outcome::Consumed
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
