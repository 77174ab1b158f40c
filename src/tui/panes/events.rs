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
use crate::compact::{Stage, StageReport};
use crate::tui::app::{App, EventKind, EventRow, Pane};
use crate::tui::theme::Theme;
use crate::util::{display_width, group_digits};

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
        Span::raw(format!("· {filter} · {} ", super::unit_tag(app))),
        Span::styled("(u toggles, Enter opens) ", app.theme.dim()),
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
            line = super::selected_line(line, &app.theme);
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

/// Short stage names for event rows (compact_history keeps its name: "compact" alone would
/// read as the compact tool).
pub fn short_name(stage: Stage) -> &'static str {
    match stage {
        Stage::ToolResultBudget => "budget",
        Stage::SnipCompact => "snip",
        Stage::MicroCompact => "micro",
        Stage::FitToolResults => "fit",
        Stage::CompactHistory => "compact_history",
        Stage::ReactiveCompact => "reactive",
        Stage::AutoCompact => "auto",
    }
}

/// A stage row's text: `snip: 53 messages > 50 (head 3, kept 47) · 17,500->17,163 snipped
/// 3 messages`; the reason first, so a narrow pane still shows why.
pub fn stage_text(report: &StageReport) -> String {
    let sizes = format!(
        "{}->{}",
        group_digits(report.size_before),
        group_digits(report.size_after)
    );
    let reason = if report.reason.is_empty() {
        "ran".to_string()
    } else {
        report.reason.clone()
    };
    if report.changed {
        format!(
            "{}: {reason} · {sizes} {}",
            short_name(report.stage),
            report.delta().what
        )
    } else {
        format!("{}: {reason} · no change", short_name(report.stage))
    }
}

/// One line for any event row (without the time), as the pane shows it.
pub fn row_text(kind: &EventKind) -> String {
    match kind {
        EventKind::Stage { report, .. } => stage_text(report),
        EventKind::Replaced {
            size_before,
            size_after,
            messages,
            ..
        } => format!(
            "history replaced {}->{} ({})",
            group_digits(*size_before),
            group_digits(*size_after),
            super::plural(*messages, "message")
        ),
        EventKind::Retry {
            attempt,
            reason,
            wait,
        } => format!("retry #{attempt} in {:.1}s: {reason}", wait.as_secs_f64()),
        EventKind::Error { kind, message } => format!(
            "error {}: {message}",
            serde_json::to_string(kind)
                .unwrap_or_default()
                .trim_matches('"')
        ),
        EventKind::CompactRequested { focus } => match focus {
            Some(f) => format!("compact tool: focus {f}"),
            None => "compact tool: no focus".to_string(),
        },
        EventKind::PromptTooLong { message } => format!("API refused: {message}"),
        EventKind::SummaryCall {
            chars,
            input_tokens,
        } => {
            let mut s = format!("summary call: {} chars", group_digits(*chars));
            if let Some(t) = input_tokens {
                s.push_str(&format!(" · API {} tokens in", group_digits(*t as usize)));
            }
            s
        }
        EventKind::Cancelled => "turn cancelled by the user".to_string(),
        EventKind::Notice { text } => format!("notice: {text}"),
    }
}

/// The full text of a row for the viewer (Enter on a row without a diff): every number
/// of a stage report, the whole message of an error or a notice.
pub fn detail(kind: &EventKind) -> (String, String) {
    match kind {
        EventKind::Stage { report, .. } => {
            let mut text = format!(
                "{}\nwhy: {}\nsize: {}\nmessages: {} -> {}\n{}",
                report.stage.name(),
                if report.reason.is_empty() {
                    "(no reason recorded)"
                } else {
                    &report.reason
                },
                report.delta().sizes(),
                report.messages_before,
                report.messages_after,
                report.summary()
            );
            for f in &report.files_written {
                text.push_str(&format!("\nwrote {}", f.path));
            }
            (format!("{} · {}", report.stage.name(), report.reason), text)
        }
        EventKind::Notice { text } => ("notice".to_string(), text.clone()),
        other => ("event".to_string(), row_text(other)),
    }
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
        EventKind::Retry { .. } | EventKind::CompactRequested { .. } => {
            spans.push(Span::styled(text, theme.warn()))
        }
        EventKind::Error { .. } | EventKind::PromptTooLong { .. } => {
            spans.push(Span::styled(text, theme.error()))
        }
        EventKind::SummaryCall { .. } => {
            spans.push(Span::styled(text, theme.stage(Stage::CompactHistory)))
        }
        EventKind::Notice { .. } => spans.push(Span::styled(text, theme.dim())),
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
