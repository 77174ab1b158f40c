//! The timeline's plot as an inline SVG: per model call a light bar for the history's size
//! before the pipeline and a dark bar for the request actually sent, each call's limit as a
//! dashed line over the calls that ran under it (`limits`: after a change or a continue,
//! one segment per setting, each labelled with its calls), labelled axes with ticks at
//! round numbers, a spike clipped at the top with its value (`svg_scale`), and a tooltip
//! per call (a refused one with the API's words). Labels are placed apart, and never on a
//! bar (`svg_place`). Text only; every string is escaped.

use std::fmt::Write;

use super::html_cap::calls_per_bar;
use super::html_escape::escape;
use super::limits::calls_text;
use super::svg_place::{Anchor, LabelBox, clear, free_row, short_number, text_box};
use super::{CallOutcome, Timeline};
use crate::util::group_digits;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
/// The margin above the plot with one row of labels; each further row adds `ROW_H`.
const TOP: f64 = 24.0;
const BOTTOM: f64 = 40.0;
const ROW_H: f64 = 13.0;
/// Rows of spike values above the plot, at most; a value that finds no room is shortened,
/// then left to its tooltip.
const SPIKE_ROWS: usize = 3;
pub(super) const CLIP_FONT_PX: f64 = 11.0;
pub(super) const LIMIT_FONT_PX: f64 = 12.0;

/// A label in plot coordinates (y from the plot's top, negative above it).
struct Placed {
    x: f64,
    baseline: f64,
    anchor: Anchor,
    text: String,
    class: &'static str,
}

/// The baseline of margin row `r` (row 0 just above the plot).
fn row_baseline(r: usize) -> f64 {
    -4.0 - ROW_H * r as f64
}

/// `b` moved sideways to lie within the picture.
fn inside(mut x: f64, b: LabelBox) -> (f64, LabelBox) {
    let mut dx = 0.0;
    if b.x0 < 2.0 {
        dx = 2.0 - b.x0;
    } else if b.x1 > WIDTH - 2.0 {
        dx = WIDTH - 2.0 - b.x1;
    }
    x += dx;
    (
        x,
        LabelBox {
            x0: b.x0 + dx,
            x1: b.x1 + dx,
            ..b
        },
    )
}

