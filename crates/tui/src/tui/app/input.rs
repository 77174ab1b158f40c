//! The input box: typing, new lines (Alt-/Shift-Enter, Ctrl-J), recalling earlier inputs
//! with Up/Down, Space to step in step mode (an empty line's Space never types there), and
//! submitting. A submitted line that starts with `/` is parsed into a `SlashCommand`
//! (`/compact [focus]`, `/config`, `/step`, `/pace MS`, `/restart`, `/export [file]`,
//! `/help`, `/quit`); anything else goes to the agent as a request. After a command, and
//! after a request in step mode, focus leaves the box so the step keys are keys again.

pub mod draw;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, TextArea};

use std::time::Duration;

use super::{App, ConfigPanel, Effect, HelpView, Layer, Pane};
use crate::agent::events::UserCommand;

/// A command typed in the input box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/compact [focus]`: compact the history now, optionally saying what to keep.
    Compact { focus: Option<String> },
    /// `/config`: open the thresholds panel.
    Config,
    /// `/step`: toggle step mode.
    Step,
    /// `/export [FILE]`: write the timeline as one HTML page.
    Export { file: Option<String> },
    /// `/pace MS`: the scripted model's pause between streamed pieces; None when MS is
    /// missing or not a whole number.
    Pace(Option<u64>),
    /// `/restart`: the scenario from the start, in a fresh workspace.
    Restart,
    /// `/compare [A,B,...|all]`: the compare view, with the strategies named (empty:
    /// the default pair).
    Compare { strategies: String },
    /// `/help`: the keys overlay.
    Help,
    /// `/quit`.
    Quit,
    /// Anything else after a `/`: its name, for the message.
    Unknown(String),
}

impl SlashCommand {
    /// The command in `text`, or None when `text` (trimmed) does not start with `/`.
    pub fn parse(text: &str) -> Option<SlashCommand> {
        let cmd = text.trim().strip_prefix('/')?;
        let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        let rest = rest.trim();
        Some(match name {
            "compact" => SlashCommand::Compact {
                focus: (!rest.is_empty()).then(|| rest.to_string()),
            },
            "config" => SlashCommand::Config,
            "step" => SlashCommand::Step,
            "export" => SlashCommand::Export {
                file: (!rest.is_empty()).then(|| rest.to_string()),
            },
            "pace" => SlashCommand::Pace(rest.replace('_', "").parse().ok()),
            "restart" => SlashCommand::Restart,
            "help" => SlashCommand::Help,
            "compare" => SlashCommand::Compare {
                strategies: rest.to_string(),
            },
            "quit" => SlashCommand::Quit,
            other => SlashCommand::Unknown(other.to_string()),
        })
    }
}

/// The input box's state, owned here: the text being typed, the inputs sent before (for
/// Up / Down) and where the recall is, with the draft it left. `App` routes keys and
/// pastes to it while the box has focus; `draw.rs` draws `area()`.
#[derive(Debug, Clone, Default)]
pub struct InputState {
    area: TextArea<'static>,
    /// Every input submitted, oldest first (the same text twice in a row is kept once).
    history: Vec<String>,
    /// The earlier input shown, while walking them.
    recall: Option<usize>,
    /// What was typed before the walk began.
    draft: String,
}

