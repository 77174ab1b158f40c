//! The live view (`ctxlab watch`, `w` in the sessions browser), over the panes: the file
//! followed and why that one, how changes reach it, the counts so far, the headroom with
//! its source, the last thing that happened to the file, the recorded context curve, and
//! the rows as the agent writes them (messages, calls, tool calls, each compaction with
//! the detail an opened session shows). Near the agent's threshold, between the curve and
//! the rows, what a compaction now would put at risk with the ready `/compact` text
//! (`forgot::at_risk::risk_lines`, the lines `watch --text` prints). Every text from the
//! file is sanitized here. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::forgot::at_risk::risk_lines;
use crate::sanitize::sanitize_line;
use crate::session::model::MessageKind;
use crate::tui::draw::plot::curve;
use crate::tui::draw::{DrawCtx, covering_frame, fit};
use crate::tui::layout::split_top;
use crate::tui::live::{LiveRow, LiveView};
use crate::tui::sessions::text::compaction_row;
use crate::tui::theme::Theme;
use crate::util::{group_digits, plural};

/// Rows of the curve at most.
const CURVE_ROWS: u16 = 6;
/// Rows the headroom line wraps to at most.
const HEADROOM_ROWS: usize = 3;

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

fn clean(text: &str, width: usize) -> String {
    fit(&sanitize_line(text), width)
}

/// The whole screen but the hint line.
pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, full: Rect, v: &LiveView) {
    let Some(a) = ctx.areas else {
        return;
    };
    let theme = ctx.theme;
    let r = Rect {
        height: a.hints.y.saturating_sub(full.y),
        ..full
    };
    let state = match (v.ended(), v.caught_up()) {
        (Some(_), _) => "stopped",
        (None, true) => "live",
        (None, false) => "reading what is there",
    };
    let title = Line::from(vec![
        Span::styled(" Live ", theme.title()),
        Span::raw(format!("· {state} ")),
        Span::styled(
            if v.root() {
                "(j/k move, o text, G latest, Esc quit) "
            } else {
                "(j/k move, o text, G latest, Esc close) "
            },
            theme.dim(),
        ),
    ]);
    let inner = covering_frame(f, r, title, theme);
    let width = inner.width as usize;
    let head = header(v, width, theme);
    let (head_area, rest) = split_top(inner, (head.len() as u16).min(inner.height));
    f.render_widget(Paragraph::new(head), head_area);
    // The curve takes a third of what is left, at most CURVE_ROWS and its caption.
    let curve_h = if v.curve().is_empty() || rest.height < 8 {
        0
    } else {
        (rest.height / 3).clamp(2, CURVE_ROWS + 1)
    };
    let (curve_area, rest) = split_top(rest, curve_h);
    if curve_h > 0 {
        render_curve(f, curve_area, v, theme);
    }
    let risk = risk_section(v, width);
    let risk_h = (risk.len() as u16).min(rest.height / 2);
    let (risk_area, list_area) = split_top(rest, risk_h);
    if risk_h > 0 {
        let lines: Vec<Line> = risk
            .into_iter()
            .map(|l| Line::from(Span::styled(l, theme.warn())))
            .collect();
        f.render_widget(Paragraph::new(lines), risk_area);
    }
    render_rows(f, list_area, v, theme);
}

/// The at-risk list as `watch --text` says it, sanitized and wrapped to `width` (the
/// focus texts whole, so they can be copied).
fn risk_section(v: &LiveView, width: usize) -> Vec<String> {
    let Some(r) = v.at_risk() else {
        return Vec::new();
    };
    risk_lines(r, v.headroom().tokens_left)
        .iter()
        .flat_map(|l| crate::tui::pause::wrap_words(&sanitize_line(l), width.max(20)))
        .collect()
}

fn header(v: &LiveView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(vec![
            Span::styled("following ", theme.dim()),
            Span::styled(
                clean(&v.path().display().to_string(), width.saturating_sub(10)),
                theme.key(),
            ),
        ]),
        Line::from(Span::styled(
            clean(&format!("why: {} · {}", v.why(), v.waiting()), width),
            theme.dim(),
        )),
    ];
    let mut counts = format!(
        "{} · {} · {} · {} · {}",
        v.format().map_or("format not known yet", |f| f.name()),
        plural(v.messages(), "msg"),
        plural(v.calls(), "call"),
        v.headroom().compactions_text(),
        plural(v.tool_calls(), "tool call"),
    );
    if v.summary_calls() > 0 {
        counts.push_str(&format!(
            " · {} off the curve",
            plural(v.summary_calls(), "summary call")
        ));
    }
    if v.skipped() > 0 {
        counts.push_str(&format!(" · {} skipped", plural(v.skipped(), "line")));
    }
    if v.dropped() > 0 {
        counts.push_str(&format!(
            " · {} earlier rows not kept",
            group_digits(v.dropped())
        ));
    }
    lines.push(Line::from(clean(&counts, width)));
    let h = v.headroom();
    let mut room = format!("headroom: {}", h.text());
    // The limit's source, said once here (the rows and the curve give only its figure).
    if let Some(l) = &h.limit {
        room.push_str(&format!(" · limit: {}", l.source()));
    }
    if h.limit.is_none() && h.context_tokens.is_some() {
        room.push_str(" · no limit known (no compaction yet, model not in the table)");
    }
    if let Some(growth) = h.growth_since_compaction
        && h.compactions > 0
        && h.calls_since_compaction > 1
    {
        room.push_str(&format!(
            " · {:+} since the last compaction over {}",
            growth,
            plural(h.calls_since_compaction, "call")
        ));
    }
    // Wrapped, not cut (issue 38): the limit's source is its last part.
    let wrapped = crate::tui::pause::wrap_words(&sanitize_line(&room), width.max(20));
    let n = wrapped.len();
    for (k, l) in wrapped.into_iter().take(HEADROOM_ROWS).enumerate() {
        let l = if k + 1 == HEADROOM_ROWS && n > HEADROOM_ROWS {
            format!("{l}…")
        } else {
            l
        };
        lines.push(Line::from(Span::styled(fit(&l, width), theme.key())));
    }
    if let Some(text) = v.ended().or(v.notice()) {
        lines.push(Line::from(Span::styled(clean(text, width), theme.warn())));
    }
    lines
}

