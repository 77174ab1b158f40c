//! An opened session: every message of the full session (what a later compaction took out
//! of the model's view dimmed), each recorded compaction as an event row (trigger, tokens
//! before -> after, duration, the summary or "encrypted by the provider", what was kept),
//! the selected call's usage and the real context curve (input + cache tokens per call,
//! the window as a line when the file records it). After `r`, the pipeline's replay stands
//! beside it (`session_replay`). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::plot;
use super::{fit, pane_block, title_hint};
use crate::session::{Compaction, Summary};
use crate::tui::app::{App, LoadKind, Pane};
use crate::tui::layout::{session_list_rows, split_top};
use crate::tui::sessions::text::{kept_text, kept_words, tokens};
use crate::tui::sessions::{OpenedSession, ViewRow};
use crate::tui::theme::Theme;
use crate::util::group_digits;

fn ours(what: &LoadKind) -> bool {
    matches!(
        what,
        LoadKind::Session { .. } | LoadKind::Replay { .. } | LoadKind::Analysis { .. }
    )
}

/// Lines of the usage panel under the list, for a pane `inner` lines high.
pub fn render(app: &App, f: &mut Frame, area: Rect, open: &OpenedSession) {
    let (left, right) = match &open.replay() {
        // Too narrow for two columns: the recording above, the replay below.
        Some(_) if app.size().0 < crate::tui::layout::SESSION_SIDE_BY_SIDE_FROM => {
            let (top, bottom) = split_top(area, area.height / 2);
            (top, Some(bottom))
        }
        Some(_) => {
            let w = area.width / 2;
            (
                Rect { width: w, ..area },
                Some(Rect {
                    x: area.x + w,
                    width: area.width - w,
                    ..area
                }),
            )
        }
        None => (area, None),
    };
    render_recorded(app, f, left, open);
    if let (Some(r), Some(a)) = (&open.replay(), right) {
        super::session_replay::render(f, a, open, r, app.theme());
    }
}

fn render_recorded(app: &App, f: &mut Frame, area: Rect, open: &OpenedSession) {
    let theme = app.theme();
    let loading = match (&open.load_error(), open.complete()) {
        (Some(_), _) => " · first lines only: the rest could not be read",
        (None, true) => "",
        (None, false) => " · first lines",
    };
    let title = Line::from(vec![
        Span::styled(" 4 Session ", theme.title()),
        Span::raw(format!(
            // The loading state goes first: a narrow pane cuts the title's end.
            "{}{loading} · {} · {} msgs · {} calls · {} ",
            open.label(),
            open.format().name(),
            group_digits(open.infos().len()),
            group_digits(open.calls().len()),
            super::plural(open.compactions().len(), "compaction"),
        )),
        title_hint(app, "(o text, r replay, Esc close) ", ours),
    ]);
    let block = pane_block(title, app.focus() == Pane::Transcripts, theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let height = inner.height as usize;
    let (list_area, usage_area) = split_top(inner, session_list_rows(height, false) as u16);
    let width = list_area.width as usize;
    let index_w = open
        .infos()
        .len()
        .saturating_sub(1)
        .to_string()
        .len()
        .max(2);
    let rows = list_area.height as usize;
    let top = open
        .list()
        .top
        .min(open.list().selected)
        .max((open.list().selected + 1).saturating_sub(rows));
    let mut lines = Vec::with_capacity(rows);
    for (i, row) in open.rows().iter().enumerate().skip(top).take(rows) {
        let mut line = match row {
            ViewRow::Message { index, dimmed } => {
                message_line(open, *index, *dimmed, index_w, width, theme)
            }
            ViewRow::Compaction(k) => match open.compactions().get(*k) {
                Some(c) => Line::from(Span::styled(
                    fit(&compaction_row(c, *k), width),
                    theme.warn(),
                )),
                None => Line::from(""),
            },
        };
        if i == open.list().selected {
            line = super::selected_line(line, theme);
        }
        lines.push(line);
    }
    if open.rows().is_empty() {
        lines.push(Line::from(Span::styled(
            "no messages in this session",
            theme.dim(),
        )));
    }
    f.render_widget(Paragraph::new(lines), list_area);
    render_usage(f, usage_area, open, theme);
}

fn message_line<'a>(
    open: &OpenedSession,
    index: usize,
    dimmed: bool,
    index_w: usize,
    width: usize,
    theme: &Theme,
) -> Line<'a> {
    let Some(info) = open.infos().get(index) else {
        return Line::from("");
    };
    let role = match info.role() {
        "assistant" => "asst",
        "developer" => "dev",
        other => other,
    };
    let tag = match open.tags().get(index).copied().flatten() {
        Some("summary") => "Σ ",
        Some("abandoned") => "↶ ",
        Some(_) => "· ",
        None => "  ",
    };
    let size = format!("{} ch", group_digits(info.chars));
    let label_w = width.saturating_sub(2 + index_w + 1 + 5 + 1 + size.len() + 1);
    let style = if dimmed {
        theme.dim()
    } else {
        ratatui::style::Style::new()
    };
    let role_style = if dimmed {
        theme.dim()
    } else {
        theme.role(info.role())
    };
    Line::from(vec![
        Span::styled(tag, theme.dim()),
        Span::styled(format!("{index:>index_w$} "), theme.dim()),
        Span::styled(fit(role, 5), role_style),
        Span::raw(" "),
        Span::styled(fit(&info.label, label_w), style),
        Span::styled(format!(" {size}"), theme.dim()),
    ])
}

