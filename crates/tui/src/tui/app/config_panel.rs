//! The `/config` panel's state and keys (a `View`, `layers.rs`): a row per
//! `PipelineConfig` number, then the strategy's row. `j`/`k` select; Enter edits a number
//! (digits, Enter applies, Esc cancels); on the strategy row `h`/`l` (or Left/Right, Tab)
//! choose among the four at once, as the README says, and Enter applies the choice.
//! Applying sends `UserCommand::SetConfig`; the agent uses it from the next model call.
//! `draw.rs` draws it (`View::draw`) through the read-only methods.

mod draw;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Effect, Outcome, View};
use crate::agent::events::UserCommand;
use crate::compact::{PipelineConfig, Strategy};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};

/// The `/config` row that picks the strategy: after the numbers, so a number's row is its
/// index in `PipelineConfig::KEYS`.
pub const STRATEGY_ROW: usize = PipelineConfig::KEYS.len();

/// The panel: the selected row, the number being typed, the strategy being chosen, and the
/// last refusal.
#[derive(Debug, Clone, Default)]
pub struct ConfigPanel {
    selected: usize,
    /// The number being typed.
    editing: Option<String>,
    /// The strategy being chosen on the strategy row (not applied yet).
    choosing: Option<Strategy>,
    error: Option<String>,
}

impl ConfigPanel {
    /// The selected row: a key's index in `PipelineConfig::KEYS`, or `STRATEGY_ROW`.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The number being typed, while one is edited.
    fn editing(&self) -> Option<&str> {
        self.editing.as_deref()
    }

    /// The strategy shown on the strategy row while it is chosen and not yet applied.
    pub fn choosing(&self) -> Option<Strategy> {
        self.choosing.filter(|_| self.selected == STRATEGY_ROW)
    }

    /// Why the last value was refused.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The selected number's key; None on the strategy row.
    fn selected_key(&self) -> Option<&'static str> {
        PipelineConfig::KEYS.get(self.selected).copied()
    }

    /// Keys while a number is typed.
    fn edit_key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let Some(buf) = &mut self.editing else {
            return Outcome::Consumed;
        };
        match key.code {
            KeyCode::Esc => {
                self.editing = None;
                self.error = None;
            }
            KeyCode::Backspace => {
                buf.pop();
            }
            KeyCode::Char(c) if c.is_ascii_digit() || c == '_' || c == ',' => buf.push(c),
            KeyCode::Enter => {
                let value: String = buf.chars().filter(|c| *c != '_' && *c != ',').collect();
                let Some(key_name) = self.selected_key() else {
                    return Outcome::Consumed;
                };
                let mut config = app.agent.config;
                match config.set(key_name, &value) {
                    Ok(()) => {
                        self.editing = None;
                        self.error = None;
                        app.agent.config = config;
                        app.notify(format!("{key_name} = {value} (applies from the next call)"));
                        return Outcome::Effects(vec![Effect::Send(UserCommand::SetConfig(
                            config,
                        ))]);
                    }
                    Err(e) => self.error = Some(e.to_string()),
                }
            }
            _ => {}
        }
        Outcome::Consumed
    }

    /// Keys on the strategy row: left/right (h/l, Tab) move the choice through the four at
    /// once, Enter applies it (or starts the choice), Esc leaves it, Up/k leaves the row.
    fn strategy_key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let current = self.choosing.unwrap_or(app.agent.config.strategy);
        let at = Strategy::ALL
            .iter()
            .position(|s| *s == current)
            .unwrap_or(0);
        let n = Strategy::ALL.len();
        let step = match key.code {
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Tab => 1,
            KeyCode::Left | KeyCode::Char('h') | KeyCode::BackTab => n - 1,
            KeyCode::Esc if self.choosing.is_some() => {
                self.choosing = None;
                return Outcome::Consumed;
            }
            KeyCode::Enter if self.choosing.is_none() => {
                // The choice starts on the strategy in force; h/l move it.
                self.choosing = Some(current);
                self.error = None;
                return Outcome::Consumed;
            }
            KeyCode::Enter => return self.apply_strategy(current, app),
            _ => {
                self.choosing = None;
                return self.move_key(key);
            }
        };
        self.choosing = Some(Strategy::ALL[(at + step) % n]);
        self.error = None;
        Outcome::Consumed
    }

    fn apply_strategy(&mut self, chosen: Strategy, app: &mut App) -> Outcome {
        self.choosing = None;
        if chosen == app.agent.config.strategy {
            app.notify(format!("the strategy is already {chosen}"));
            return Outcome::Consumed;
        }
        let before = app.agent.config.strategy;
        // Numbers still at the old strategy's defaults take the new one's.
        let config = app.agent.config.with_strategy(chosen);
        app.agent.config = config;
        app.notify(format!(
            "strategy {before} -> {chosen} (applies from the next model call)"
        ));
        Outcome::Effects(vec![Effect::Send(UserCommand::SetConfig(config))])
    }

    /// Selection and closing, outside an edit.
    fn move_key(&mut self, key: KeyEvent) -> Outcome {
        let last = STRATEGY_ROW;
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => return Outcome::Close(Vec::new()),
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Down) => self.selected = (self.selected + 1).min(last),
            Some(Action::Top) => self.selected = 0,
            Some(Action::Bottom) => self.selected = last,
            // `?` and the keys every view shares are App's: the help opens over the panel.
            _ => return Outcome::Pass,
        }
        Outcome::Consumed
    }
}

impl View for ConfigPanel {
    fn help_section(&self) -> Option<&'static str> {
        Some(crate::tui::keys::section::CONFIG)
    }

    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        if self.editing.is_some() {
            return self.edit_key(key, app);
        }
        if self.selected == STRATEGY_ROW {
            return self.strategy_key(key, app);
        }
        if keys::action(&key) == Some(Action::Enter)
            && let Some(key_name) = self.selected_key()
        {
            self.editing = Some(
                app.agent
                    .config
                    .get(key_name)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            );
            self.error = None;
            return Outcome::Consumed;
        }
        self.move_key(key)
    }
}
