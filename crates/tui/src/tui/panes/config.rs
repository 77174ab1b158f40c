//! The `/config` panel: every `PipelineConfig` key with its value, then the strategy; the
//! selected one can be edited (the strategy chosen among the four) and applied
//! (`App::update` sends `UserCommand::SetConfig`). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::covering_frame;
use super::fit;
use crate::compact::PipelineConfig;
use crate::tui::app::{App, ConfigPanel, STRATEGY_ROW};
use crate::tui::layout::centered;
use crate::util::group_digits;

pub fn render(app: &App, f: &mut Frame, area: Rect, panel: &ConfigPanel) {
    let r = centered(area, 70, 80);
    let title = Line::from(vec![
        Span::styled(" Pipeline config ", app.theme().title()),
        Span::styled("(applies from the next model call) ", app.theme().dim()),
    ]);
    let inner = covering_frame(f, r, title, app.theme());
    let mut lines = Vec::new();
    for (i, key) in PipelineConfig::KEYS.iter().enumerate() {
        let value = app.config().get(key).map(group_digits).unwrap_or_default();
        let selected = i == panel.selected;
        let shown = match (&panel.editing, selected) {
            (Some(buf), true) => format!("[{buf}▏]"),
            _ => value,
        };
        let mut line = Line::from(vec![
            Span::raw(if selected { "› " } else { "  " }),
            Span::raw(fit(key, 22)),
            Span::styled(
                shown,
                if selected && panel.editing.is_some() {
                    app.theme().key()
                } else {
                    ratatui::style::Style::new()
                },
            ),
        ]);
        if selected {
            line = super::selected_line(line, app.theme());
        }
        lines.push(line);
    }
    lines.push(strategy_line(app, panel));
    lines.push(Line::from(""));
    if let Some(e) = &panel.error {
        lines.push(Line::from(Span::styled(
            fit(e, inner.width as usize),
            app.theme().error(),
        )));
    }
    let help = if panel.choosing.is_some() && panel.selected == STRATEGY_ROW {
        "h/l choose · Enter apply (from the next model call) · Esc cancel"
    } else if panel.editing.is_some() {
        "type digits · Enter apply · Esc cancel"
    } else {
        "j/k select · Enter edit · Esc close"
    };
    lines.push(Line::from(Span::styled(help, app.theme().dim())));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The strategy's row: the one in force, or the one being chosen with what it does.
fn strategy_line<'a>(app: &App, panel: &ConfigPanel) -> Line<'a> {
    let selected = panel.selected == STRATEGY_ROW;
    let choosing = panel.choosing.filter(|_| selected);
    let mut line = match choosing {
        Some(s) => Line::from(vec![
            Span::raw("› "),
            Span::raw(fit("strategy", 22)),
            Span::styled(format!("‹ {s} ›"), app.theme().key()),
            Span::styled(format!("  {}", s.describe()), app.theme().dim()),
        ]),
        None => Line::from(vec![
            Span::raw(if selected { "› " } else { "  " }),
            Span::raw(fit("strategy", 22)),
            Span::raw(app.config().strategy.name().to_string()),
            Span::styled(
                if selected { "  Enter to switch" } else { "" },
                app.theme().dim(),
            ),
        ]),
    };
    if selected {
        line = super::selected_line(line, app.theme());
    }
    line
}
