//! The request-size plot shared by the gauge and the timeline pane: one column per model
//! call, `░` up to the history's size before the pipeline and `█` (in eighths) up to the
//! request sent, so a batch the pipeline shrank still shows how big it was (`↑` when it
//! goes beyond the scale, which fits the requests sent and the limit); the limit as a `┄`
//! line; a legend and y labels when there is room; the selected call marked under the
//! axis. And the recorded context curve (`curve`) that the live view and an opened
//! session draw, with the same columns. Draws what it is given only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::timeline::{CallOutcome, Timeline};
use crate::tui::theme::{Level, Theme};
use crate::util::group_digits;

const EIGHTHS: [&str; 8] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇"];

/// Row `r` (0 at the bottom) of a column bar `h` eighths of a row tall: a full block, the
/// top's partial eighth, or None above the bar. The gauge's plot and the live and opened
/// sessions' curve draw their columns with it.
pub fn bar_cell(h: usize, r: usize) -> Option<&'static str> {
    let floor = r * 8;
    if h >= floor + 8 {
        Some("█")
    } else if h > floor {
        Some(EIGHTHS[h - floor])
    } else {
        None
    }
}

/// A column's cell, highlighted when its call is the selected one.
pub fn column_span(
    text: &'static str,
    style: Style,
    selected: bool,
    theme: &Theme,
) -> Span<'static> {
    let style = if selected {
        style.patch(theme.selected())
    } else {
        style
    };
    Span::styled(text, style)
}
/// Columns of the y labels (`233k `), drawn when the plot is at least this wide.
const LABEL_W: usize = 5;
const LABELS_FROM_W: usize = 30;

/// `232,840` as `233k`, `4,465` as `4.5k`, `870` as `870`.
pub fn compact_number(n: usize) -> String {
    if n >= 10_000 {
        format!("{}k", (n + 500) / 1_000)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1_000.0)
    } else {
        n.to_string()
    }
}

/// One call for the plot.
#[derive(Debug, Clone, Copy)]
pub struct PlotCall {
    pub before: usize,
    pub after: usize,
    pub refused: bool,
}

pub fn calls_of(t: &Timeline) -> Vec<PlotCall> {
    t.calls
        .iter()
        .map(|c| PlotCall {
            before: c.size_before,
            after: c.size_after,
            refused: c.outcome == CallOutcome::PromptTooLong,
        })
        .collect()
}

/// The window of calls that fits `width` columns and shows `selected`.
fn window(n: usize, width: usize, selected: Option<usize>) -> usize {
    if n <= width {
        return 0;
    }
    let latest = n - width;
    match selected {
        Some(s) if s < latest => s.saturating_sub(width / 2),
        _ => latest,
    }
}

/// Draws the plot; `legend` puts the key on the first line, `selected` marks a call on an
/// axis line under the bars.
pub fn render(
    f: &mut Frame,
    area: Rect,
    calls: &[PlotCall],
    limit: usize,
    selected: Option<usize>,
    theme: &Theme,
) {
    let height = area.height as usize;
    let width = area.width as usize;
    if height == 0 || width == 0 {
        return;
    }
    if calls.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled("requests: none yet", theme.dim())),
            area,
        );
        return;
    }
    let mut lines: Vec<Line> = Vec::with_capacity(height);
    let legend = height >= 4;
    if legend {
        let full = width >= 44;
        let limit_text = if full {
            format!(" limit {} ", group_digits(limit))
        } else {
            " limit ".to_string()
        };
        lines.push(Line::from(vec![
            Span::styled("░", theme.dim()),
            Span::raw(" before "),
            Span::styled("█", bar_style(theme, false)),
            Span::raw(" sent "),
            Span::styled("┄", theme.warn()),
            Span::raw(limit_text),
            Span::styled("↑", theme.warn()),
            Span::raw(" beyond"),
        ]));
    }
    let axis = selected.is_some() && height >= 4;
    let rows = height - usize::from(legend) - usize::from(axis);
    let labels = width >= LABELS_FROM_W;
    let cols = width - if labels { LABEL_W } else { 0 };
    let start = window(calls.len(), cols, selected);
    let shown = &calls[start..calls.len().min(start + cols)];
    // The scale fits what was sent and the limit; a history that was larger before the
    // pipeline (a 232,840-char batch) reaches the top and says it goes beyond, instead of
    // flattening every other call.
    let max = shown
        .iter()
        .map(|c| c.after)
        .max()
        .unwrap_or(0)
        .max(limit)
        .saturating_mul(5)
        / 4;
    let max = max.max(1);
    let eighths = |v: usize| (v as f64 / max as f64 * (rows * 8) as f64).round() as usize;
    let limit_row = (eighths(limit) / 8).min(rows.saturating_sub(1));
    for r in (0..rows).rev() {
        let mut spans = Vec::with_capacity(cols + 1);
        if labels {
            let label = if r == limit_row && rows >= 2 {
                compact_number(limit)
            } else if r + 1 == rows {
                compact_number(max)
            } else if r == 0 {
                "0".to_string()
            } else {
                String::new()
            };
            spans.push(Span::styled(format!("{label:>4} "), theme.dim()));
        }
        for (k, c) in shown.iter().enumerate() {
            let (after, before) = (eighths(c.after), eighths(c.before));
            let floor = r * 8;
            let beyond = r + 1 == rows && c.before.max(c.after) > max;
            let (text, style) = if beyond {
                ("↑", theme.warn())
            } else if let Some(cell) = bar_cell(after, r) {
                (cell, bar_style(theme, c.refused))
            } else if before >= floor + 4 {
                ("░", theme.dim())
            } else if r == limit_row && rows >= 2 {
                ("┄", theme.warn())
            } else {
                (" ", Style::new())
            };
            spans.push(column_span(text, style, Some(start + k) == selected, theme));
        }
        lines.push(Line::from(spans));
    }
    if axis && let Some(sel) = selected {
        let offset = if labels { LABEL_W } else { 0 };
        let col = sel.saturating_sub(start);
        let label = format!("▲ call {}", sel + 1);
        let text = if col + label.chars().count() <= cols {
            format!("{}{label}", " ".repeat(offset + col))
        } else {
            let text = format!("call {} ▲", sel + 1);
            let pad = (offset + col + 1).saturating_sub(text.chars().count());
            format!("{}{text}", " ".repeat(pad))
        };
        lines.push(Line::from(Span::styled(text, theme.key())));
    }
    f.render_widget(Paragraph::new(lines), area);
}

fn bar_style(theme: &Theme, refused: bool) -> Style {
    if refused {
        theme.error()
    } else if theme.color {
        theme.level(Level::Ok)
    } else {
        Style::new()
    }
}

/// The recorded context per call: one column a call (eighths of a row), the window as a
/// `┄` line when known, the selected call highlighted; the calls that fit, around it.
pub fn curve(
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
            compact_number(max as usize)
        } else if r == 0 {
            "0".into()
        } else {
            String::new()
        };
        let mut spans = vec![Span::styled(format!("{label:>4} "), theme.dim())];
        for (k, v) in shown.iter().enumerate() {
            let (text, style) = if let Some(cell) = bar_cell(eighths(*v), r) {
                (cell, Style::new())
            } else if window_row == Some(r) {
                ("┄", theme.warn())
            } else {
                (" ", Style::new())
            };
            spans.push(column_span(text, style, Some(start + k) == selected, theme));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), area);
}
