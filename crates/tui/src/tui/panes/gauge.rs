//! The context gauge: the history's size in the strategy's unit (chars, JSON chars or
//! tokens) against `context_limit` with the warning thresholds marked, the tokenizer's
//! estimate and the API's last input tokens beside it (the main request's; the last summary
//! call's on a line of its own), and the plot of each model call's size before the pipeline
//! and sent (`plot`), with the limit, so the saw-tooth of compaction and a batch the
//! pipeline shrank both show. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

use super::pane_block;
use crate::compact::SizeUnit;
use crate::tui::app::App;
use crate::tui::theme::{Level, Theme};
use crate::util::group_digits;

/// Fractions of the limit where the gauge turns yellow, then red.
pub const WARN_AT: f64 = 0.70;
pub const DANGER_AT: f64 = 0.90;

pub fn level(size: usize, limit: usize) -> Level {
    let ratio = size as f64 / limit.max(1) as f64;
    if ratio >= DANGER_AT {
        Level::Danger
    } else if ratio >= WARN_AT {
        Level::Warn
    } else {
        Level::Ok
    }
}

/// The bar: filled cells, with `┊` at the warning thresholds; the bar's end is the limit.
pub fn bar_line<'a>(size: usize, limit: usize, width: usize, theme: &Theme) -> Line<'a> {
    let width = width.max(1);
    let ratio = size as f64 / limit.max(1) as f64;
    let filled = ((ratio.min(1.0)) * width as f64).round() as usize;
    let marks = [
        (WARN_AT * width as f64) as usize,
        (DANGER_AT * width as f64) as usize,
    ];
    let style = theme.level(level(size, limit));
    let mut spans = Vec::with_capacity(width);
    for i in 0..width {
        if i < filled {
            spans.push(Span::styled("█", style));
        } else if marks.contains(&i) {
            spans.push(Span::styled("┊", theme.warn()));
        } else {
            spans.push(Span::styled("░", theme.dim()));
        }
    }
    Line::from(spans)
}

/// The history's size in the strategy's unit (what `context_limit` is compared with):
/// `str()` chars, JSON chars from each message's cached length, or `str()` chars // 4.
pub fn size_in_unit(app: &App) -> usize {
    let conv = app.conversation();
    match app.config().strategy.unit() {
        SizeUnit::Chars => conv.chars(),
        SizeUnit::Tokens => conv.chars() / 4,
        SizeUnit::JsonChars => {
            let n = conv.history().len();
            let items: usize = conv
                .history()
                .iter()
                .map(|r| r.info().message.json_size())
                .sum();
            2 + items + 2 * n.saturating_sub(1)
        }
    }
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let limit = app.config().context_limit;
    let unit = app.config().strategy.unit();
    let size = size_in_unit(app);
    let title = Line::from(vec![
        Span::styled(" Context ", app.theme().title()),
        Span::raw(format!("(limit {} {}) ", group_digits(limit), unit.label())),
    ]);
    let block = pane_block(title, false, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let pct = size as f64 * 100.0 / limit.max(1) as f64;
    let lvl = level(size, limit);
    let over = if size > limit { "  OVER LIMIT" } else { "" };
    let conv = app.conversation();
    let tokens = if conv.tokens_pending() && conv.tokens() == 0 {
        "~… tokens (est.)".to_string()
    } else {
        let more = if conv.tokens_pending() { "+" } else { "" };
        format!("~{}{more} tokens (est.)", group_digits(conv.tokens()))
    };
    // The API's figure is the main request's; a summary call's has a line of its own.
    let api = match conv.api_tokens() {
        (Some(t), Some(c)) if c > 0 => format!(
            " · API {} ({} cached)",
            group_digits(t as usize),
            group_digits(c as usize)
        ),
        (Some(t), _) => format!(" · API {}", group_digits(t as usize)),
        (None, _) => String::new(),
    };
    let mut lines = vec![
        bar_line(size, limit, w, app.theme()),
        Line::from(vec![
            Span::styled(
                format!(
                    "{} / {} {}  {pct:.0}%",
                    group_digits(size),
                    group_digits(limit),
                    unit.label()
                ),
                app.theme().level(lvl),
            ),
            Span::styled(over, app.theme().error()),
        ]),
        Line::from(vec![
            Span::raw(tokens),
            Span::styled(api, app.theme().dim()),
        ]),
    ];
    if let Some(t) = conv.summary_input_tokens() {
        lines.push(Line::from(Span::styled(
            format!("last summary call: API {}", group_digits(t as usize)),
            app.theme().dim(),
        )));
    }
    let (text, spark) = crate::tui::layout::split_top(inner, lines.len() as u16);
    f.render_widget(Paragraph::new(lines), text);
    // Call sizes are measured in `str()` chars: the limit is scaled to match.
    let limit_chars = limit.saturating_mul(unit.chars_per_unit());
    super::plot::render(
        f,
        spark,
        &super::plot::calls_of(app.timeline()),
        limit_chars,
        None,
        app.theme(),
    );
}

/// Request sizes over time, scaled to the limit (or the largest request if above it): the
/// transcript replay's sizes after the pipeline.
pub fn render_sparkline(f: &mut Frame, area: Rect, sizes: &[u64], limit: usize, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    if sizes.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled("requests: none yet", theme.dim())),
            area,
        );
        return;
    }
    let start = sizes.len().saturating_sub(area.width as usize);
    let data = &sizes[start..];
    let max = data.iter().copied().max().unwrap_or(0).max(limit as u64);
    let style = if theme.color {
        theme.level(Level::Ok)
    } else {
        Style::new()
    };
    f.render_widget(Sparkline::default().data(data).max(max).style(style), area);
}
