//! The events pane: one row per stage that changed the history (all stages with the `u`
//! filter), each with its reason in numbers (`snip: 53 messages > 50 (head 3, kept 47)`),
//! the sizes before and after and what changed; and one per retry, error, refusal of the
//! API ("prompt is too long"), summary call (with the API's input tokens for it), compact
//! request, cancel and start-up notice, with the time since start. Rows with a diff carry
//! `Δ`; Enter opens it (any other row opens in full). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, fmt_ticks, pane_block};
use crate::compact::Stage;
use crate::tui::app::{App, EventKind, EventRow, Pane};
use crate::tui::event_rows::{row_text, short_name};
use crate::tui::theme::Theme;
use crate::util::display_width;

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus() == Pane::Events;
    let state = app.events_state();
    let visible = state.visible();
    let filter = if state.show_unchanged() {
        "all stages"
    } else {
        "changes only"
    };
    let title = Line::from(vec![
        Span::styled(" 2 Events ", app.theme().title()),
        Span::raw(format!("· {filter} · {} ", super::unit_tag(app))),
        Span::styled("(u toggles, Enter opens) ", app.theme().dim()),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = Vec::with_capacity(inner.height as usize);
    for (pos, &i) in visible
        .iter()
        .enumerate()
        .skip(state.list().top)
        .take(inner.height as usize)
    {
        let Some(row) = state.rows().get(i) else {
            break;
        };
        let mut line = event_line(row, app.theme(), width);
        if pos == state.list().selected {
            line = super::selected_line(line, app.theme());
        }
        lines.push(line);
    }
    if visible.is_empty() && inner.height > 0 {
        lines.push(Line::from(Span::styled(
            "no stage has changed the history yet",
            app.theme().dim(),
        )));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn event_line<'a>(row: &EventRow, theme: &Theme, width: usize) -> Line<'a> {
    let time = fmt_ticks(row.tick);
    let has_diff = row.kind.diff().is_some();
    let mut spans = vec![
        Span::styled(format!("{time} "), theme.dim()),
        Span::raw(if has_diff { "Δ " } else { "  " }),
    ];
    let rest = width.saturating_sub(time.len() + 3);
    let text = fit(&row_text(&row.kind), rest);
    match &row.kind {
        EventKind::Stage { report, .. } => {
            // The stage's name in its style, the rest plain (dim when nothing changed).
            let name_w = display_width(short_name(report.stage)).min(rest);
            let (name, after) = split_at_width(&text, name_w);
            let (name_style, rest_style) = if report.changed {
                (theme.stage(report.stage), Style::new())
            } else {
                (theme.dim(), theme.dim())
            };
            spans.push(Span::styled(name, name_style));
            spans.push(Span::styled(after, rest_style));
        }
        EventKind::Replaced { .. } | EventKind::Cancelled => spans.push(Span::raw(text)),
        EventKind::Retry { .. }
        | EventKind::CompactRequested { .. }
        | EventKind::AnswerCut { .. } => spans.push(Span::styled(text, theme.warn())),
        EventKind::Error { .. }
        | EventKind::PromptTooLong { .. }
        | EventKind::SummaryRefused { .. } => spans.push(Span::styled(text, theme.error())),
        EventKind::SummaryCall { .. } => {
            spans.push(Span::styled(text, theme.stage(Stage::CompactHistory)))
        }
        EventKind::Notice { .. } => spans.push(Span::styled(text, theme.dim())),
        EventKind::Settings { .. } | EventKind::Continued { .. } => {
            spans.push(Span::styled(text, theme.key()))
        }
    }
    Line::from(spans)
}

/// `s` cut after `cols` columns: (head, rest).
fn split_at_width(s: &str, cols: usize) -> (String, String) {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let w = display_width(c.encode_utf8(&mut [0; 4]));
        if used + w > cols {
            return (s[..i].to_string(), s[i..].to_string());
        }
        used += w;
    }
    (s.to_string(), String::new())
}
