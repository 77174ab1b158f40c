//! Styles, in one place, with and without colour. With `NO_COLOR` every style is built from
//! modifiers only (bold, dim, underline, reverse, italic) so nothing depends on colour to be
//! read; stage rows also carry a letter tag for the same reason. Holds no state beyond the
//! colour switch.

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

    pub fn stage(&self, stage: Stage) -> Style {
        let (c, m) = match stage {
            Stage::ToolResultBudget => (Color::Magenta, Modifier::UNDERLINED),
            Stage::SnipCompact => (Color::Cyan, Modifier::ITALIC),
            Stage::MicroCompact => (Color::Blue, Modifier::UNDERLINED),
            Stage::FitToolResults => (Color::Green, Modifier::UNDERLINED),
            Stage::CompactHistory | Stage::AutoCompact => (Color::Yellow, Modifier::BOLD),
            Stage::ReactiveCompact => (Color::Red, Modifier::BOLD),
        };
        self.fg(c, m)
    }

    pub fn level(&self, level: Level) -> Style {
        match level {
            Level::Ok => self.fg(Color::Green, Modifier::empty()),
            Level::Warn => self.fg(Color::Yellow, Modifier::BOLD),
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

    pub fn selected(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Rgb(40, 44, 60))
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, true) => Style::new().fg(Color::Gray),
            (false, false) => Style::new(),
        }
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn role(&self, role: &str) -> Style {
        match role {
            "user" => self.fg(Color::LightBlue, Modifier::empty()),
            "assistant" => self.fg(Color::LightGreen, Modifier::empty()),
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
        self.fg(Color::Yellow, Modifier::ITALIC)
    }

    pub fn error(&self) -> Style {
        self.fg(Color::Red, Modifier::BOLD)
    }

    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow, Modifier::BOLD)
    }

    pub fn key(&self) -> Style {
        self.fg(Color::Cyan, Modifier::BOLD)
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