impl InputState {
    /// The text area as drawn.
    pub fn area(&self) -> &TextArea<'static> {
        &self.area
    }

    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    /// Lines the text takes.
    pub fn line_count(&self) -> usize {
        self.area.lines().len()
    }

    /// The inputs submitted so far, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Takes over the inputs `old` sent (a fresh box after `/restart`).
    pub(super) fn take_history(&mut self, old: &mut InputState) {
        self.history = std::mem::take(&mut old.history);
    }

    pub(super) fn insert_str(&mut self, text: &str) {
        self.area.insert_str(text);
    }

    pub(super) fn insert_char(&mut self, c: char) {
        self.area.insert_char(c);
    }

    /// A key that edits the text (not one of the box's own keys).
    fn edit(&mut self, key: KeyEvent) {
        self.area.input(key);
    }

    /// Replaces the text (a fresh area: the caller styles it again).
    fn set_text(&mut self, text: &str) {
        self.area = TextArea::new(text.split('\n').map(str::to_string).collect());
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
    }

    /// Walks the earlier inputs: -1 older, +1 newer (past the newest: the draft).
    fn recall(&mut self, dir: isize) {
        if self.history.is_empty() {
            return;
        }
        let next = match (self.recall, dir < 0) {
            (None, true) => {
                self.draft = self.text();
                Some(self.history.len() - 1)
            }
            (None, false) => return,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), false) => None,
        };
        self.recall = next;
        let text = match next {
            Some(i) => self.history[i].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.set_text(&text);
    }

    /// Takes the text to submit (None when blank), remembers it and empties the box.
    fn take(&mut self) -> Option<String> {
        let text = self.text();
        if text.trim().is_empty() {
            return None;
        }
        if self.history.last().map(String::as_str) != Some(text.as_str()) {
            self.history.push(text.clone());
        }
        self.recall = None;
        self.draft.clear();
        self.set_text("");
        Some(text)
    }

    /// The box shows its cursor only while focused.
    fn style(&mut self, focused: bool, placeholder: Style) {
        self.area.set_cursor_line_style(Style::default());
        self.area.set_cursor_style(if focused {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        });
        self.area.set_placeholder_text(PLACEHOLDER);
        self.area.set_placeholder_style(placeholder);
    }
}

const PLACEHOLDER: &str =
    "type a request; Enter sends; /compact /config /step /pace /restart /export";

impl App {
    /// The input box's state.
    pub fn input(&self) -> &InputState {
        &self.input
    }

    pub(super) fn input_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let row = self.input.area.cursor().0;
        match key.code {
            KeyCode::Esc => self.focus_pane_noeffect(self.screen.main),
            KeyCode::Tab => return self.cycle_pane(1),
            KeyCode::BackTab => return self.cycle_pane(-1),
            KeyCode::Enter if alt || shift => self.input.area.insert_newline(),
            // Terminals that cannot tell Shift-Enter apart send Ctrl-J for a new line.
            KeyCode::Char('j') if ctrl => self.input.area.insert_newline(),
            KeyCode::Enter => return self.submit(),
            KeyCode::Up if row == 0 => {
                self.input.recall(-1);
                self.style_input();
            }
            KeyCode::Down if row + 1 >= self.input.line_count() => {
                self.input.recall(1);
                self.style_input();
            }
            // In step mode an empty line's Space is the step key, never a typed space (a
            // space typed while the agent was busy used to block every later step).
            KeyCode::Char(' ')
                if self.input.is_empty() && (self.step.paused().is_some() || self.step.mode()) =>
            {
                return self.step();
            }
            _ => self.input.edit(key),
        }
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Effect> {
        let Some(text) = self.input.take() else {
            return Vec::new();
        };
        self.style_input();
        match SlashCommand::parse(&text) {
            Some(cmd) => {
                if !matches!(cmd, SlashCommand::Unknown(_)) {
                    self.focus_pane_noeffect(self.screen.main);
                }
                self.run_slash(cmd)
            }
            None => {
                if self.step.mode() {
                    self.focus_pane_noeffect(self.screen.main);
                }
                vec![Effect::Send(UserCommand::Submit(text))]
            }
        }
    }

