//! Keys while an overlay is open: help and the legend scroll and close (closing the legend
//! the first time asks for it to be remembered); the diff (`diff_view.rs`) and the
//! viewer (`viewer.rs`) have their own keys; the config panel selects a threshold, edits
//! it and sends the new config to the agent (`UserCommand::SetConfig`). An overlay opened
//! from another (the viewer from a diff) returns to it when closed.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Effect, Overlay, Viewer, ViewerKey};
use crate::agent::events::UserCommand;
use crate::compact::{PipelineConfig, Strategy};
use crate::tui::keys::{self, Action};

impl App {
    pub(super) fn overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let page = self.overlay_viewport().max(1);
        let legend_len = match self.screen.overlay {
            Some(Overlay::Legend { .. }) => crate::tui::legend::lines(
                &self.screen.theme,
                &self.agent.config,
                &self.notices(),
                self.screen.size,
            )
            .len(),
            _ => 0,
        };
        // Help rows wrap at the overlay's width: scrolling counts the rows drawn.
        let help_len = match self.screen.overlay {
            Some(Overlay::Help { .. }) => {
                crate::tui::keys::help_rows(self.overlay_inner().width as usize).len()
            }
            _ => 0,
        };
        let Some(overlay) = &mut self.screen.overlay else {
            return Vec::new();
        };
        match overlay {
            Overlay::Help { top } => match keys::action(&key) {
                Some(Action::Back | Action::Help | Action::Quit) => self.close_overlay(),
                Some(a) => scroll(top, a, help_len, page),
                None => {}
            },
            Overlay::Legend { top } => match keys::action(&key) {
                Some(
                    Action::Back
                    | Action::Enter
                    | Action::Step
                    | Action::Legend
                    | Action::Quit
                    | Action::Help,
                ) => {
                    let help = keys::action(&key) == Some(Action::Help);
                    let effects = self.close_legend();
                    if help {
                        self.screen.overlay = Some(Overlay::Help { top: 0 });
                    }
                    return effects;
                }
                Some(a) => scroll(top, a, legend_len, page),
                None => {}
            },
            // `?` in the viewer (outside its search prompt) or a diff: that view's help.
            Overlay::Viewer(v) if key.code == KeyCode::Char('?') && !v.typing() => {
                self.open_help();
            }
            // `B` in the forgot view of a session file's compaction: fork before it.
            Overlay::Viewer(v) if keys::action(&key) == Some(Action::Fork) && !v.typing() => {
                return self.fork_from_viewer();
            }
            Overlay::Diff(_) if key.code == KeyCode::Char('?') => self.open_help(),
            Overlay::Diff(_) => {
                if let Some(a) = keys::action(&key) {
                    self.diff_key(a);
                }
            }
            Overlay::Viewer(_) => self.viewer_key(key),
            Overlay::Config(_) => return self.config_key(key),
        }
        Vec::new()
    }

    fn config_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(Overlay::Config(panel)) = &mut self.screen.overlay else {
            return Vec::new();
        };
        // The numbers, then the strategy's row (`STRATEGY_ROW`).
        let keys_n = PipelineConfig::KEYS.len();
        let rows_n = keys_n + 1;
        if panel.selected == STRATEGY_ROW && panel.editing.is_some() {
            return self.strategy_key(key);
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
                    let mut config = self.agent.config;
                    match config.set(key_name, &value) {
                        Ok(()) => {
                            panel.editing = None;
                            panel.error = None;
                            self.agent.config = config;
                            self.notify(format!(
                                "{key_name} = {value} (applies from the next call)"
                            ));
                            return vec![Effect::Send(UserCommand::SetConfig(config))];
                        }
                        Err(e) => panel.error = Some(e.to_string()),
                    }
                }
                _ => {}
            }
            return Vec::new();
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => self.close_overlay(),
            Some(Action::Up) => panel.selected = panel.selected.saturating_sub(1),
            Some(Action::Down) => panel.selected = (panel.selected + 1).min(rows_n - 1),
            Some(Action::Top) => panel.selected = 0,
            Some(Action::Bottom) => panel.selected = rows_n - 1,
            Some(Action::Enter) if panel.selected == STRATEGY_ROW => {
                // The choice starts on the strategy in force; h/l move it.
                panel.editing = Some(self.agent.config.strategy.name().to_string());
                panel.error = None;
            }
            Some(Action::Enter) => {
                let key_name = PipelineConfig::KEYS[panel.selected.min(keys_n - 1)];
                panel.editing = Some(
                    self.agent
                        .config
                        .get(key_name)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                );
                panel.error = None;
            }
            _ => {}
        }
        Vec::new()
    }
}

