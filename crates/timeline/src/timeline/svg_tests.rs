//! The plot's structure, read back from its SVG: label boxes (as `svg_place` estimates
//! them) do not overlap each other, a limit's label sits on no bar, a spike is clipped
//! with its value while the other bars keep their height, and after a change of limit
//! each segment is drawn at its own limit and named with its calls.

use super::svg::{CLIP_FONT_PX, LIMIT_FONT_PX, plot};
use super::svg_place::{Anchor, LabelBox, text_box};
use super::{Source, Timeline};
use crate::compact::Strategy;
use crate::message::Message;

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let rest = &tag[i..];
    Some(rest[..rest.find('"')?].to_string())
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Every `<name ...>` element: its opening tag and, for text, its content.
fn elements(svg: &str, name: &str) -> Vec<(String, String)> {
    let open = format!("<{name} ");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(&open) {
        let tail = &rest[i..];
        let end = tail.find('>').unwrap_or(tail.len());
        let tag = tail[..end].to_string();
        let body = tail[end + 1..]
            .split('<')
            .next()
            .unwrap_or_default()
            .to_string();
        out.push((tag, body));
        rest = &tail[end..];
    }
    out
}

/// Labels of `class` with their boxes.
fn labels(svg: &str, class: &str, font: f64) -> Vec<(String, LabelBox)> {
    elements(svg, "text")
        .into_iter()
        .filter(|(tag, _)| attr(tag, "class").as_deref() == Some(class))
        .map(|(tag, text)| {
            let anchor = Anchor::parse(&attr(&tag, "text-anchor").unwrap_or_default());
            let b = text_box(num(&tag, "x"), num(&tag, "y"), &text, font, anchor);
            (text, b)
        })
        .collect()
}

fn bars(svg: &str) -> Vec<LabelBox> {
    elements(svg, "rect")
        .into_iter()
        .filter(|(tag, _)| {
            attr(tag, "class").is_some_and(|c| c.contains("before") || c.contains("after"))
        })
        .map(|(tag, _)| LabelBox {
            x0: num(&tag, "x"),
            y0: num(&tag, "y"),
            x1: num(&tag, "x") + num(&tag, "width"),
            y1: num(&tag, "y") + num(&tag, "height"),
        })
        .collect()
}

/// The tour's shape after a continue: calls 1-9 under 50,000 chars, 10-37 under 30,000,
/// two spikes side by side (the budget stage's batch, as the tour's call 33 has) and bars
/// reaching the limit line at the right, where its label used to go.
fn continued_tour() -> Timeline {
    let mut t = Timeline::new(Source::Live, 0);
    t.settings_from_next_call(Some(Strategy::S08), 50_000);
    let sizes = |n: usize| match n {
        28 => (233_486, 1_500),
        29 => (466_120, 1_600),
        34..=37 => (31_000, 29_500),
        n => (n * 1_000, n * 950),
    };
    for n in 1..=37 {
        if n == 10 {
            t.settings_from_next_call(Some(Strategy::S08), 30_000);
        }
        t.appended(Message::user_text("x"));
        t.request_sent(None);
        let (before, after) = sizes(n);
        if let Some(c) = t.calls.last_mut() {
            c.size_before = before;
            c.size_after = after;
        }
    }
    t
}

#[test]
fn labels_are_apart_and_no_limit_label_sits_on_a_bar() {
    let svg = plot(&continued_tour());
    let clips = labels(&svg, "clip-label", CLIP_FONT_PX);
    let limits = labels(&svg, "limit-label", LIMIT_FONT_PX);
    assert_eq!(clips.len(), 2, "both spikes keep their value: {clips:?}");
    assert!(clips.iter().any(|(t, _)| t == "233,486"), "{clips:?}");
    assert!(clips.iter().any(|(t, _)| t == "466,120"), "{clips:?}");
    let all: Vec<&(String, LabelBox)> = clips.iter().chain(&limits).collect();
    for (i, (a, ab)) in all.iter().enumerate() {
        for (b, bb) in &all[i + 1..] {
            assert!(!ab.overlaps(bb), "{a:?} {ab:?} meets {b:?} {bb:?}");
        }
    }
    for (text, b) in &limits {
        for bar in bars(&svg) {
            assert!(!b.overlaps(&bar), "{text:?} {b:?} sits on the bar {bar:?}");
        }
    }
}

#[test]
fn each_branch_is_drawn_against_its_own_limit_and_named() {
    let svg = plot(&continued_tour());
    let limits = labels(&svg, "limit-label", LIMIT_FONT_PX);
    let texts: Vec<&str> = limits.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "limit 50,000 chars, calls 1-9",
            "limit 30,000 chars, calls 10-37"
        ]
    );
    // Two segments: the earlier one higher (50,000 > 30,000) and ending where the later
    // one starts.
    let lines: Vec<(f64, f64, f64)> = elements(&svg, "line")
        .into_iter()
        .filter(|(tag, _)| attr(tag, "class").as_deref() == Some("limit"))
        .map(|(tag, _)| (num(&tag, "x1"), num(&tag, "x2"), num(&tag, "y1")))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].2 < lines[1].2,
        "50,000 is drawn above 30,000: {lines:?}"
    );
    assert!((lines[0].1 - lines[1].0).abs() < 0.2, "{lines:?}");
}

#[test]
fn a_spike_is_clipped_and_the_others_stay_readable() {
    let svg = plot(&continued_tour());
    let tallest_unclipped = bars(&svg)
        .iter()
        .map(|b| b.y1 - b.y0)
        .fold(0.0f64, f64::max);
    // The plot area is 216 px high: a bar of ~31,000 chars reaches well over half of it,
    // where a scale up to 466,120 would leave it 15 px.
    let bar_31k = bars(&svg)
        .into_iter()
        .map(|b| b.y1 - b.y0)
        .filter(|h| *h < tallest_unclipped)
        .fold(0.0f64, f64::max);
    assert!(bar_31k > 100.0, "{bar_31k}");
    assert_eq!(elements(&svg, "path").len(), 2, "one break mark per spike");
}
