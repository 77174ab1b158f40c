//! The requests view of an opened capture (`R`), over the panes: the list of exact
//! requests (one row each: number, time, model, messages, tokens, recorded usage, the
//! change since the previous one) above the selected request's detail. Both are the lines
//! `capture_view::text` makes for `ctxlab inspect --requests`, sanitized there; this only
//! fits them to the area: the list's rows cut at the edge, the detail's wrapped. Draws `App`
//! state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::RequestsView;
use crate::capture_view::text::{detail_lines, header_line, row_line};
use crate::tui::draw::{DrawCtx, between_bars, fit, render_between_bars, selected_line};
use crate::tui::pause::wrap_words;
use crate::tui::theme::Theme;

/// The list takes at most this share of the inside (in eighths); the detail the rest.
const LIST_EIGHTHS: usize = 3;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, full: Rect, v: &RequestsView) {
    let theme = ctx.theme;
    let rows = v.requests().rows.len();
    let title = Line::from(vec![
        Span::styled(" Requests ", theme.title()),
        Span::raw(format!("· {} of {rows} ", v.selected() + 1)),
        Span::styled("(j/k request, J/K detail, Esc) ", theme.dim()),
    ]);
    render_between_bars(f, between_bars(ctx.areas, full), title, theme, |w, h| {
        lines(v, w, h, theme)
    });
}

/// Every line of the view's inside, `width` columns, at most `height` lines.
fn lines(v: &RequestsView, width: usize, height: usize, theme: &Theme) -> Vec<Line<'static>> {
    let reqs = v.requests();
    let mut out = Vec::new();
    if height == 0 {
        return out;
    }
    out.push(Line::from(Span::styled(
        fit(&header_line(), width),
        theme.dim(),
    )));
    // The list: as many rows as its share allows, scrolled to keep the selection in view.
    let list_rows = (height * LIST_EIGHTHS / 8)
        .max(2)
        .min(reqs.rows.len())
        .min(height.saturating_sub(1));
    let top = v
        .selected()
        .saturating_sub(list_rows.saturating_sub(1))
        .min(reqs.rows.len().saturating_sub(list_rows));
    for (i, row) in reqs.rows.iter().enumerate().skip(top).take(list_rows) {
        let line = Line::from(fit(&row_line(row), width));
        out.push(if i == v.selected() {
            selected_line(line, theme)
        } else if row.side {
            line.style(theme.dim())
        } else {
            line
        });
    }
    let Some(row) = reqs.rows.get(v.selected()) else {
        return out;
    };
    let rest = height.saturating_sub(out.len() + 1);
    if rest == 0 {
        return out;
    }
    out.push(Line::from(Span::styled("─".repeat(width), theme.dim())));
    let detail = wrapped(&detail_lines(row, &reqs.counting), width);
    let top = v.detail_top().min(detail.len().saturating_sub(1));
    for l in detail.into_iter().skip(top).take(rest) {
        out.push(Line::from(fit(&l, width)));
    }
    out
}

/// The detail's lines wrapped between words to `width` columns, not cut: a line's later
/// rows are indented two past its own indent, so a wrapped line reads as one. J/K scroll
/// these rows.
fn wrapped(lines: &[String], width: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        if crate::util::display_width(line) <= width || indent + 2 >= width {
            out.push(line.clone());
            continue;
        }
        let first = wrap_words(body, width - indent);
        let Some((head, rest)) = first.split_first() else {
            continue;
        };
        out.push(format!("{}{head}", " ".repeat(indent)));
        // The rows after the first, rewrapped at the narrower width they get.
        let rest = rest.join(" ");
        if !rest.is_empty() {
            for piece in wrap_words(&rest, width - indent - 2) {
                out.push(format!("{}{piece}", " ".repeat(indent + 2)));
            }
        }
    }
    out
}
