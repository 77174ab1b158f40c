//! Styles, in one place, with and without colour. With `NO_COLOR` every style is built from
//! modifiers only (bold, dim, underline, reverse, italic) so nothing depends on colour to be
//! read; stage rows also carry a letter tag for the same reason. Holds no state beyond the
//! colour switch.
//!
//! Readable on dark and light terminals alike: text that must be read keeps the terminal's
//! own foreground; colour only marks short things (stage names and letters, roles, levels)
//! and uses the eight normal ANSI colours, which a terminal's theme tunes for its own
//! background, never yellow, light green or another bright colour that fades on white. The
//! selection is reverse video (the terminal's colours swapped), not a fixed background;
//! the two styles with a background (the PAUSED badge, a search match) set both colours.

use ratatui::style::{Color, Modifier, Style};

use crate::compact::Stage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

/// How full the context is, for the gauge's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warn,
    Danger,
}

/// Foreground colours that fade into a light (or dark) background: never used for text.
pub const FADING_COLORS: [Color; 8] = [
    Color::Yellow,
    Color::LightYellow,
    Color::LightGreen,
    Color::LightCyan,
    Color::LightBlue,
    Color::LightMagenta,
    Color::White,
    Color::Gray,
];

impl Theme {
    pub fn new(no_color: bool) -> Theme {
        Theme { color: !no_color }
    }

    fn fg(&self, c: Color, fallback: Modifier) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new().add_modifier(fallback)
        }
    }

    /// The one-letter tag a stage's rows carry (readable without colour).
    pub fn stage_tag(stage: Stage) -> &'static str {
        match stage {
            Stage::ToolResultBudget => "B",
            Stage::SnipCompact => "S",
            Stage::MicroCompact => "M",
            Stage::FitToolResults => "F",
            Stage::CompactHistory => "C",
            Stage::ReactiveCompact => "R",
            Stage::AutoCompact => "A",
        }
    }

    /// A stage's name and letter: its colour, bold so it holds on either background.
    pub fn stage(&self, stage: Stage) -> Style {
        let (c, m) = match stage {
            Stage::ToolResultBudget => (Color::Magenta, Modifier::UNDERLINED),
            Stage::SnipCompact => (Color::Cyan, Modifier::ITALIC),
            Stage::MicroCompact => (Color::Blue, Modifier::UNDERLINED),
            // Not yellow: it vanishes on a light background.
            Stage::FitToolResults => (Color::Blue, Modifier::ITALIC),
            Stage::CompactHistory | Stage::AutoCompact => (Color::Green, Modifier::BOLD),
            Stage::ReactiveCompact => (Color::Red, Modifier::BOLD),
        };
        if self.color {
            Style::new().fg(c).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(m)
        }
    }

    /// A row's label text after a stage touched it: the terminal's foreground (it must be
    /// read), with the stage's modifier; the letter beside it carries the colour.
    pub fn label(&self, stage: Stage) -> Style {
        let m = match stage {
            Stage::ToolResultBudget | Stage::MicroCompact => Modifier::UNDERLINED,
            Stage::SnipCompact | Stage::FitToolResults => Modifier::ITALIC,
            Stage::CompactHistory | Stage::ReactiveCompact | Stage::AutoCompact => Modifier::BOLD,
        };
        Style::new().add_modifier(m)
    }

    /// The letter of a row the paused stage is about to change.
    pub fn upcoming(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// The label of a row the paused stage is about to change.
    pub fn upcoming_label(&self) -> Style {
        Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
    }

    pub fn level(&self, level: Level) -> Style {
        match level {
            Level::Ok => self.fg(Color::Green, Modifier::empty()),
            Level::Warn => self
                .fg(Color::Magenta, Modifier::BOLD)
                .add_modifier(Modifier::BOLD),
            Level::Danger => self.fg(Color::Red, Modifier::BOLD | Modifier::REVERSED),
        }
    }

    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    /// The selection bar: the terminal's own colours swapped, whatever its background. Its
    /// foreground and background are reset so every span of the row reads the same.
    pub fn selected(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Reset)
                .bg(Color::Reset)
                .add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, true) => Style::new().fg(Color::DarkGray),
            (false, false) => Style::new(),
        }
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn role(&self, role: &str) -> Style {
        match role {
            "user" => self.fg(Color::Blue, Modifier::empty()),
            "assistant" => self.fg(Color::Magenta, Modifier::empty()),
            _ => Style::new(),
        }
    }

    pub fn removed(&self) -> Style {
        self.fg(Color::Red, Modifier::CROSSED_OUT)
    }

    pub fn added(&self) -> Style {
        self.fg(Color::Green, Modifier::BOLD)
    }

    pub fn changed(&self) -> Style {
        self.fg(Color::Magenta, Modifier::ITALIC)
    }

    pub fn error(&self) -> Style {
        self.fg(Color::Red, Modifier::BOLD)
    }

    /// Notices, loading lines, retries: the terminal's foreground in bold (yellow text
    /// vanishes on white), with a colour only as a hint.
    pub fn warn(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    /// A key in a hint: bold, in the terminal's foreground.
    pub fn key(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn highlight(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::UNDERLINED)
        }
    }

    pub fn paused(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
}
