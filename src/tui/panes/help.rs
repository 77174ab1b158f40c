//! The `?` overlay: every key, from `keys::HELP` (the same table the key map documents).
//! Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{fit, pane_block};
use crate::tui::app::App;
use crate::tui::keys::HELP;
use crate::tui::layout::centered;

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
    let key_w = HELP
        .iter()
        .map(|(k, _)| crate::util::display_width(k))
        .max()
        .unwrap_or(0)
        + 4;
    let lines: Vec<Line> = HELP
        .iter()
        .skip(top)
        .take(inner.height as usize)
        .map(|(k, what)| {
            if k.is_empty() {
                Line::from(Span::styled(format!("── {what}"), app.theme.title()))
            } else {
                Line::from(vec![
                    Span::styled(fit(&format!("  {k}"), key_w), app.theme.key()),
                    Span::raw(*what),
                ])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