/// The plot, or a sentence when there are no calls.
pub fn plot(t: &Timeline) -> String {
    if t.calls.is_empty() {
        return "<p class=\"empty\">No model call yet.</p>".to_string();
    }
    let spans = t.limit_spans();
    let tallest: Vec<usize> = t
        .calls
        .iter()
        .map(|c| c.size_before.max(c.size_after))
        .collect();
    let highest_limit = spans
        .iter()
        .map(|(_, s)| s.limit_chars())
        .max()
        .unwrap_or(0);
    let scale = super::svg_scale::scale(&tallest, highest_limit);
    let max = scale.top.max(1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / t.calls.len() as f64;
    // A long session's bars each stand for a run of calls, the tallest of them (`html_cap`).
    let per = calls_per_bar(t.calls.len());
    let group_w = slot * per as f64;
    let bar = (group_w * 0.8).max(1.0);
    let groups = groups_of(t, &tallest, per);
    // Plot coordinates: 0 at the plot's top; a clipped value is drawn at the top.
    let y = |v: usize| plot_h - (v.min(scale.top) as f64 / max) * plot_h;
    let bar_x = |g: &Group| LEFT + (g.first as f64 - 1.0) * slot + (group_w - bar) / 2.0;
    let bars: Vec<LabelBox> = groups
        .iter()
        .map(|g| LabelBox {
            x0: bar_x(g),
            y0: y(g.tall),
            x1: bar_x(g) + bar,
            y1: plot_h,
        })
        .collect();

    // Spike values: each in the lowest row where it meets no other.
    let mut rows: Vec<(usize, LabelBox)> = Vec::new();
    let mut labels: Vec<Placed> = Vec::new();
    for g in &groups {
        let tall = g.tall;
        if tall <= scale.top {
            continue;
        }
        let cx = bar_x(g) + bar / 2.0;
        for text in [group_digits(tall), short_number(tall)] {
            let at = |r: usize| {
                inside(
                    cx,
                    text_box(cx, row_baseline(r), &text, CLIP_FONT_PX, Anchor::Middle),
                )
            };
            if let Some(r) = free_row(SPIKE_ROWS, &rows, |r| at(r).1) {
                let (x, b) = at(r);
                rows.push((r, b));
                labels.push(Placed {
                    x,
                    baseline: row_baseline(r),
                    anchor: Anchor::Middle,
                    text,
                    class: "clip-label",
                });
                break;
            }
        }
    }

    // Each limit's label: along its segment, above or below its line, clear of the bars
    // and the other labels; else in a row above the plot.
    let mut limit_boxes: Vec<LabelBox> = Vec::new();
    let mut limit_lines: Vec<(f64, f64, f64)> = Vec::new();
    for (calls, span) in &spans {
        let xa = LEFT + (*calls.start() as f64 - 1.0) * slot;
        let xb = LEFT + *calls.end() as f64 * slot;
        let ly = y(span.limit_chars());
        limit_lines.push((xa, xb, ly));
        let text = if spans.len() == 1 {
            format!("limit {}", span.limit_text())
        } else {
            format!("limit {}, {}", span.limit_text(), calls_text(calls))
        };
        let mut taken: Vec<LabelBox> = bars.clone();
        taken.extend(limit_boxes.iter().copied());
        let fits = |b: &LabelBox, strict: bool| {
            b.x0 >= LEFT + 2.0
                && b.x1 <= WIDTH - RIGHT
                && b.y0 >= 0.0
                && b.y1 <= plot_h
                && (!strict || b.x0 >= xa)
                && clear(b, &taken)
        };
        let candidates = (0..calls.clone().count().div_ceil(per)).flat_map(|k| {
            let x = xb - 4.0 - k as f64 * group_w;
            [ly - 5.0, ly + LIMIT_FONT_PX + 3.0].map(move |base| (x, base))
        });
        let found = [true, false].into_iter().find_map(|strict| {
            candidates.clone().find(|&(x, base)| {
                fits(
                    &text_box(x, base, &text, LIMIT_FONT_PX, Anchor::End),
                    strict,
                )
            })
        });
        let (x, baseline, b) = match found {
            Some((x, base)) => (
                x,
                base,
                text_box(x, base, &text, LIMIT_FONT_PX, Anchor::End),
            ),
            None => {
                let at = |r: usize| {
                    inside(
                        xb - 4.0,
                        text_box(xb - 4.0, row_baseline(r), &text, LIMIT_FONT_PX, Anchor::End),
                    )
                };
                let r = free_row(usize::MAX, &rows, |r| at(r).1).unwrap_or(0);
                let (x, b) = at(r);
                rows.push((r, b));
                (x, row_baseline(r), b)
            }
        };
        limit_boxes.push(b);
        labels.push(Placed {
            x,
            baseline,
            anchor: Anchor::End,
            text,
            class: "limit-label",
        });
    }

    // The margin grows by a row per row of labels above the first.
    let extra = rows.iter().map(|(r, _)| *r).max().unwrap_or(0) as f64 * ROW_H;
    let top = TOP + extra;
    let height = HEIGHT + extra;
    let yy = |v: f64| v + top;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         role=\"img\" aria-labelledby=\"plot-title\" class=\"plot\">\
         <title id=\"plot-title\">Request size per model call, in the lesson's chars</title>"
    );
    // Grid and y labels at round numbers.
    for &v in &scale.ticks {
        let gy = yy(y(v));
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{gy:.1}\" x2=\"{:.1}\" y2=\"{gy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            gy + 4.0,
            group_digits(v)
        );
    }
    for g in &groups {
        let (c, tall) = (g.call, g.tall);
        let x = bar_x(g);
        let _ = write!(s, "<g><title>{}</title>", escape(&g.tooltip(t)));
        if c.size_before > c.size_after {
            let bt = y(c.size_before);
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" class=\"before\"/>",
                yy(bt),
                y(c.size_after) - bt
            );
        }
        let at = y(c.size_after);
        let class = if g.refused { "after refused" } else { "after" };
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" class=\"{class}\"/>",
            yy(at),
            (plot_h - at).max(0.5)
        );
        if tall > scale.top {
            // Clipped: a break mark across the bar's top (its value is a label above).
            let _ = write!(
                s,
                "<path d=\"M{x:.1} {:.1} l{:.1} -4 l{:.1} 4\" class=\"clip\"/>",
                yy(6.0),
                bar / 2.0,
                bar / 2.0,
            );
        }
        s.push_str("</g>");
    }
    // The limits are in the strategy's unit, the bars in chars: drawn where they are in
    // chars.
    for (xa, xb, ly) in limit_lines {
        let ly = yy(ly);
        let _ = write!(
            s,
            "<line x1=\"{xa:.1}\" y1=\"{ly:.1}\" x2=\"{xb:.1}\" y2=\"{ly:.1}\" class=\"limit\"/>"
        );
    }
    for l in &labels {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"{}\" text-anchor=\"{}\">{}</text>",
            l.x,
            yy(l.baseline),
            l.class,
            l.anchor.name(),
            escape(&l.text)
        );
    }
    // X labels: about ten, at round call numbers.
    let step = (t.calls.len() / 10).max(1);
    for c in t
        .calls
        .iter()
        .filter(|c| c.number == 1 || c.number % step == 0)
    {
        let x = LEFT + (c.number as f64 - 0.5) * slot;
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{}</text>",
            top + plot_h + 16.0,
            c.number
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">model call</text>\
         <text x=\"14\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\" \
         transform=\"rotate(-90 14 {:.1})\">chars</text></svg>",
        LEFT + plot_w / 2.0,
        height - 6.0,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    );
    s
}

