//! The timeline's plot as an inline SVG: per model call a light bar for the history's size
//! before the pipeline and a dark bar for the request actually sent, the limit as a dashed
//! line, labelled axes with ticks at round numbers, a spike clipped at the top with its
//! value (`svg_scale`), and a tooltip per call (a refused one with the API's words). Text
//! only; every string is escaped.

use std::fmt::Write;

use super::html_escape::escape;
use super::{CallOutcome, Timeline};
use crate::util::group_digits;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 40.0;

/// The plot, or a sentence when there are no calls.
pub fn plot(t: &Timeline) -> String {
    if t.calls.is_empty() {
        return "<p class=\"empty\">No model call yet.</p>".to_string();
    }
    let tallest: Vec<usize> = t
        .calls
        .iter()
        .map(|c| c.size_before.max(c.size_after))
        .collect();
    let scale = super::svg_scale::scale(&tallest, t.limit_chars());
    let max = scale.top.max(1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let n = t.calls.len() as f64;
    let slot = plot_w / n;
    let bar = (slot * 0.8).max(1.0);
    // A clipped value is drawn at the top.
    let y = |v: usize| TOP + plot_h - (v.min(scale.top) as f64 / max) * plot_h;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         role=\"img\" aria-labelledby=\"plot-title\" class=\"plot\">\
         <title id=\"plot-title\">Request size per model call, in the lesson's chars</title>"
    );
    // Grid and y labels at round numbers.
    for &v in &scale.ticks {
        let yy = y(v);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            group_digits(v)
        );
    }
    for c in &t.calls {
        let x = LEFT + (c.number as f64 - 1.0) * slot + (slot - bar) / 2.0;
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
        let tip = format!(
            "call {}: {} chars before the pipeline, {} sent{}{}{}",
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
        );
        let _ = write!(s, "<g><title>{}</title>", escape(&tip));
        if c.size_before > c.size_after {
            let top = y(c.size_before);
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" class=\"before\"/>",
                y(c.size_after) - top
            );
        }
        let top = y(c.size_after);
        let class = if c.outcome == CallOutcome::PromptTooLong {
            "after refused"
        } else {
            "after"
        };
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" class=\"{class}\"/>",
            (TOP + plot_h - top).max(0.5)
        );
        let tall = c.size_before.max(c.size_after);
        if tall > scale.top {
            // Clipped: a break mark across the bar's top and its value above it.
            let cx = x + bar / 2.0;
            let _ = write!(
                s,
                "<path d=\"M{:.1} {:.1} l{:.1} -4 l{:.1} 4\" class=\"clip\"/>\
                 <text x=\"{cx:.1}\" y=\"{:.1}\" class=\"clip-label\" text-anchor=\"middle\">{}</text>",
                x,
                TOP + 6.0,
                bar / 2.0,
                bar / 2.0,
                TOP - 4.0,
                group_digits(tall)
            );
        }
        s.push_str("</g>");
    }
    // The limit is in the strategy's unit, the bars in chars: drawn where it is in chars.
    let ly = y(t.limit_chars());
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" class=\"limit\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"limit-label\" text-anchor=\"end\">limit {}</text>",
        WIDTH - RIGHT,
        WIDTH - RIGHT - 4.0,
        ly - 5.0,
        escape(&t.limit_text())
    );
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
            TOP + plot_h + 16.0,
            c.number
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">model call</text>\
         <text x=\"14\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\" \
         transform=\"rotate(-90 14 {:.1})\">chars</text></svg>",
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    s
}
