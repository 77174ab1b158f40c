//! The "explain this number" view (`e`, `app/explain.rs`): a small dialog over the panes,
//! one paragraph per number, wrapped between words at its width (`ExplainView::rows`) and
//! as tall as its text, scrolled with j/k when the screen is shorter. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::ExplainView;
use crate::tui::draw::{DrawCtx, covering_frame};

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, v: &ExplainView) {
    let width = ExplainView::width_on(area.width);
    let rows = v.rows(width.saturating_sub(2) as usize);
    let height = (rows.len() as u16 + 2).min(area.height);
    let r = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let more = rows.len() + 2 > area.height as usize;
    let title = Line::from(vec![
        Span::styled(format!(" {} ", v.title()), ctx.theme.title()),
        Span::styled(
            if more {
                "(j/k scroll, Esc or e closes) "
            } else {
                "(Esc or e closes) "
            },
            ctx.theme.dim(),
        ),
    ]);
    let inner = covering_frame(f, r, title, ctx.theme);
    let top = v
        .top()
        .min(rows.len().saturating_sub(inner.height as usize));
    let shown: Vec<Line> = rows.into_iter().skip(top).map(Line::from).collect();
    f.render_widget(Paragraph::new(shown), inner);
}
