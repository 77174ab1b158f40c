//! A number that differs from the legend says why: snip's "kept 48" beside the legend's
//! "last 47" and reactive's "kept last 6" beside "keep 5" carry a typed adjustment in the
//! stage's report (the lesson's reason text stays as it is, the explanation goes beside
//! it), and the scripted window's refusal says it counts the system prompt.

use crate::common::tour::tour;
use crate::support::{key, screen, session};
use crossterm::event::KeyCode;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::{Adjustment, PipelineConfig, Stage, begin_reactive_compact, snip_compact};
use ctxlab::message::{Message, block};
use ctxlab::store::Store;
use ctxlab::tui::app::EventKind;
use serde_json::json;

/// A request and `pairs` tool calls with their results: the tail of a cut at an odd
/// count from the end starts on a tool_result.
fn pairs(pairs: usize) -> Vec<Message> {
    let mut h = vec![Message::user_text("go")];
    for i in 0..pairs {
        let id = format!("t{i}");
        h.push(Message::assistant_blocks(vec![block::tool_use(
            &id,
            "bash",
            json!({"command": "ls"}),
        )]));
        h.push(Message::user_blocks(vec![block::tool_result(&id, "ok")]));
    }
    h
}

#[test]
fn snip_s_kept_48_carries_why_it_is_not_the_legend_s_47() {
    // 53 messages: the tail of 47 would start on a tool_result; it starts one earlier.
    let mut h = pairs(26);
    assert_eq!(h.len(), 53);
    let report = snip_compact(&mut h, &PipelineConfig::default());
    assert_eq!(
        report.reason, "53 messages > 50 (head 3, kept 48)",
        "the lesson's text"
    );
    assert_eq!(
        report.adjusted,
        vec![Adjustment::TailKeepsToolPair {
            configured: 47,
            kept: 48
        }]
    );
    assert!(
        report
            .why()
            .ends_with("kept the last 48, not 47: 1 more so a tool_use keeps its tool_result"),
        "{}",
        report.why()
    );
    // A cut that keeps what the settings say has nothing to explain.
    let mut h = pairs(26);
    h.push(Message::assistant_blocks(vec![block::text("done")]));
    let report = snip_compact(&mut h, &PipelineConfig::default());
    assert!(report.changed);
    assert!(report.adjusted.is_empty(), "{:?}", report.adjusted);
}

#[test]
fn reactive_s_kept_last_6_carries_why_it_is_not_the_legend_s_5() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path()).dry_run();
    let h = pairs(6);
    let pending = begin_reactive_compact(&h, &store, &PipelineConfig::default(), 1).unwrap();
    let (_, report) = pending.finish(&["summary"], "go");
    assert_eq!(report.stage, Stage::ReactiveCompact);
    assert_eq!(
        report.adjusted,
        vec![Adjustment::TailKeepsToolPair {
            configured: 5,
            kept: 6
        }]
    );
    assert!(
        report.summary().contains("kept last 6"),
        "{}",
        report.summary()
    );
}

#[test]
fn the_events_pane_and_the_diff_say_why_snip_kept_one_more() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    let mut h = pairs(26);
    let report = snip_compact(&mut h, &PipelineConfig::default());
    d.send(AgentEvent::StageRan {
        report,
        history: Some(std::sync::Arc::new(h)),
    });
    crate::support::focus(&mut d.app, '2');
    d.app.update(key(KeyCode::Char('G')));
    let row = d.app.visible_events().last().copied().unwrap();
    assert!(matches!(&d.app.events()[row].kind, EventKind::Stage { .. }));
    let detail = ctxlab::tui::event_rows::detail(&d.app.events()[row].kind).1;
    assert!(
        detail.contains("kept the last 48, not 47: 1 more so a tool_use keeps its tool_result"),
        "{detail}"
    );
    let EventKind::Stage { report, .. } = &d.app.events()[row].kind else {
        unreachable!()
    };
    let line = ctxlab::tui::event_rows::stage_text(report);
    assert!(
        line.starts_with("snip: 53 messages > 50 (head 3, kept 48) · "),
        "{line}"
    );
    assert!(
        line.ends_with(" · kept the last 48, not 47: 1 more so a tool_use keeps its tool_result"),
        "{line}"
    );
    // The diff's "why" line says it too.
    d.app.update(key(KeyCode::Enter));
    let text = screen(&mut d.app, 200, 50);
    assert!(text.contains("kept the last 48, not 47"), "{text}");
}

#[test]
fn the_tour_s_refusal_says_the_scripted_window_counts_the_system_prompt() {
    let refusal = tour()
        .events
        .iter()
        .find_map(|e| match e {
            AgentEvent::PromptTooLong {
                message,
                estimate_chars,
                ..
            } => Some((message.clone(), *estimate_chars)),
            _ => None,
        })
        .expect("the tour is refused once");
    let (message, sent) = refusal;
    assert!(message.contains("> 42,500 maximum"), "{message}");
    assert!(message.contains("counts the system prompt's"), "{message}");
    let history = ctxlab::util::group_digits(sent);
    assert!(
        message.contains(&format!("as well as the history's {history}")),
        "{message} (sent {history})"
    );
}
