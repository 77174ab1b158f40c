//! The `?` overlay: every key, from `keys::HELP` (the same table the key map documents),
//! long descriptions wrapped between words. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::draw::{DrawCtx, covering_frame};
use crate::tui::keys::{HelpRow, help_rows as rows};
use crate::tui::layout::centered;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, top: usize) {
    let r = centered(area, 90, 85);
    let title = Line::from(vec![
        Span::styled(" Keys ", ctx.theme.title()),
        Span::raw(format!(
            "· {} counts sizes in {} ",
            ctx.config.strategy,
            ctx.config.strategy.unit().label()
        )),
        Span::styled("(j/k scroll, Esc closes) ", ctx.theme.dim()),
    ]);
    let inner = covering_frame(f, r, title, ctx.theme);
    let lines: Vec<Line> = rows(inner.width as usize)
        .into_iter()
        .skip(top)
        .take(inner.height as usize)
        .map(|row| match row {
            HelpRow::Heading(what) => {
                Line::from(Span::styled(format!("── {what}"), ctx.theme.title()))
            }
            HelpRow::Key(keys, what) => {
                Line::from(vec![Span::styled(keys, ctx.theme.key()), Span::raw(what)])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