    fn run_slash(&mut self, cmd: SlashCommand) -> Vec<Effect> {
        match cmd {
            SlashCommand::Compact { focus } => vec![Effect::Send(UserCommand::Compact { focus })],
            SlashCommand::Config => {
                self.push_layer(Layer::Config(ConfigPanel::default()));
                Vec::new()
            }
            SlashCommand::Step => self.toggle_step_mode(),
            SlashCommand::Pace(Some(ms)) => {
                vec![Effect::Send(UserCommand::SetPace(Duration::from_millis(
                    ms,
                )))]
            }
            SlashCommand::Pace(None) => {
                self.notify("usage: /pace MS (milliseconds between streamed pieces, 0 = instant)");
                Vec::new()
            }
            SlashCommand::Restart => {
                self.notify("restarting: a fresh agent and workspace…");
                vec![Effect::Restart]
            }
            SlashCommand::Help => {
                self.push_layer(Layer::Help(HelpView::default()));
                Vec::new()
            }
            SlashCommand::Export { file } => vec![self.export(file)],
            SlashCommand::Compare { strategies } if strategies.is_empty() => {
                self.open_compare_default(None)
            }
            SlashCommand::Compare { strategies } => match super::parse_strategies(&strategies) {
                Ok(list) => self.open_compare_default(Some(list)),
                Err(e) => {
                    self.notify(format!("/compare: {e}"));
                    Vec::new()
                }
            },
            SlashCommand::Quit => vec![Effect::Quit],
            SlashCommand::Unknown(name) => {
                self.notify(format!(
                    "unknown command /{name}: /compact [focus], /config, /step, /pace MS, \
                     /restart, /export [file], /compare [a,b], /help, /quit"
                ));
                Vec::new()
            }
        }
    }

    /// The input box shows its cursor only while focused.
    pub(super) fn style_input(&mut self) {
        let placeholder = self.screen.theme.dim();
        self.input
            .style(self.screen.focus == Pane::Input, placeholder);
    }
}

#[cfg(test)]
mod tests {
    use super::SlashCommand::{self, *};

    fn parse(s: &str) -> Option<SlashCommand> {
        SlashCommand::parse(s)
    }

    #[test]
    fn compact_takes_an_optional_focus() {
        assert_eq!(parse("/compact"), Some(Compact { focus: None }));
        assert_eq!(parse("/compact   "), Some(Compact { focus: None }));
        assert_eq!(
            parse("  /compact  parser errors  "),
            Some(Compact {
                focus: Some("parser errors".into())
            })
        );
        // A focus may span lines (Alt-Enter in the box).
        assert_eq!(
            parse("/compact keep\nthe lexer"),
            Some(Compact {
                focus: Some("keep\nthe lexer".into())
            })
        );
    }

    #[test]
    fn export_takes_an_optional_file() {
        assert_eq!(parse("/export"), Some(Export { file: None }));
        assert_eq!(
            parse("/export  out/tour.html "),
            Some(Export {
                file: Some("out/tour.html".into())
            })
        );
    }

    #[test]
    fn pace_takes_milliseconds() {
        assert_eq!(parse("/pace 200"), Some(Pace(Some(200))));
        assert_eq!(parse("/pace 1_000"), Some(Pace(Some(1_000))));
        assert_eq!(parse("/pace 0"), Some(Pace(Some(0))));
        assert_eq!(parse("/pace"), Some(Pace(None)));
        assert_eq!(parse("/pace fast"), Some(Pace(None)));
        assert_eq!(parse("/pace -5"), Some(Pace(None)));
    }

    #[test]
    fn the_other_commands_take_no_arguments() {
        assert_eq!(parse("/config"), Some(Config));
        assert_eq!(parse("/step"), Some(Step));
        assert_eq!(parse("/restart"), Some(Restart));
        assert_eq!(parse("/help"), Some(Help));
        assert_eq!(parse("/quit"), Some(Quit));
    }

    #[test]
    fn unknown_names_are_kept_and_plain_text_is_no_command() {
        assert_eq!(parse("/compcat x"), Some(Unknown("compcat".into())));
        assert_eq!(parse("/"), Some(Unknown(String::new())));
        // Names are exact: no prefixes, no case folding.
        assert_eq!(parse("/Compact"), Some(Unknown("Compact".into())));
        assert_eq!(parse("/compacting"), Some(Unknown("compacting".into())));
        assert_eq!(parse("fix /compact"), None);
        assert_eq!(parse("hello"), None);
        assert_eq!(parse(""), None);
    }
}
