//! The forgot view in the workbench (`F` on a stage row of the events pane) and the export
//! page's "What each compaction forgot" section, on the scripted tour's timeline: both show
//! the same analysis of the timeline's compactions.

use crate::common::html::check;
use crate::common::tour::tour;
use crate::support::key;
use crate::tui_timeline::tour_app;
use crossterm::event::KeyCode;
use ctxlab::forgot::analyze;
use ctxlab::timeline::forgot_inputs::timeline_inputs;
use ctxlab::timeline::html::{escape, page};
use ctxlab::timeline::{Source, Timeline};
use ctxlab::tui::app::{Layer, Pane};

fn tour_timeline() -> Timeline {
    Timeline::from_events(Source::Live, 0, &tour().events)
}

#[test]
fn the_tour_s_summaries_and_micro_clears_are_forgot_inputs() {
    let t = tour_timeline();
    let inputs = timeline_inputs(&t);
    assert!(
        inputs
            .iter()
            .any(|(_, c)| c.kind == "ctxlab compact_history")
    );
    assert!(inputs.iter().any(|(_, c)| c.micro && !c.cleared.is_empty()));
    for (step, input) in &inputs {
        let st = t.step(*step).expect("a step of the timeline");
        assert!(st.report.changed);
        let report = analyze(1, input);
        // Everything before is kept or dropped, never both, never neither.
        if !input.micro && input.kept.how == ctxlab::forgot::KeptHow::Recorded {
            assert_eq!(
                report.dropped.messages + input.kept.from_before.len(),
                input.before.len()
            );
        }
    }
}

#[test]
fn the_page_has_a_forgot_section_per_compaction() {
    let t = tour_timeline();
    let html = page(&t);
    check(&html).unwrap();
    assert!(html.contains("<h2 id=\"forgot\">What each compaction forgot</h2>"));
    let inputs = timeline_inputs(&t);
    assert_eq!(
        html.matches("<details class=\"forgot\" open>").count(),
        inputs.len()
    );
    for (n, (_, input)) in inputs.iter().enumerate() {
        let r = analyze(n + 1, input);
        for f in r.facts.iter().filter(|f| f.carried != Some(true)) {
            assert!(html.contains(&escape(&f.text)), "{}", f.text);
        }
    }
    assert!(html.contains("A check of mentions, not of meaning"));
}

#[test]
fn f_on_a_compaction_row_opens_the_forgot_view() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('2')));
    assert_eq!(a.focus(), Pane::Events);
    a.update(key(KeyCode::Char('g')));
    let mut found = None;
    for _ in 0..600 {
        a.update(key(KeyCode::Char('F')));
        if let Some(Layer::Viewer(v)) = a.top_layer() {
            let text = v.lines().join("\n");
            if text.contains("ctxlab compact_history") {
                found = Some(text);
                break;
            }
            a.update(key(KeyCode::Esc));
        }
        a.update(key(KeyCode::Char('j')));
    }
    let text = found.expect("no compact_history row opened a forgot view");
    assert!(text.contains("rule: compact_history"), "{text}");
    // The rule's sizes are in the strategy's unit; the before/kept/dropped sizes count the
    // messages' text: each says which it is, so the two figures are not read as one.
    let before = text
        .lines()
        .find(|l| l.contains("before:"))
        .unwrap_or_default();
    assert!(before.contains("chars of message text (~"), "{before}");
    assert!(text.contains("dropped:"));
    assert!(text.contains("facts:"));
    assert!(text.contains("A check of mentions, not of meaning"));
}
