//! The "where the context goes" view (`w` in the timeline), over the panes: the selected
//! call's request as one bar split by category, every call's request stacked by category
//! (a column per call), and the selected call's category table. Each category has a
//! letter, so the view reads without colour. Counts are estimates and say so (`~`).
//! Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::ContextView;
use crate::breakdown::CallBreakdown;
use crate::tui::app::LETTERS;
use crate::tui::draw::{DrawCtx, between_bars, fit, render_between_bars};
use crate::tui::theme::Theme;
use crate::util::{clip_chars, group_digits};

/// Each category key's band, bottom to top: its key, its letter (`app::explain::LETTERS`,
/// which names them), its colour.
static BANDS: [(&str, char, Color); 14] = {
    const COLOURS: [Color; 14] = [
        Color::DarkGray,
        Color::Cyan,
        Color::Yellow,
        Color::Gray,
        Color::DarkGray,
        Color::Magenta,
        Color::Blue,
        Color::Green,
        Color::Green,
        Color::Red,
        Color::LightRed,
        Color::Magenta,
        Color::LightMagenta,
        Color::Red,
    ];
    let mut out = [("", ' ', Color::Reset); 14];
    let mut i = 0;
    while i < out.len() {
        out[i] = (LETTERS[i].0, LETTERS[i].1, COLOURS[i]);
        i += 1;
    }
    out
};
/// Most rows of the stacked curve.
const CURVE_ROWS: usize = 12;

fn band_style(theme: &Theme, colour: Color) -> Style {
    if theme.color {
        Style::new().fg(colour)
    } else {
        Style::new()
    }
}

fn band_of(key: &str) -> Option<&'static (&'static str, char, Color)> {
    BANDS.iter().find(|b| b.0 == key)
}

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, full: Rect, v: &ContextView) {
    let theme = ctx.theme;
    let calls = v.breakdown().calls.len();
    let title = Line::from(vec![
        Span::styled(" Where the context goes ", theme.title()),
        Span::raw(format!("· call {} of {calls} ", v.selected() + 1)),
        Span::styled("(h/l call, Esc) ", theme.dim()),
    ]);
    render_between_bars(f, between_bars(ctx.areas, full), title, theme, |w, h| {
        lines(v, w, h, theme)
    });
}

/// The letters the view draws (any call's), each with its name: the whole legend, wrapped.
fn legend_lines(v: &ContextView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let items: Vec<String> = LETTERS
        .iter()
        .filter(|(key, _, _)| v.breakdown().calls.iter().any(|c| c.tokens_of(key) > 0))
        .map(|(_, letter, name)| format!("{letter} {name}"))
        .collect();
    crate::tui::pause::wrap_words(&format!("letters: {}", items.join(" · ")), width)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, theme.dim())))
        .collect()
}

/// Every line of the view's inside, `width` columns, at most `height` lines.
fn lines(v: &ContextView, width: usize, height: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let Some(call) = v.call() else {
        return out;
    };
    let api = call
        .recorded_tokens
        .map(|t| format!("; the API reported {}", group_digits(t as usize)))
        .unwrap_or_else(|| "; no usage reported".into());
    out.push(Line::from(fit(
        &format!("call {}: {} tokens{api}", call.call, call.total_text()),
        width,
    )));
    out.push(Line::from(Span::styled(
        fit(
            &format!("{} (e explains)", v.breakdown().counting.describe()),
            width,
        ),
        theme.dim(),
    )));
    out.push(Line::from(Span::styled(
        fit(
            &format!("this call's request by category (call {}):", call.call),
            width,
        ),
        theme.dim(),
    )));
    out.push(bar_line(call, width, theme));
    out.push(Line::from(Span::styled(
        fit(
            "every call stacked by category (a column per call, height = tokens):",
            width,
        ),
        theme.dim(),
    )));
    let legend = legend_lines(v, width, theme);
    let table = table_lines(call, width, theme);
    let rows = height
        .saturating_sub(out.len() + 1 + table.len() + legend.len())
        .clamp(3, CURVE_ROWS);
    out.extend(curve_lines(v, width, rows, theme));
    out.extend(legend);
    out.extend(table);
    out.truncate(height);
    out
}