/// The `/config` row that picks the strategy: after the numbers, so a number's row is its
/// index in `PipelineConfig::KEYS`.
pub const STRATEGY_ROW: usize = PipelineConfig::KEYS.len();

impl App {
    /// Keys while the strategy row is being chosen: left/right (or h/l, j/k, Tab) move
    /// through the four strategies, Enter sends the choice, Esc leaves it.
    fn strategy_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(Overlay::Config(panel)) = &mut self.screen.overlay else {
            return Vec::new();
        };
        let current = panel
            .editing
            .as_deref()
            .and_then(|name| name.parse::<Strategy>().ok())
            .unwrap_or(self.agent.config.strategy);
        let at = Strategy::ALL
            .iter()
            .position(|s| *s == current)
            .unwrap_or(0);
        let n = Strategy::ALL.len();
        let step = match key.code {
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Char('j') | KeyCode::Tab => 1,
            KeyCode::Left | KeyCode::Char('h') | KeyCode::Char('k') | KeyCode::BackTab => n - 1,
            KeyCode::Esc => {
                panel.editing = None;
                return Vec::new();
            }
            KeyCode::Enter => {
                panel.editing = None;
                if current == self.agent.config.strategy {
                    self.notify(format!("the strategy is already {current}"));
                    return Vec::new();
                }
                let before = self.agent.config.strategy;
                // Numbers still at the old strategy's defaults take the new one's.
                let config = self.agent.config.with_strategy(current);
                self.agent.config = config;
                self.notify(format!(
                    "strategy {before} -> {current} (applies from the next model call)"
                ));
                return vec![Effect::Send(UserCommand::SetConfig(config))];
            }
            _ => 0,
        };
        panel.editing = Some(Strategy::ALL[(at + step) % n].name().to_string());
        Vec::new()
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
    /// Closes the overlay on top, back to the one it was opened from, if any.
    pub(super) fn close_overlay(&mut self) {
        self.screen.overlay = self.screen.overlay_stack.pop();
    }

    /// Opens the viewer over the current overlay (Esc returns to it).
    pub(super) fn open_viewer_over(&mut self, title: String, text: &str) {
        if let Some(o) = self.screen.overlay.take() {
            self.screen.overlay_stack.push(o);
        }
        self.open_viewer(title, text);
    }
}

impl App {
    /// Columns the viewer's text gets (the overlay minus the line numbers).
    pub(super) fn viewer_width(&self, v: &Viewer) -> usize {
        let num_w = v.lines().len().to_string().len().max(3);
        (self.overlay_inner().width as usize).saturating_sub(num_w + 1)
    }

    pub(super) fn viewer_key(&mut self, key: KeyEvent) {
        let page = self.overlay_viewport().max(1) as isize;
        let Some(Overlay::Viewer(v)) = &self.screen.overlay else {
            return;
        };
        let width = self.viewer_width(v).max(1);
        let Some(Overlay::Viewer(v)) = &mut self.screen.overlay else {
            return;
        };
        if v.key(key, width, page) == ViewerKey::Close {
            self.close_overlay();
        }
    }
}