/// What the summary is, in a few words.
fn summary_words(c: &Compaction) -> String {
    match &c.summary {
        Summary::Text(t) => format!(
            "summary ({} ch): {}",
            group_digits(t.chars().count()),
            t.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        Summary::Encrypted => "summary: encrypted by the provider".into(),
        Summary::NotRecorded => "summary: not recorded".into(),
        Summary::None => format!("{} tool results cleared", c.cleared_tool_ids.len()),
    }
}

/// The compaction's event row: `⟳ compaction #1 at message 5 full auto 2,150->900 tok 12.0 s
/// · kept … · summary …`.
pub(super) fn compaction_row(c: &Compaction, k: usize) -> String {
    let kind = c.kind.name();
    let trigger = c
        .trigger
        .as_ref()
        .map(|t| format!(" {}", t.name()))
        .unwrap_or_default();
    let duration = c
        .duration_ms
        .map(|ms| format!(" {:.1} s", ms as f64 / 1000.0))
        .unwrap_or_default();
    format!(
        "⟳ compaction {} {kind}{trigger} {}->{} tok{duration} · {} · {}",
        crate::tui::sessions::text::compaction_name(c, k),
        tokens(c.tokens_before),
        tokens(c.tokens_after),
        kept_words(c),
        summary_words(c)
    )
}

fn render_usage(f: &mut Frame, area: Rect, open: &OpenedSession, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let width = area.width as usize;
    let window = open.calls().iter().filter_map(|c| c.context_window).max();
    let selected = open.selected_call();
    let usage = match selected.and_then(|k| open.calls().get(k).map(|c| (k, c))) {
        Some((k, c)) => format!(
            "call {}/{} · input {} · cache read {} · cache write {} · output {} · context {} tok",
            k + 1,
            open.calls().len(),
            group_digits(c.usage.input_tokens as usize),
            group_digits(c.usage.cache_read_tokens as usize),
            group_digits(c.usage.cache_creation_tokens as usize),
            group_digits(c.usage.output_tokens as usize),
            group_digits(c.usage.context_tokens() as usize),
        ),
        None if open.calls().is_empty() => "no usage recorded in this file".into(),
        None => "no model call before this row".into(),
    };
    let mut head = vec![Line::from(Span::styled(fit(&usage, width), theme.key()))];
    if let Some(ViewRow::Compaction(k)) = open.rows().get(open.list().selected)
        && let Some(c) = open.compactions().get(*k)
        && area.height >= 4
    {
        head.push(Line::from(fit(&summary_words(c), width)));
        head.push(Line::from(Span::styled(
            fit(&kept_text(c).replace('\n', " · "), width),
            theme.dim(),
        )));
    }
    if area.height >= 3 && head.len() == 1 {
        let text = match window {
            Some(w) => format!(
                "context per call (input + cache tokens) · ┄ window {}",
                group_digits(w as usize)
            ),
            None => "context per call (input + cache tokens) · window not recorded".into(),
        };
        head.push(Line::from(Span::styled(fit(&text, width), theme.dim())));
    }
    let (head_area, plot_area) = split_top(area, (head.len() as u16).min(area.height));
    f.render_widget(Paragraph::new(head), head_area);
    if plot_area.height == 0 {
        return;
    }
    let values: Vec<u64> = open
        .calls()
        .iter()
        .map(|c| c.usage.context_tokens())
        .collect();
    curve(f, plot_area, &values, window, selected, theme);
}

/// The recorded context per call: one column a call (eighths of a row), the window as a
/// `┄` line when known, the selected call highlighted; the calls that fit, around it.
pub(super) fn curve(
    f: &mut Frame,
    area: Rect,
    values: &[u64],
    window: Option<u64>,
    selected: Option<usize>,
    theme: &Theme,
) {
    let (rows, width) = (area.height as usize, area.width as usize);
    if rows == 0 || width <= 5 || values.is_empty() {
        return;
    }
    let cols = width - 5;
    let start = match selected {
        Some(s) if values.len() > cols => s.saturating_sub(cols / 2).min(values.len() - cols),
        _ => values.len().saturating_sub(cols),
    };
    let shown = &values[start..values.len().min(start + cols)];
    let max = shown
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(window.unwrap_or(0))
        .max(1);
    let eighths = |v: u64| (v as f64 / max as f64 * (rows * 8) as f64).round() as usize;
    let window_row = window.map(|w| (eighths(w) / 8).min(rows - 1));
    let mut lines = Vec::with_capacity(rows);
    for r in (0..rows).rev() {
        let label = if r + 1 == rows {
            plot::compact_number(max as usize)
        } else if r == 0 {
            "0".into()
        } else {
            String::new()
        };
        let mut spans = vec![Span::styled(format!("{label:>4} "), theme.dim())];
        for (k, v) in shown.iter().enumerate() {
            let (text, style) = if let Some(cell) = plot::bar_cell(eighths(*v), r) {
                (cell, ratatui::style::Style::new())
            } else if window_row == Some(r) {
                ("┄", theme.warn())
            } else {
                (" ", ratatui::style::Style::new())
            };
            spans.push(plot::column_span(
                text,
                style,
                Some(start + k) == selected,
                theme,
            ));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), area);
}
