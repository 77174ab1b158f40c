//! The exported page of the tour: y-axis ticks at round numbers, the 226,763-char batch
//! drawn clipped with its value instead of flattening every other bar, and the API's
//! reason for every refused call (it used to say only "prompt too long").

use crate::common::tour::tour;
use ctxlab::timeline::html::page;
use ctxlab::timeline::{CallOutcome, Source, Timeline};
use ctxlab::util::group_digits;

fn tour_timeline() -> Timeline {
    Timeline::from_events(Source::Live, 0, &tour().events)
}

/// The plot's y labels, in order.
fn y_ticks(html: &str) -> Vec<usize> {
    let plot = html.split("class=\"plot\"").nth(1).unwrap();
    let plot = plot.split("</svg>").next().unwrap();
    plot.split("class=\"axis\" text-anchor=\"end\">")
        .skip(1)
        .map(|s| {
            s.split('<')
                .next()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn the_plot_s_ticks_are_round_numbers() {
    let ticks = y_ticks(&page(&tour_timeline()));
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert_eq!(ticks[0], 0);
    let step = ticks[1];
    let round = (0..12).any(|k| [1, 2, 5].iter().any(|m| m * 10usize.pow(k) == step));
    assert!(round, "step {step} of {ticks:?}");
    for (k, v) in ticks.iter().enumerate() {
        assert_eq!(*v, k * step, "{ticks:?}");
    }
}

#[test]
fn a_single_spike_is_clipped_with_its_value() {
    let t = tour_timeline();
    let html = page(&t);
    let tallest = t
        .calls
        .iter()
        .map(|c| c.size_before.max(c.size_after))
        .max()
        .unwrap();
    let ticks = y_ticks(&html);
    let top = *ticks.last().unwrap();
    assert!(
        top < tallest,
        "the spike ({tallest}) does not set the scale ({ticks:?})"
    );
    assert!(
        top >= t.limit_chars(),
        "the limit line stays on the plot: {ticks:?}"
    );
    assert!(
        html.contains(&format!(
            "class=\"clip-label\" text-anchor=\"middle\">{}</text>",
            group_digits(tallest)
        )),
        "the clipped bar says its value"
    );
}

#[test]
fn every_refused_call_says_the_api_s_reason() {
    let t = tour_timeline();
    let refused: Vec<_> = t
        .calls
        .iter()
        .filter(|c| c.outcome == CallOutcome::PromptTooLong)
        .collect();
    assert!(!refused.is_empty());
    let html = page(&t);
    for c in refused {
        let words = c.refusal.as_deref().expect("the API's words");
        assert!(words.contains("42,500"), "{words}");
        let escaped = ctxlab::timeline::html::escape(words);
        assert!(
            html.contains(&format!("<td>refused: {escaped}</td>")),
            "the calls table gives call {}'s reason",
            c.number
        );
        assert!(
            html.contains(&format!("call {}</a> (", c.number))
                && html.contains("Refused by the API"),
            "the list under the plot names it"
        );
    }
    assert!(!html.contains("<td>prompt too long</td>"));
}
