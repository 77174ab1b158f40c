//! The page's "where the context goes" plot: per model call one bar stacked by category
//! (`breakdown`), in tokens, with a tooltip per call listing each category, and the
//! legend under it. Text only; every string is escaped.

use std::fmt::Write;

use super::breakdown::TimelineBreakdown;
use super::html_cap::calls_per_bar;
use super::html_escape::escape;
use crate::breakdown::CallBreakdown;
use crate::util::group_digits;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 40.0;

/// Each category key's band, bottom to top, its colour and its legend text.
pub const BANDS: &[(&str, &str, &str)] = &[
    ("system_prompt", "#7f8c8d", "system prompt"),
    ("tool_definitions", "#95a5a6", "tool definitions"),
    ("reminders", "#f7dc6f", "reminders/attachments"),
    ("developer_messages", "#5d6d7e", "developer messages"),
    ("not_in_file", "#d5d8dc", "not in the file"),
    ("summaries", "#8e44ad", "summaries and markers"),
    ("user_text", "#2f5db3", "user text"),
    ("assistant_text", "#27ae60", "assistant text"),
    ("thinking", "#a3d9a5", "thinking"),
    ("tool_calls", "#f39c12", "tool calls"),
    ("tool_results", "#e67e22", "tool results"),
    ("persisted_previews", "#f5cba7", "persisted-output previews"),
    (
        "claude_code_persisted_output",
        "#edbb99",
        "Claude Code persisted output",
    ),
    ("images", "#c0392b", "images"),
];

fn tooltip(c: &CallBreakdown) -> String {
    let mut tip = format!("call {}: {} tokens", c.call, c.total_text());
    for cat in &c.categories {
        let _ = write!(tip, "\n{}: {}", cat.label(), cat.text());
    }
    tip
}

/// The stacked plot and its legend, or a sentence when there are no calls.
pub fn stacked_plot(b: &TimelineBreakdown) -> String {
    if b.calls.is_empty() {
        return "<p class=\"empty\">No model call yet.</p>".to_string();
    }
    let max = b
        .calls
        .iter()
        .map(|c| c.total_tokens)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    // A long session's bars each stand for a run of calls: the one with the largest
    // request is drawn (`html_cap`).
    let per = calls_per_bar(b.calls.len());
    let slot = plot_w / b.calls.len() as f64 * per as f64;
    let bar = (slot * 0.8).max(1.0);
    let h = |v: u64| (v as f64 / max) * plot_h;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         role=\"img\" aria-labelledby=\"stack-title\" class=\"plot\">\
         <title id=\"stack-title\">Each call's request by category, in tokens ({})</title>",
        escape(&b.counting.describe())
    );
    for q in 0..=4 {
        let v = (max * q as f64 / 4.0).round() as u64;
        let yy = TOP + plot_h - h(v);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            group_digits(v as usize)
        );
    }
    for (i, run) in b.calls.chunks(per).enumerate() {
        let Some(c) = run.iter().max_by_key(|c| c.total_tokens) else {
            continue;
        };
        let x = LEFT + i as f64 * slot + (slot - bar) / 2.0;
        let tip = match (run.first(), run.last()) {
            (Some(a), Some(z)) if per > 1 => {
                format!(
                    "calls {} to {}; the largest, {}",
                    a.call,
                    z.call,
                    tooltip(c)
                )
            }
            _ => tooltip(c),
        };
        let _ = write!(s, "<g class=\"stack\"><title>{}</title>", escape(&tip));
        let mut base = 0u64;
        for (key, colour, _) in BANDS {
            let v = c.tokens_of(key);
            if v == 0 {
                continue;
            }
            let y = TOP + plot_h - h(base + v);
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" \
                 style=\"fill:{colour}\" data-category=\"{key}\"/>",
                h(v)
            );
            base += v;
        }
        s.push_str("</g>");
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">model call (1 to {})</text>",
        LEFT + plot_w / 2.0,
        HEIGHT - 8.0,
        b.calls.len()
    );
    s.push_str("</svg>\n<p class=\"legend\">");
    for (_, colour, label) in BANDS {
        let _ = write!(
            s,
            "<span><i class=\"sw\" style=\"background:{colour}\"></i>{label}</span>"
        );
    }
    s.push_str("</p>\n");
    s
}
