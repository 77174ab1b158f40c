//! The compare view of the live tour: its replays follow the live run's refusal and compact
//! tool call, so the s08 row makes the three summaries the live run made, and a strategy
//! that cannot follow an event says so on screen.

use crossterm::event::KeyCode;
use ctxlab::compact::{PipelineConfig, Stage, Strategy};
use ctxlab::tui::{App, Msg};

use crate::common::tour::tour;
use crate::support::{key, press, screen, settle, type_text};

fn live_tour_app() -> App {
    let mut a = App::new(
        std::env::temp_dir().join("ctxlab-recording-compare-test"),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    for ev in &tour().events {
        let fx = a.update(Msg::Agent(ev.clone()));
        drop(fx);
    }
    a.update(key(KeyCode::Esc));
    a
}

fn flat(screen: &str) -> String {
    screen
        .replace(['┃', '│'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_compare_views_s08_row_makes_the_live_runs_three_summaries() {
    let mut a = live_tour_app();
    let rest = press(&mut a, KeyCode::Char('C'));
    assert!(rest.is_empty(), "{rest:?}");
    let v = a.compare().expect("the compare view is open");
    assert!(v.complete());
    let s08 = &v.runs()[0];
    assert_eq!(s08.strategy, Strategy::S08);
    let summaries: Vec<(usize, Stage)> = s08
        .calls
        .iter()
        .flat_map(|c| c.stages.iter().map(move |s| (c.call, *s)))
        .filter(|(_, s)| s.summarizes())
        .collect();
    assert_eq!(
        summaries,
        vec![
            (31, Stage::ReactiveCompact),
            (32, Stage::CompactHistory),
            (34, Stage::CompactHistory)
        ]
    );
    assert_eq!(s08.totals.summary_calls, 3);
    assert!(s08.calls[29].refused, "call 30 is the refused one");
    let text = flat(&screen(&mut a, 120, 40));
    assert!(
        text.contains("recorded in the live run: call 30: the API refused the request as too long; call 32: the model called the compact tool"),
        "{text}"
    );
}

#[test]
fn a_strategy_that_cannot_follow_a_recorded_refusal_says_so_in_the_compare_view() {
    let mut a = live_tour_app();
    let fx = type_text(&mut a, "/compare s08,s06");
    settle(&mut a, fx);
    let fx = a.update(key(KeyCode::Enter));
    settle(&mut a, fx);
    let v = a.compare().expect("the compare view is open");
    assert!(v.complete());
    let s06 = &v.runs()[1];
    assert_eq!(s06.strategy, Strategy::S06);
    assert_eq!(
        s06.totals.not_applied,
        vec![
            "call 30: the API refused the request as too long: not applied (s06 has no reactive compaction)"
                .to_string()
        ]
    );
    let text = flat(&screen(&mut a, 120, 40));
    assert!(
        text.contains("s06: call 30: the API refused the request as too long: not applied"),
        "{text}"
    );
}