fn render_curve(f: &mut Frame, area: Rect, v: &LiveView, theme: &Theme) {
    let limit = v.headroom().limit;
    let caption = match &limit {
        Some(l) => format!("context per call (input + cache tokens) · ┄ {}", l.text()),
        None => "context per call (input + cache tokens)".to_string(),
    };
    let (cap, plot) = split_top(area, 1);
    f.render_widget(
        Paragraph::new(Span::styled(
            clean(&caption, area.width as usize),
            theme.dim(),
        )),
        cap,
    );
    // Only the calls that fit are copied.
    let cols = (area.width as usize).saturating_sub(5);
    let skip = v.curve().len().saturating_sub(cols);
    let values: Vec<u64> = v.curve().iter().skip(skip).copied().collect();
    curve(f, plot, &values, limit.map(|l| l.tokens()), None, theme);
}

fn render_rows(f: &mut Frame, area: Rect, v: &LiveView, theme: &Theme) {
    let height = area.height as usize;
    if height == 0 {
        return;
    }
    let width = area.width as usize;
    if v.rows().is_empty() {
        let text = if v.caught_up() {
            "nothing in the file yet: rows appear as the agent writes them"
        } else {
            "reading the file…"
        };
        f.render_widget(
            Paragraph::new(Span::styled(fit(text, width), theme.dim())),
            area,
        );
        return;
    }
    let selected = v.selected().unwrap_or(0);
    let top = (selected + 1).saturating_sub(height);
    let lines: Vec<Line> = v
        .rows()
        .iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(k, row)| {
            let line = row_line(row, width, theme);
            if k == selected && !v.at_tail() {
                crate::tui::draw::selected_line(line, theme)
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn row_line(row: &LiveRow, width: usize, theme: &Theme) -> Line<'static> {
    match row {
        LiveRow::Message(m) => {
            let tag = match m.kind {
                MessageKind::Conversation => "  ",
                MessageKind::CompactSummary => "Σ ",
                MessageKind::Abandoned => "↶ ",
                MessageKind::Injected => "· ",
            };
            let role = match m.role.as_str() {
                "assistant" => "asst",
                other => other,
            };
            let mut text = m.preview.split_whitespace().collect::<Vec<_>>().join(" ");
            if text.is_empty() && m.tool_results > 0 {
                text = plural(m.tool_results, "tool result");
            } else if text.is_empty() && m.tool_uses > 0 {
                text = plural(m.tool_uses, "tool call");
            }
            let head = format!("{tag}{:>4} ", m.index);
            let rest = width.saturating_sub(head.chars().count() + 6);
            Line::from(vec![
                Span::styled(head, theme.dim()),
                Span::styled(fit(&sanitize_line(role), 5), theme.role(&m.role)),
                Span::raw(" "),
                Span::raw(clean(&text, rest)),
            ])
        }
        LiveRow::Call { call, number } => {
            let u = &call.usage;
            let text = match number {
                Some(n) => format!(
                    "  ▸ call {n} · context {} tok (input {} + cache read {} + cache write {}) · output {}",
                    g(call.context_tokens),
                    g(u.input_tokens),
                    g(u.cache_read_tokens),
                    g(u.cache_creation_tokens),
                    g(u.output_tokens)
                ),
                None => format!(
                    "  ▸ the compaction's own call · {} tok (off the curve)",
                    g(call.context_tokens)
                ),
            };
            Line::from(Span::styled(clean(&text, width), theme.key()))
        }
        // The path or command the call names; its id only when it names neither.
        LiveRow::Tool {
            name, id, subject, ..
        } => {
            let what = if subject.is_empty() {
                format!("        tool {name} ({id})")
            } else {
                format!("        tool {name}: {subject}")
            };
            Line::from(Span::styled(clean(&what, width), theme.dim()))
        }
        LiveRow::Compaction { index, compaction } => Line::from(Span::styled(
            clean(&compaction_row(compaction, *index), width),
            theme.warn(),
        )),
        LiveRow::Skipped { line, what } => Line::from(Span::styled(
            clean(&format!("  line {line} skipped ({what})"), width),
            theme.dim(),
        )),
        LiveRow::Notice(text) => Line::from(Span::styled(
            clean(&format!("! {text}"), width),
            theme.warn(),
        )),
    }
}
