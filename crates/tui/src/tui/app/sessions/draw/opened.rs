//! An opened session: every message of the full session (what a later compaction took out
//! of the model's view dimmed), each recorded compaction as an event row (trigger, tokens
//! before -> after, duration, the summary or "encrypted by the provider", what was kept),
//! the selected call's usage and the real context curve (input + cache tokens per call,
//! the window as a line when the file records it). After `r`, the pipeline's replay stands
//! beside it (`replay`). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::replay;
use crate::tui::app::pane_title::title_hint;
use crate::tui::app::{App, LoadKind, Pane};
use crate::tui::draw::plot::curve;
use crate::tui::draw::{fit, pane_block, selected_line};
use crate::tui::layout::{session_list_rows, split_top};
use crate::tui::sessions::text::{compaction_row, kept_text, summary_words};
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
        replay::render(f, a, open, r, app.theme());
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
            crate::util::plural(open.compactions().len(), "compaction"),
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
            line = selected_line(line, theme);
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
