//! The sessions browser (the transcripts pane's other mode, `b`): recorded Claude Code and
//! Codex sessions grouped by project (`▾` open, `▸` folded), newest first, with date,
//! the tool that wrote it, file, first request, size (not where the width is short),
//! model calls, compactions and peak context (`…` until a
//! background job has counted the file, and the title says how many wait), the filter
//! typed after `/`, and a row for each folder that could not be read; or the opened session
//! (`opened`) and its replay (`replay`). Beside its state (`SessionsState`,
//! `app/sessions.rs`; the browser's keys in `keys.rs`); draws `App` state only.

mod opened;
mod replay;

use crate::sanitize::sanitize_line;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::pane_title::title_hint;
use crate::tui::app::{App, LoadKind, Pane, SessionsState};
use crate::tui::draw::text::human_bytes;
use crate::tui::draw::{fit, pane_block, selected_line};
use crate::tui::sessions::{BrowserRow, SessionItem};
use crate::util::group_digits;

fn ours(what: &LoadKind) -> bool {
    matches!(what, LoadKind::Session { .. } | LoadKind::Replay { .. })
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    if let Some(open) = app.sessions().open() {
        opened::render(app, f, area, open);
        return;
    }
    let s = app.sessions();
    let focused = app.focus() == Pane::Transcripts;
    let where_ = where_text(app.sessions());
    let count = s
        .rows()
        .iter()
        .filter(|r| matches!(r, BrowserRow::Session(_)))
        .count();
    // Rows whose counts a batch has not filled in yet (`…` in their columns).
    let counting = s
        .rows()
        .iter()
        .filter(|r| matches!(r, BrowserRow::Session(item) if item.stats().is_none()))
        .count();
    let counting = if counting > 0 {
        format!(", {} counting…", group_digits(counting))
    } else {
        String::new()
    };
    let title = Line::from(vec![
        Span::styled(" 4 Sessions ", app.theme().title()),
        Span::raw(format!(
            "· {}{counting} · {where_} ",
            crate::util::plural(count, "session")
        )),
        title_hint(app, "(Enter open, b transcripts) ", ours),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let cols = Columns::new(width, s.rows());
    let mut lines = vec![Line::from(Span::styled(
        fit(&cols.head(), width),
        app.theme().title(),
    ))];
    let view = s.view();
    if !view.query().is_empty() || view.typing() {
        let text = format!(
            "filter /{}{} · {} · Esc clears",
            sanitize_line(view.query()),
            if view.typing() { "▏" } else { "" },
            crate::util::plural(
                view.visible()
                    .iter()
                    .filter(|&&i| matches!(s.rows().get(i), Some(BrowserRow::Session(_))))
                    .count(),
                "session"
            )
        );
        lines.push(Line::from(Span::styled(
            fit(&text, width),
            app.theme().key(),
        )));
    }
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
    } else if view.visible().is_empty() {
        lines.push(Line::from(Span::styled(
            "no session matches the filter",
            app.theme().dim(),
        )));
    }
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let shown = view
        .visible()
        .iter()
        .enumerate()
        .skip(s.list().top)
        .take(rows);
    for (k, &i) in shown {
        let Some(row) = s.rows().get(i) else {
            continue;
        };
        let mut line = match row {
            BrowserRow::Project { name, sessions } => {
                let folded = view.is_folded(name);
                let count = if view.query().is_empty() {
                    crate::util::plural(*sessions, "session")
                } else {
                    format!("{} of {sessions}", view.matching(s.rows(), i))
                };
                Line::from(Span::styled(
                    fit(
                        &format!(
                            "{} {} ({count})",
                            if folded { "▸" } else { "▾" },
                            sanitize_line(name),
                        ),
                        width,
                    ),
                    app.theme().title(),
                ))
            }
            BrowserRow::Session(item) => Line::from(fit(&cols.session(item), width)),
            BrowserRow::Error { path, message } => Line::from(Span::styled(
                fit(
                    &sanitize_line(&format!("  ! {}: {message}", path.display())),
                    width,
                ),
                app.theme().error(),
            )),
        };
        if k == s.list().selected {
            line = selected_line(line, app.theme());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// What the browser lists: the folders named, or the default ones.
pub fn where_text(s: &SessionsState) -> String {
    if s.paths().is_empty() {
        "Claude Code and Codex folders".to_string()
    } else {
        s.paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The counts' columns, right of the file and the title.
const STATS_HEAD: &str = "       size  calls  comp.   peak tok";
/// The same without the size, where the width is short (`NARROW`).
const STATS_HEAD_NARROW: &str = "  calls  comp.   peak tok";
/// The start column: `2026-01-02 10:11`, or `01-02 10:11` where the width is short.
const STARTED_W: usize = 16;
const STARTED_W_NARROW: usize = 11;
/// The tool column: `Claude Code`, or `Claude` where the width is short.
const TOOL_W: usize = 11;
const TOOL_W_NARROW: usize = 6;
/// Below this width the columns are the short ones, so the first request keeps room
/// (issue 38: it had 9 characters at 80 columns).
const NARROW: usize = 100;
/// Columns a title is worth giving before the file's name gets them all.
const TITLE_MIN_W: usize = 8;

/// The agent that wrote a session, as the tool column names it.
fn tool_label(tool: crate::session::model::Tool, narrow: bool) -> &'static str {
    use crate::session::model::Tool;
    match (tool, narrow) {
        (Tool::ClaudeCode, false) => "Claude Code",
        (Tool::ClaudeCode, true) => "Claude",
        (Tool::Codex, _) => "Codex",
        (Tool::Ctxlab, _) => "ctxlab",
        (Tool::Proxy, _) => "proxy",
    }
}

/// Where the columns of a session row go at a width: the start, the tool that wrote it,
/// the file's name (as `short_name` gives it, so a Codex rollout shows its id rather than
/// the date the start column already shows), the first request, the counts.
struct Columns {
    narrow: bool,
    name_w: usize,
    title_w: usize,
}

impl Columns {
    fn new(width: usize, rows: &[BrowserRow]) -> Columns {
        let narrow = width < NARROW;
        let fixed = if narrow {
            2 + STARTED_W_NARROW + 2 + TOOL_W_NARROW + 2 + STATS_HEAD_NARROW.len()
        } else {
            2 + STARTED_W + 2 + TOOL_W + 2 + STATS_HEAD.len()
        };
        let room = width.saturating_sub(fixed);
        let longest = rows
            .iter()
            .filter_map(|r| match r {
                BrowserRow::Session(s) => Some(crate::util::display_width(&short_name(s))),
                _ => None,
            })
            .max()
            .unwrap_or(8)
            .max(8);
        // The name gets a third of the room (a quarter where the width is short; all of
        // what it needs when less), the title the rest; too little room for both: the
        // name alone.
        let share = if narrow {
            (room / 4).max(8)
        } else {
            (room / 3).max(10)
        };
        let name_w = longest.min(share).min(room);
        let title_w = room.saturating_sub(name_w + 2);
        if title_w < TITLE_MIN_W {
            return Columns {
                narrow,
                name_w: room.max(8),
                title_w: 0,
            };
        }
        Columns {
            narrow,
            name_w,
            title_w,
        }
    }

    fn started_w(&self) -> usize {
        if self.narrow {
            STARTED_W_NARROW
        } else {
            STARTED_W
        }
    }

    fn tool_w(&self) -> usize {
        if self.narrow { TOOL_W_NARROW } else { TOOL_W }
    }

    fn head(&self) -> String {
        let (sw, tw) = (self.started_w(), self.tool_w());
        let mut text = format!(
            "  {:<sw$}  {}  {}",
            "started",
            fit("tool", tw),
            fit("file", self.name_w)
        );
        if self.title_w > 0 {
            text.push_str("  ");
            text.push_str(&fit("first request", self.title_w));
        }
        text.push_str(if self.narrow {
            STATS_HEAD_NARROW
        } else {
            STATS_HEAD
        });
        text
    }

    fn session(&self, item: &SessionItem) -> String {
        let e = item.entry();
        let (sw, tw) = (self.started_w(), self.tool_w());
        let started = e
            .started
            .as_deref()
            .map(|t| {
                let t: String = sanitize_line(t).chars().take(STARTED_W).collect();
                // `2026-01-02T10:11` -> `01-02 10:11` where the width is short.
                let t = if self.narrow {
                    t.chars().skip(STARTED_W - STARTED_W_NARROW).collect()
                } else {
                    t
                };
                t.replace('T', " ")
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
        let mut text = format!(
            "  {started:<sw$}  {:<tw$}  {}",
            tool_label(e.tool, self.narrow),
            fit(&short_name(item), self.name_w)
        );
        if self.title_w > 0 {
            // Made one line and sanitized by the listing (`session::title`).
            let title = e.title.as_deref().unwrap_or("–");
            text.push_str("  ");
            text.push_str(&fit(&sanitize_line(title), self.title_w));
        }
        if !self.narrow {
            text.push_str(&format!("  {:>9}", human_bytes(e.size_bytes)));
        }
        text.push_str(&format!("  {calls:>5}  {comp:>5}  {peak:>9}"));
        text
    }
}

/// The file's name as a row shows it: a Codex rollout without its
/// `rollout-2026-01-02T10-11-12-` (the start column says when), so the id that tells two
/// apart is what shows (the filter still matches the whole name). Sanitized before it is measured: a
/// control character in a file name would otherwise count as a column the terminal
/// never shows.
fn short_name(item: &SessionItem) -> String {
    let name = item
        .entry()
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let short = match name.strip_prefix("rollout-") {
        // `YYYY-MM-DDTHH-MM-SS-` is 20 chars.
        Some(rest) if rest.len() > 20 && rest.as_bytes().get(10) == Some(&b'T') => {
            rest.get(20..).unwrap_or(rest).to_string()
        }
        _ => name.clone(),
    };
    sanitize_line(&short).into_owned()
}
