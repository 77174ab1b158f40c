//! The events pane: one row per stage that changed the history (all stages with the `u`
//! filter), per retry, per error and per compact request, with the time since start, the
//! sizes before and after and what changed. Rows with a diff carry `Δ`; Enter opens it.
//! Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, fmt_ticks, pane_block};
use crate::compact::Stage;
use crate::tui::app::{App, EventKind, EventRow, Pane};
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// The part of `StageReport::summary()` after the sizes: what changed.
pub fn what_changed(summary: &str) -> &str {
    summary
        .split_once(" chars: ")
        .map(|(_, w)| w)
        .unwrap_or(summary)
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus == Pane::Events;
    let visible = app.visible_events();
    let filter = if app.show_unchanged {
        "all stages"
    } else {
        "changes only"
    };
    let title = Line::from(vec![
        Span::styled(" 2 Events ", app.theme.title()),
        Span::raw(format!("· {filter} ")),
        Span::styled("(u toggles, Enter diff) ", app.theme.dim()),
    ]);
    let block = pane_block(title, focused, &app.theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = Vec::with_capacity(inner.height as usize);
    for (pos, &i) in visible
        .iter()
        .enumerate()
        .skip(app.events_list.top)
        .take(inner.height as usize)
    {
        let Some(row) = app.events.get(i) else {
            break;
        };
        let mut line = event_line(row, &app.theme, width);
        if pos == app.events_list.selected {
            line = line.patch_style(app.theme.selected());
        }
        lines.push(line);
    }
    if visible.is_empty() && inner.height > 0 {
        lines.push(Line::from(Span::styled(
            "no stage has changed the history yet",
            app.theme.dim(),
        )));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// Short stage names for narrow panes.
pub fn short_name(stage: Stage) -> &'static str {
    match stage {
        Stage::ToolResultBudget => "budget",
        Stage::SnipCompact => "snip",
        Stage::MicroCompact => "micro",
        Stage::FitToolResults => "fit",
        Stage::CompactHistory => "compact",
        Stage::ReactiveCompact => "reactive",
        Stage::AutoCompact => "auto",
    }
}

fn event_line<'a>(row: &EventRow, theme: &Theme, width: usize) -> Line<'a> {
    let time = fmt_ticks(row.tick);
    let has_diff = row.kind.diff().is_some();
    let mut spans = vec![
        Span::styled(format!("{time} "), theme.dim()),
        Span::raw(if has_diff { "Δ " } else { "  " }),
    ];
    let used = time.len() + 3;
    let rest = width.saturating_sub(used);
    match &row.kind {
        EventKind::Stage { report, .. } => {
            let style = if report.changed {
                theme.stage(report.stage)
            } else {
                theme.dim()
            };
            // Narrow panes get the short names so "what changed" keeps some room.
            let name_w = if rest < 64 { 9 } else { 18 };
            let name = if rest < 64 {
                fit(short_name(report.stage), name_w)
            } else {
                fit(report.stage.name(), name_w)
            };
            let sizes = format!(
                " {}->{} ",
                group_digits(report.size_before),
                group_digits(report.size_after)
            );
            let summary = report.summary();
            let what = what_changed(&summary).to_string();
            let what_w = rest.saturating_sub(name_w + crate::util::display_width(&sizes));
            spans.push(Span::styled(name, style));
            spans.push(Span::raw(sizes));
            spans.push(Span::styled(
                fit(&what, what_w),
                if report.changed {
                    Style::new()
                } else {
                    theme.dim()
                },
            ));
        }
        EventKind::Replaced {
            size_before,
            size_after,
            messages,
            ..
        } => spans.push(Span::raw(fit(
            &format!(
                "history replaced {}->{} ({})",
                group_digits(*size_before),
                group_digits(*size_after),
                super::plural(*messages, "message")
            ),
            rest,
        ))),
        EventKind::Retry {
            attempt,
            reason,
            wait,
        } => spans.push(Span::styled(
            fit(
                &format!("retry #{attempt} in {:.1}s: {reason}", wait.as_secs_f64()),
                rest,
            ),
            theme.warn(),
        )),
        EventKind::Error { kind, message } => spans.push(Span::styled(
            fit(
                &format!(
                    "error {}: {message}",
                    serde_json::to_string(kind)
                        .unwrap_or_default()
                        .trim_matches('"')
                ),
                rest,
            ),
            theme.error(),
        )),
        EventKind::CompactRequested { focus } => spans.push(Span::styled(
            fit(
                &match focus {
                    Some(f) => format!("compact tool: focus {f}"),
                    None => "compact tool: no focus".to_string(),
                },
                rest,
            ),
            theme.warn(),
        )),
    }
    Line::from(spans)
}
