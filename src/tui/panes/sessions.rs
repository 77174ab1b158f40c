//! The sessions browser (the transcripts pane's other mode, `b`): recorded Claude Code and
//! Codex sessions grouped by project, newest first, with date, size, model calls,
//! compactions and peak context (`…` until a background job has counted the file), and a
//! row for each folder that could not be read. Draws `App` state only.

use crate::sanitize::sanitize_line;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, human_bytes, pane_block, title_hint};
use crate::tui::app::{App, LoadKind, Pane};
use crate::tui::sessions::{BrowserRow, SessionItem};
use crate::util::group_digits;

fn ours(what: &LoadKind) -> bool {
    matches!(what, LoadKind::Session { .. } | LoadKind::Replay { .. })
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    if let Some(open) = app.sessions().open() {
        super::session_view::render(app, f, area, open);
        return;
    }
    let s = app.sessions();
    let focused = app.focus() == Pane::Transcripts;
    let where_ = if s.paths().is_empty() {
        "Claude Code and Codex folders".to_string()
    } else {
        s.paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let count = s
        .rows()
        .iter()
        .filter(|r| matches!(r, BrowserRow::Session(_)))
        .count();
    let title = Line::from(vec![
        Span::styled(" 4 Sessions ", app.theme().title()),
        Span::raw(format!("· {} · {where_} ", super::plural(count, "session"))),
        title_hint(app, "(Enter open, b transcripts) ", ours),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = vec![Line::from(Span::styled(
        fit(
            &format!(
                "  {:<16}  {}{STATS_HEAD}",
                "started",
                fit("session", name_width(width))
            ),
            width,
        ),
        app.theme().title(),
    ))];
    if !s.listed() {
        lines.push(Line::from(Span::styled(
            "looking for sessions…",
            app.theme().dim(),
        )));
    } else if s.rows().is_empty() {
        let text = if s.paths().is_empty() {
            "no sessions found under ~/.claude/projects or ~/.codex/sessions"
        } else {
            "no sessions found there"
        };
        lines.push(Line::from(Span::styled(text, app.theme().dim())));
    }
    let rows = (inner.height as usize).saturating_sub(1);
    for (i, row) in s.rows().iter().enumerate().skip(s.list().top).take(rows) {
        let mut line = match row {
            BrowserRow::Project { name, sessions } => Line::from(Span::styled(
                fit(
                    &format!(
                        "▾ {} ({})",
                        sanitize_line(name),
                        super::plural(*sessions, "session")
                    ),
                    width,
                ),
                app.theme().title(),
            )),
            BrowserRow::Session(item) => Line::from(fit(&session_text(item, width), width)),
            BrowserRow::Error { path, message } => Line::from(Span::styled(
                fit(
                    &sanitize_line(&format!("  ! {}: {message}", path.display())),
                    width,
                ),
                app.theme().error(),
            )),
        };
        if i == s.list().selected {
            line = super::selected_line(line, app.theme());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The counts' columns, right of the name.
const STATS_HEAD: &str = "       size  calls  comp.   peak tok";

/// Columns left for a session's name and format.
fn name_width(width: usize) -> usize {
    width.saturating_sub(2 + 16 + 2 + STATS_HEAD.len()).max(8)
}

fn session_text(item: &SessionItem, width: usize) -> String {
    let e = &item.entry();
    let started = e
        .started
        .as_deref()
        .map(|t| {
            sanitize_line(t)
                .chars()
                .take(16)
                .collect::<String>()
                .replace('T', " ")
        })
        .unwrap_or_else(|| "?".into());
    let (calls, comp, peak) = match &item.stats() {
        None => ("…".to_string(), "…".to_string(), "…".to_string()),
        Some(Err(_)) => ("!".to_string(), "!".to_string(), "unreadable".to_string()),
        Some(Ok(q)) => (
            group_digits(q.calls),
            group_digits(q.compactions),
            q.peak_context_tokens
                .map(|t| group_digits(t as usize))
                .unwrap_or_else(|| "-".into()),
        ),
    };
    // Sanitized before it is measured: a control character in a file name would
    // otherwise count as a column the terminal never shows.
    let name = e
        .path
        .file_name()
        .map(|n| sanitize_line(&n.to_string_lossy()).into_owned())
        .unwrap_or_default();
    let room = name_width(width);
    let with_format = format!("{name} · {}", e.format.name());
    // The format when it fits; the name always comes first.
    let name = if crate::util::display_width(&with_format) <= room {
        fit(&with_format, room)
    } else {
        fit(&name, room)
    };
    format!(
        "  {started:<16}  {name}  {:>9}  {calls:>5}  {comp:>5}  {peak:>9}",
        human_bytes(e.size_bytes),
    )
}