/// The call's request as one bar, each category's share of `width` in its letter.
fn bar_line(call: &CallBreakdown, width: usize, theme: &Theme) -> Line<'static> {
    let total = call.total_tokens.max(1);
    let mut spans = Vec::new();
    let mut used = 0usize;
    let mut cum = 0u64;
    for (key, letter, colour) in &BANDS {
        let t = call.tokens_of(key);
        if t == 0 {
            continue;
        }
        cum += t;
        let end = ((cum as f64 / total as f64) * width as f64).round() as usize;
        let n = end
            .saturating_sub(used)
            .max(1)
            .min(width.saturating_sub(used));
        used += n;
        spans.push(Span::styled(
            letter.to_string().repeat(n),
            band_style(theme, *colour),
        ));
    }
    Line::from(spans)
}

/// Every call's request stacked by category: a column per call (calls sampled when
/// there are more than columns), `rows` high, the selected call marked under it.
fn curve_lines(v: &ContextView, width: usize, rows: usize, theme: &Theme) -> Vec<Line<'static>> {
    let calls = &v.breakdown().calls;
    let n = calls.len();
    if n == 0 || width == 0 {
        return Vec::new();
    }
    // A call takes as many columns as fit evenly; past one call a column, calls are sampled.
    let per = (width / n).max(1);
    let cols = (n * per).min(width);
    let call_at = |c: usize| if per > 1 { c / per } else { c * n / cols };
    let max = calls
        .iter()
        .map(|c| c.total_tokens)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let mut grid: Vec<Vec<Option<usize>>> = vec![vec![None; cols]; rows];
    for c in 0..cols {
        let call = &calls[call_at(c)];
        let mut bounds = Vec::with_capacity(BANDS.len());
        let mut cum = 0u64;
        for (b, band) in BANDS.iter().enumerate() {
            cum += call.tokens_of(band.0);
            bounds.push((cum, b));
        }
        for (r, row) in grid.iter_mut().enumerate() {
            // Row r from the bottom holds the band at its middle's height.
            let level = (r as f64 + 0.5) / rows as f64 * max;
            // A call too small for half a row still shows in the bottom one.
            let level = if r == 0 { level.min(cum as f64) } else { level };
            if level > cum as f64 {
                continue;
            }
            row[c] = bounds
                .iter()
                .find(|(upto, _)| level <= *upto as f64)
                .map(|(_, b)| *b);
        }
    }
    let mut out: Vec<Line<'static>> = grid
        .into_iter()
        .rev()
        .map(|row| {
            Line::from(
                row.into_iter()
                    .map(|cell| match cell {
                        Some(b) => {
                            Span::styled(BANDS[b].1.to_string(), band_style(theme, BANDS[b].2))
                        }
                        None => Span::raw(" "),
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let sel = (0..cols)
        .find(|&c| call_at(c) >= v.selected())
        .unwrap_or(cols - 1);
    let sel = if per > 1 { sel + per / 2 } else { sel };
    let what = format!(
        "call {} (max {} tokens over {n} calls)",
        v.selected() + 1,
        group_digits(max as usize)
    );
    let w = crate::util::display_width(&what);
    let label = if sel + 2 + w <= width {
        format!("{}^ {what}", " ".repeat(sel))
    } else {
        format!("{}{what} ^", " ".repeat((sel + 1).saturating_sub(w + 2)))
    };
    out.push(Line::from(Span::styled(fit(&label, width), theme.dim())));
    out
}

/// The call's categories: letter, name, tokens, share.
fn table_lines(call: &CallBreakdown, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let total = call.total_tokens.max(1) as f64;
    let name_w = width.saturating_sub(22).clamp(8, 40);
    let mut out = vec![Line::from(Span::styled(
        fit(
            &format!("  {:<name_w$} {:>10} {:>7}", "category", "tokens", "share"),
            width,
        ),
        theme.dim(),
    ))];
    for c in &call.categories {
        let (letter, colour) = band_of(c.category).map_or(('?', Color::Reset), |b| (b.1, b.2));
        // Tool names come from files and models: nothing unsafe reaches the screen.
        let label = crate::sanitize::sanitize_line(&c.label()).into_owned();
        let text = format!(
            " {:<name_w$} {:>10} {:>6.1}%",
            clip_chars(&label, name_w),
            c.text(),
            100.0 * c.tokens as f64 / total
        );
        out.push(Line::from(vec![
            Span::styled(letter.to_string(), band_style(theme, colour)),
            Span::raw(fit(&text, width.saturating_sub(1))),
        ]));
    }
    out
}
