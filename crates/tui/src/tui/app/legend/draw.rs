//! The first-run legend overlay (its text is `tui::legend`). Shown at the first start until
//! dismissed, and with `l`. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::draw::{DrawCtx, covering_frame};
use crate::tui::legend::{lines, rect};

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, top: usize) {
    let lines = lines(ctx.theme, ctx.config, &ctx.notices(), ctx.size);
    let r = rect(area, lines.len());
    let title = Line::from(vec![
        Span::styled(" Legend ", ctx.theme.title()),
        Span::styled("(Enter closes, j/k scroll) ", ctx.theme.dim()),
    ]);
    let inner = covering_frame(f, r, title, ctx.theme);
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(top)
        .take(inner.height as usize)
        .collect();
    f.render_widget(Paragraph::new(shown), inner);
}
