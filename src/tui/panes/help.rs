//! The `?` overlay: every key, from `keys::HELP` (the same table the key map documents),
//! long descriptions wrapped between words. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{fit, pane_block};
use crate::tui::app::App;
use crate::tui::keys::HELP;
use crate::tui::layout::centered;
use crate::tui::pause::wrap_words;

pub fn render(app: &App, f: &mut Frame, area: Rect, top: usize) {
    let r = centered(area, 90, 85);
    f.render_widget(Clear, r);
    let title = Line::from(vec![
        Span::styled(" Keys ", app.theme.title()),
        Span::raw(format!(
            "· {} counts sizes in {} ",
            app.config.strategy,
            super::unit_tag(app)
        )),
        Span::styled("(j/k scroll, Esc closes) ", app.theme.dim()),
    ]);
    let block = pane_block(title, true, &app.theme);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let lines: Vec<Line> = rows(inner.width as usize)
        .into_iter()
        .skip(top)
        .take(inner.height as usize)
        .map(|row| match row {
            HelpRow::Heading(what) => {
                Line::from(Span::styled(format!("── {what}"), app.theme.title()))
            }
            HelpRow::Key(keys, what) => {
                Line::from(vec![Span::styled(keys, app.theme.key()), Span::raw(what)])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// One screen row of the help.
pub enum HelpRow {
    Heading(&'static str),
    /// The keys' column (blank on a description's later rows) and a row of the description.
    Key(String, String),
}

/// The help's rows at `width` columns: a description too long for the room beside the keys
/// wraps between words onto rows of its own. Scrolling counts these rows.
pub fn rows(width: usize) -> Vec<HelpRow> {
    let key_w = HELP
        .iter()
        .map(|(k, _)| crate::util::display_width(k))
        .max()
        .unwrap_or(0)
        + 4;
    let text_w = width.saturating_sub(key_w).max(10);
    let mut out = Vec::new();
    for (k, what) in HELP {
        if k.is_empty() {
            out.push(HelpRow::Heading(what));
            continue;
        }
        for (i, piece) in wrap_words(what, text_w).into_iter().enumerate() {
            let keys = if i == 0 {
                fit(&format!("  {k}"), key_w)
            } else {
                " ".repeat(key_w)
            };
            out.push(HelpRow::Key(keys, piece));
        }
    }
    out
}