/// What one bar stands for: calls `first..=last` (their numbers), drawn as `call`, the
/// tallest of them; red when any of them was refused.
struct Group<'a> {
    first: usize,
    last: usize,
    call: &'a super::ModelCall,
    tall: usize,
    refused: bool,
}

impl Group<'_> {
    fn tooltip(&self, t: &Timeline) -> String {
        let one = tooltip(t, self.call);
        if self.first == self.last {
            return one;
        }
        let refused = if self.refused {
            ", one or more refused"
        } else {
            ""
        };
        format!(
            "calls {} to {}{refused}; the tallest, {one}",
            group_digits(self.first),
            group_digits(self.last)
        )
    }
}

/// The bars: a call each, or, past `PLOT_BARS` calls, a run of `per` calls each.
fn groups_of<'a>(t: &'a Timeline, tallest: &[usize], per: usize) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (k, (c, &tall)) in t.calls.iter().zip(tallest).enumerate() {
        let refused = c.outcome == CallOutcome::PromptTooLong;
        match out.last_mut() {
            Some(g) if k % per != 0 => {
                g.last = c.number;
                g.refused |= refused;
                if tall > g.tall {
                    g.call = c;
                    g.tall = tall;
                }
            }
            _ => out.push(Group {
                first: c.number,
                last: c.number,
                call: c,
                tall,
                refused,
            }),
        }
    }
    out
}

/// A call's tooltip: its sizes, stages, API tokens, refusal and the limit it ran under.
fn tooltip(t: &Timeline, c: &super::ModelCall) -> String {
    let letters = c.letters(&t.steps);
    let tokens = c
        .input_tokens
        .map(|n| format!(", API {} input tokens", group_digits(n as usize)))
        .unwrap_or_default();
    let outcome = match (&c.outcome, &c.refusal) {
        (CallOutcome::PromptTooLong, Some(words)) => format!(", refused: {words}"),
        (CallOutcome::PromptTooLong, None) => ", refused: prompt too long".to_string(),
        _ => String::new(),
    };
    let limit = t
        .limit_of(c.number)
        .map(|l| format!(" (limit {})", l.limit_text()))
        .unwrap_or_default();
    format!(
        "call {}: {} chars before the pipeline, {} sent{}{}{}{limit}",
        c.number,
        group_digits(c.size_before),
        group_digits(c.size_after),
        if letters.is_empty() {
            String::new()
        } else {
            format!(", stages {letters}")
        },
        tokens,
        outcome
    )
}
