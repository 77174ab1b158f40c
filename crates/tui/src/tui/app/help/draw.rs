//! The `?` overlay: every key, from `keys::HELP` (the same table the key map documents),
//! long descriptions wrapped between words. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::App;
use crate::tui::draw::covering_frame;
use crate::tui::keys::{HelpRow, help_rows as rows};
use crate::tui::layout::centered;

pub(super) fn render(app: &App, f: &mut Frame, area: Rect, top: usize) {
    let r = centered(area, 90, 85);
    let title = Line::from(vec![
        Span::styled(" Keys ", app.theme().title()),
        Span::raw(format!(
            "· {} counts sizes in {} ",
            app.config().strategy,
            app.config().strategy.unit().label()
        )),
        Span::styled("(j/k scroll, Esc closes) ", app.theme().dim()),
    ]);
    let inner = covering_frame(f, r, title, app.theme());
    let lines: Vec<Line> = rows(inner.width as usize)
        .into_iter()
        .skip(top)
        .take(inner.height as usize)
        .map(|row| match row {
            HelpRow::Heading(what) => {
                Line::from(Span::styled(format!("── {what}"), app.theme().title()))
            }
            HelpRow::Key(keys, what) => {
                Line::from(vec![Span::styled(keys, app.theme().key()), Span::raw(what)])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
