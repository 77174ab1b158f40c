//! The size-against-limit bar, with the warning thresholds marked, and the sparkline of
//! request sizes: the gauge draws both for the live history, a transcript's replay for
//! its own sizes. Draws what it is given only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

use super::super::theme::{Level, Theme};

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
