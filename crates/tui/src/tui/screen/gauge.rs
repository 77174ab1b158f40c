//! The context gauge: the history's size in the strategy's unit (chars, JSON chars or
//! tokens) against `context_limit` with the warning thresholds marked, the tokenizer's
//! estimate and the API's last input tokens beside it (the main request's; the last summary
//! call's on a line of its own), and the plot of each model call's size before the pipeline
//! and sent (`plot`), with the limit, so the saw-tooth of compaction and a batch the
//! pipeline shrank both show. Draws `App` state only: the conversation's totals, the
//! timeline's calls and the settings, so it is the screen's, not one pane's (its bar and
//! sparkline are `draw::meter`'s, which a transcript's replay draws too).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::App;
use crate::tui::draw::meter::{DANGER_AT, WARN_AT, bar_line, level};
use crate::tui::draw::{fit, pane_block, plot};
use crate::util::group_digits;

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let limit = app.config().context_limit;
    let unit = app.config().strategy.unit();
    let limit_text = format!("(limit {} {}) ", group_digits(limit), unit.label());
    // The key that explains the numbers, when the frame has room for it.
    let room = (area.width as usize).saturating_sub(11 + limit_text.len());
    let title = Line::from(vec![
        Span::styled(" Context ", app.theme().title()),
        Span::raw(limit_text),
        Span::styled(
            if room >= 12 { "e explains " } else { "" },
            app.theme().dim(),
        ),
    ]);
    let block = pane_block(title, false, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let lines = text_lines(app, w);
    let (text, spark) = crate::tui::layout::split_top(inner, lines.len() as u16);
    f.render_widget(Paragraph::new(lines), text);
    // Call sizes are measured in `str()` chars: the limit is scaled to match.
    let limit_chars = limit.saturating_mul(unit.chars_per_unit());
    plot::render(
        f,
        spark,
        &plot::calls_of(app.timeline()),
        limit_chars,
        None,
        app.theme(),
    );
}

/// The first of `variants` that fits `width` columns (the last one, cut, if none does):
/// the longest wording the gauge has room for.
fn widest_fitting(variants: &[String], width: usize) -> String {
    variants
        .iter()
        .find(|v| crate::util::display_width(v) <= width)
        .cloned()
        .unwrap_or_else(|| fit(variants.last().map_or("", |v| v.as_str()), width))
}

/// The gauge's text lines at `w` columns: the bar with its 70/90% marks, the size against
/// the limit (an empty history says "empty", not the 2 chars of `[]`), the token estimate
/// and the API's count (marked synthetic under the scripted model), and the last summary
/// call's input. `e` explains each (`app/explain.rs`).
pub fn text_lines(app: &App, w: usize) -> Vec<Line<'static>> {
    let theme = app.theme();
    let limit = app.config().context_limit;
    let unit = app.config().strategy.unit();
    let conv = app.conversation();
    let empty = conv.history().is_empty();
    let size = if empty { 0 } else { app.history_size() };
    let pct = size as f64 * 100.0 / limit.max(1) as f64;
    let lvl = level(size, limit);
    let over = if size > limit { "  OVER LIMIT" } else { "" };
    let shown = if empty {
        "empty".to_string()
    } else {
        group_digits(size)
    };
    let head = format!(
        "{shown} / {} {}  {pct:.0}%",
        group_digits(limit),
        unit.label()
    );
    let marks = widest_fitting(
        &[
            format!(
                "  ┊ {:.0}% warn ┊ {:.0}% danger",
                WARN_AT * 100.0,
                DANGER_AT * 100.0
            ),
            format!("  ┊{:.0}% ┊{:.0}%", WARN_AT * 100.0, DANGER_AT * 100.0),
            format!(" ┊{:.0}/{:.0}%", WARN_AT * 100.0, DANGER_AT * 100.0),
            String::new(),
        ],
        w.saturating_sub(crate::util::display_width(&head) + over.len()),
    );
    let tokens = if conv.tokens_pending() && conv.tokens() == 0 {
        "~…".to_string()
    } else {
        let more = if conv.tokens_pending() { "+" } else { "" };
        format!("~{}{more}", group_digits(conv.tokens()))
    };
    let synthetic = app.api_is_synthetic();
    // The API's figure is the main request's; a summary call's has a line of its own.
    let api = conv.api_tokens().0.map(|t| {
        let cached = match conv.api_tokens().1 {
            Some(c) if c > 0 => format!(" ({} cached)", group_digits(c as usize)),
            _ => String::new(),
        };
        (group_digits(t as usize), cached)
    });
    let token_line = match &api {
        Some((t, cached)) if synthetic => widest_fitting(
            &[
                format!("{tokens} tokens (est.) · API {t}{cached} (synthetic: scripted model)"),
                format!("{tokens} tokens (est.) · API {t}{cached} (synthetic)"),
                format!("{tokens} tok · synthetic API {t}{cached}"),
                format!("{tokens} tok (est.) · synthetic API {t}"),
                format!("{tokens} tok · synthetic API {t}"),
            ],
            w,
        ),
        Some((t, cached)) => widest_fitting(
            &[
                format!("{tokens} tokens (est.) · API {t}{cached}"),
                format!("{tokens} tok (est.) · API {t}"),
            ],
            w,
        ),
        None => format!("{tokens} tokens (est.)"),
    };
    let mut lines = vec![
        bar_line(size, limit, w, theme),
        Line::from(vec![
            Span::styled(head, theme.level(lvl)),
            Span::styled(over, theme.error()),
            Span::styled(marks, theme.warn()),
        ]),
        Line::from(token_line),
    ];
    if let Some(t) = conv.summary_input_tokens() {
        let t = group_digits(t as usize);
        let what = if synthetic { "synthetic" } else { "API" };
        lines.push(Line::from(Span::styled(
            widest_fitting(
                &[
                    format!("last summary call's input: {t} tokens ({what})"),
                    format!("last summary call: {t} tok ({what})"),
                    format!("summary in: {t} tok ({what})"),
                ],
                w,
            ),
            theme.dim(),
        )));
    }
    lines
}
