//! The text viewer overlay (persisted outputs, full messages): line numbers, scrolling,
//! search matches highlighted, the search prompt. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{clip, pane_block};
use crate::tui::app::{App, Viewer};
use crate::tui::layout::centered;
use crate::tui::theme::Theme;

pub fn render(app: &App, f: &mut Frame, area: Rect, v: &Viewer) {
    let r = centered(area, 90, 85);
    f.render_widget(Clear, r);
    let theme = &app.theme;
    let title = Line::from(vec![
        Span::styled(" View ", theme.title()),
        Span::raw(clip(&v.title, (r.width as usize).saturating_sub(12))),
        Span::raw(" "),
    ]);
    let block = pane_block(title, true, theme);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let body_h = (inner.height as usize).saturating_sub(1);
    let num_w = v.lines.len().to_string().len().max(3);
    let width = (inner.width as usize).saturating_sub(num_w + 1);
    let query = v.query.to_lowercase();
    let mut lines: Vec<Line> = Vec::with_capacity(inner.height as usize);
    for (i, text) in v.lines.iter().enumerate().skip(v.top).take(body_h) {
        let text = clip(text, width);
        let mut spans = vec![Span::styled(format!("{:>num_w$} ", i + 1), theme.dim())];
        if !query.is_empty() && !v.typing {
            spans.extend(highlight(&text, &query, theme));
        } else {
            spans.push(Span::raw(text));
        }
        lines.push(Line::from(spans));
    }
    while lines.len() < body_h {
        lines.push(Line::from(""));
    }
    let footer = if v.typing {
        Line::from(vec![
            Span::styled("/", theme.key()),
            Span::raw(format!("{}▏", v.query)),
            Span::styled("  Enter search · Esc cancel", theme.dim()),
        ])
    } else {
        let m = if v.matches.is_empty() {
            if v.query.is_empty() {
                String::new()
            } else {
                format!("no match for \"{}\" · ", v.query)
            }
        } else {
            format!(
                "match {}/{} for \"{}\" · ",
                v.current + 1,
                v.matches.len(),
                v.query
            )
        };
        Line::from(Span::styled(
            format!(
                "{m}line {}/{} · / search · n N next/prev · Esc close",
                (v.top + 1).min(v.lines.len()),
                v.lines.len()
            ),
            theme.dim(),
        ))
    };
    lines.push(footer);
    f.render_widget(Paragraph::new(lines), inner);
}

/// Splits `text` into spans with every case-insensitive occurrence of `query` highlighted.
fn highlight<'a>(text: &str, query: &str, theme: &Theme) -> Vec<Span<'a>> {
    let lower = text.to_lowercase();
    // Lower-casing can change byte lengths outside ASCII; then fall back to no highlight.
    if lower.len() != text.len() {
        return vec![Span::raw(text.to_string())];
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(pos) = lower[at..].find(query) {
        let start = at + pos;
        let end = start + query.len();
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            break;
        }
        if start > at {
            out.push(Span::raw(text[at..start].to_string()));
        }
        out.push(Span::styled(
            text[start..end].to_string(),
            theme.highlight(),
        ));
        at = end;
    }
    if at < text.len() {
        out.push(Span::styled(text[at..].to_string(), Style::new()));
    }
    out
}
