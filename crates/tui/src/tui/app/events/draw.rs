//! The events pane: one row per stage that changed the history (all stages with the `u`
//! filter), each with its reason in numbers (`snip: 53 messages > 50 (head 3, kept 47)`),
//! the sizes before and after and what changed; and one per retry, error, refusal of the
//! API ("prompt is too long"), summary call (with the API's input tokens for it), compact
//! request, cancel and start-up notice, with the time since start. Rows with a diff carry
//! `Δ`; Enter opens it (any other row opens in full). The selected row and the start-up
//! notices show their whole text, wrapped on indented lines under the row, so a reason cut at
//! the pane's edge is read by moving onto it (`event_rows::row_lines`; the scrolling counts
//! the same lines). Beside its state and keys (`EventsState`, `app/events.rs`); draws `App`
//! state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::compact::Stage;
use crate::tui::app::pane_title::unit_tag;
use crate::tui::app::{App, EventKind, EventRow, Pane, fmt_ticks};
use crate::tui::draw::{pane_block, selected_line};
use crate::tui::event_rows::{WRAP_INDENT, max_row_lines, row_lines, short_name, shown_whole};
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
        Span::raw(format!("· {filter} · {} ", unit_tag(app))),
        Span::styled("(u toggles, Enter opens) ", app.theme().dim()),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let height = inner.height as usize;
    let mut lines = Vec::with_capacity(height);
    for (pos, &i) in visible.iter().enumerate().skip(state.list().top) {
        if lines.len() >= height {
            break;
        }
        let Some(row) = state.rows().get(i) else {
            break;
        };
        let selected = pos == state.list().selected;
        let whole = shown_whole(&row.kind, selected);
        let texts = row_lines(&row.kind, width, whole, max_row_lines(height));
        for (k, text) in texts.into_iter().enumerate() {
            let mut line = if k == 0 {
                event_line(row, app.theme(), text)
            } else {
                // The rest of the text, indented under the row.
                Line::from(vec![
                    Span::raw(" ".repeat(WRAP_INDENT)),
                    Span::styled(text, text_style(row, app.theme())),
                ])
            };
            if selected {
                line = selected_line(line, app.theme());
            }
            lines.push(line);
        }
    }
    lines.truncate(height);
    if visible.is_empty() && inner.height > 0 {
        lines.push(Line::from(Span::styled(
            "no stage has changed the history yet",
            app.theme().dim(),
        )));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// A row's first line: the time, `Δ` when it has a diff, and `text` (its text cut or the
/// first of its wrapped lines, `row_lines`).
fn event_line<'a>(row: &EventRow, theme: &Theme, text: String) -> Line<'a> {
    let time = fmt_ticks(row.tick);
    let has_diff = row.kind.diff().is_some();
    let mut spans = vec![
        Span::styled(format!("{time} "), theme.dim()),
        Span::raw(if has_diff { "Δ " } else { "  " }),
    ];
    match &row.kind {
        EventKind::Stage { report, .. } => {
            // The stage's name in its style, the rest plain (dim when nothing changed).
            let name_w = display_width(short_name(report.stage)).min(display_width(&text));
            let (name, after) = split_at_width(&text, name_w);
            let name_style = if report.changed {
                theme.stage(report.stage)
            } else {
                theme.dim()
            };
            spans.push(Span::styled(name, name_style));
            spans.push(Span::styled(after, text_style(row, theme)));
        }
        _ => spans.push(Span::styled(text, text_style(row, theme))),
    }
    Line::from(spans)
}

/// The style of a row's text (after a stage's name).
fn text_style(row: &EventRow, theme: &Theme) -> Style {
    match &row.kind {
        EventKind::Stage { report, .. } if report.changed => Style::new(),
        EventKind::Stage { .. } => theme.dim(),
        EventKind::Replaced { .. } | EventKind::Cancelled => Style::new(),
        EventKind::Retry { .. }
        | EventKind::CompactRequested { .. }
        | EventKind::AnswerCut { .. } => theme.warn(),
        EventKind::Error { .. }
        | EventKind::PromptTooLong { .. }
        | EventKind::SummaryRefused { .. } => theme.error(),
        EventKind::SummaryCall { .. } => theme.stage(Stage::CompactHistory),
        EventKind::Notice { .. } => theme.dim(),
        EventKind::Settings { .. } | EventKind::Continued { .. } => theme.key(),
    }
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
