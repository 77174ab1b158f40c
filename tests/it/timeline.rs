//! The timeline model on the real tour (the agent's events) and on replays: every call's
//! request is the exact request the model received, every change between two calls is
//! labelled with the stage that made it, and every appended message says where it went.

use std::collections::BTreeSet;

use crate::common::agent::is_summary_request;
use crate::common::tour::tour;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::{Change, PipelineConfig, Stage};
use ctxlab::message::Message;
use ctxlab::pipeline_replay::{ReplayOptions, replay};
use ctxlab::store::Store;
use ctxlab::timeline::lineage::RowEffect;
use ctxlab::timeline::{CallOutcome, DiffOp, Timeline};

fn tour_timeline() -> Timeline {
    Timeline::from_events(ctxlab::timeline::Source::Live, 0, &tour().events)
}

/// Rebuilds call N's messages from call N-1's and the diff: the diff is complete.
fn check_diffs_rebuild_requests(t: &Timeline) {
    for call in &t.calls {
        let diff = t.call_diff(call.number);
        let prev: Vec<&Message> = match t.call(call.number - 1) {
            Some(p) => p.messages().collect(),
            None => Vec::new(),
        };
        let old_side: Vec<usize> = diff
            .iter()
            .filter_map(|r| r.old.as_ref().and_then(|s| s.index))
            .collect();
        assert_eq!(
            old_side,
            (0..prev.len()).collect::<Vec<_>>(),
            "call {}: every old row once, in order",
            call.number
        );
        let new_side: Vec<&Message> = diff
            .iter()
            .filter_map(|r| r.new.as_ref().map(|s| s.message.as_ref()))
            .collect();
        let request: Vec<&Message> = call.messages().collect();
        assert_eq!(
            new_side, request,
            "call {}: the new side is the request",
            call.number
        );
        for r in &diff {
            match r.op {
                DiffOp::Same => assert!(r.touches.is_empty()),
                _ => assert!(
                    !r.touches.is_empty(),
                    "call {}: an unexplained change",
                    call.number
                ),
            }
        }
    }
}

#[test]
fn every_call_holds_the_exact_request_the_model_received() {
    let t = tour_timeline();
    let main: Vec<_> = tour()
        .requests
        .iter()
        .filter(|r| !is_summary_request(r))
        .collect();
    assert_eq!(t.calls.len(), main.len());
    for (call, req) in t.calls.iter().zip(&main) {
        let ours: Vec<&Message> = call.messages().collect();
        let sent: Vec<&Message> = req.messages.iter().collect();
        assert_eq!(ours, sent, "call {}", call.number);
        assert_eq!(call.system.as_deref(), Some(req.system.as_str()));
        assert_eq!(*call.tools, *req.tools);
        assert_eq!(
            call.size_after,
            ctxlab::compact::estimate_size(&req.messages)
        );
        let json = call.request_json();
        assert_eq!(
            json["messages"].as_array().unwrap().len(),
            req.messages.len()
        );
        assert_eq!(json["system"], req.system.as_str());
    }
    // Unchanged messages are shared between calls, not copied.
    let (a, b) = (&t.calls[1], &t.calls[2]);
    assert!(std::sync::Arc::ptr_eq(
        &a.rows[0].message,
        &b.rows[0].message
    ));
}

#[test]
fn the_big_batch_shows_its_size_before_the_pipeline() {
    let t = tour_timeline();
    let budget = t
        .steps
        .iter()
        .find(|s| s.report.stage == Stage::ToolResultBudget && s.report.changed)
        .expect("the tour persists a result");
    let call = t.call(budget.call).unwrap();
    assert_eq!(call.size_before, budget.report.size_before);
    assert!(call.size_before > 200_000, "{}", call.size_before);
    assert!(call.size_after < t.context_limit);
    assert!(call.letters(&t.steps).starts_with('B'));
    assert_eq!(t.context_limit, 50_000);
}

#[test]
fn every_change_between_calls_names_its_stage() {
    let t = tour_timeline();
    check_diffs_rebuild_requests(&t);
    // A snip: the removed rows are exactly as many as the report says, all by snip.
    for (i, step) in t.steps_by_id() {
        let Some(Change::Snipped { removed, .. }) = step.report.changes.first() else {
            continue;
        };
        let diff = t.step_diff(i);
        let gone: Vec<_> = diff.iter().filter(|r| r.op == DiffOp::Removed).collect();
        assert_eq!(
            gone.len(),
            *removed,
            "step {i}: the diff agrees with the title"
        );
        assert_eq!(diff.iter().filter(|r| r.op == DiffOp::Added).count(), 1);
        for r in gone {
            assert_eq!(r.cause(), "snip_compact");
        }
        let call_diff = t.call_diff(step.call);
        assert!(
            call_diff
                .iter()
                .any(|r| r.op == DiffOp::Removed && r.cause() == "snip_compact")
        );
    }
}

#[test]
fn the_refused_call_is_marked_and_reactive_belongs_to_the_next() {
    let t = tour_timeline();
    let reactive = t
        .steps
        .iter()
        .find(|s| s.report.stage == Stage::ReactiveCompact)
        .expect("the tour has a reactive compaction");
    let refused = t.call(reactive.call - 1).unwrap();
    assert_eq!(refused.outcome, CallOutcome::PromptTooLong);
    let next = t.call(reactive.call).unwrap();
    assert_eq!(next.outcome, CallOutcome::Answered);
    assert!(next.letters(&t.steps).starts_with('R'));
    // The retry's history before the pipeline is the refused request.
    assert_eq!(next.size_before, refused.size_after);
    // Each call carries the usage reported after its own request; a summary's never.
    let mut expected: Vec<Option<u64>> = Vec::new();
    let mut in_summary = false;
    for e in &tour().events {
        match e {
            AgentEvent::RequestSent { summary, .. } => {
                in_summary = *summary;
                if !summary {
                    expected.push(None);
                }
            }
            AgentEvent::Usage {
                input_tokens: Some(n),
                ..
            } if !in_summary => {
                if let Some(last) = expected.last_mut() {
                    *last = Some(*n);
                }
            }
            _ => {}
        }
    }
    let got: Vec<Option<u64>> = t.calls.iter().map(|c| c.input_tokens).collect();
    assert_eq!(got, expected);
    assert!(got.iter().any(Option::is_some));
}

#[test]
fn every_appended_message_says_where_it_went() {
    let t = tour_timeline();
    let live: BTreeSet<usize> = t
        .calls
        .last()
        .map(|c| c.rows.iter().filter_map(|r| r.session).collect())
        .unwrap_or_default();
    let mut snipped = 0;
    for (i, entry) in t.session.iter().enumerate() {
        match entry.removal() {
            Some(touch) => {
                assert!(touch.stage.is_some(), "entry {i} removed outside a stage");
                if let RowEffect::Snipped { marker } = &touch.effect {
                    assert!(marker.starts_with("[snipped "), "{marker}");
                    snipped += 1;
                }
            }
            None => assert!(
                live.contains(&i) || entry.before_call > t.calls.len(),
                "entry {i} is neither live nor removed"
            ),
        }
    }
    assert!(snipped > 0);
    // The five-result message: toolu_tour_035 went to a file, the others did not.
    let batch = t
        .session
        .iter()
        .find(|e| e.message.tool_results().count() == 5)
        .expect("the tour's batch of five results");
    let persisted: Vec<&RowEffect> = batch
        .touches
        .iter()
        .map(|t| &t.effect)
        .filter(|e| matches!(e, RowEffect::Persisted { .. }))
        .collect();
    assert_eq!(
        persisted,
        vec![&RowEffect::Persisted {
            tool_use_id: Some("toolu_tour_035".into()),
            path: ".task_outputs/tool-results/toolu_tour_035.txt".into()
        }]
    );
}

#[test]
fn a_replay_builds_the_same_kind_of_timeline_as_the_live_run() {
    // The live history's final messages, replayed as a recorded session.
    let mut mirror = crate::common::agent::HistoryMirror::default();
    let mut session = Vec::new();
    for ev in &tour().events {
        mirror.apply(ev);
        if let AgentEvent::MessageAppended { message } = ev {
            session.push(message.clone());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path()).dry_run();
    let options = ReplayOptions {
        config: PipelineConfig::default(),
        summary_text: Some("facts".into()),
        summarizer: None,
        now_secs: 1,
        recorded: Vec::new(),
    };
    let (t, totals) = Timeline::from_replay("tour", session.clone(), &store, &options).unwrap();
    let mut records = Vec::new();
    let again = Store::new(dir.path()).dry_run();
    replay(session, &again, &options, |r| records.push(r.clone())).unwrap();
    assert_eq!(t.calls.len(), totals.calls);
    assert_eq!(t.calls.len(), records.len());
    for (c, r) in t.calls.iter().zip(&records) {
        assert_eq!(c.size_after, r.estimate_size);
        assert_eq!(c.rows.len(), r.messages);
        assert_eq!(c.system, None, "a replay did not record the system prompt");
        let changed: Vec<Stage> = t.steps[c.steps.clone()]
            .iter()
            .filter(|s| s.report.changed)
            .map(|s| s.report.stage)
            .collect();
        let fired: Vec<Stage> = r.reports.iter().map(|s| s.stage).collect();
        assert_eq!(changed, fired, "call {}", c.number);
    }
    check_diffs_rebuild_requests(&t);
    assert!(
        !dir.path().join(".transcripts").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn size_before_and_sent_are_on_one_scale_whatever_the_strategy_reports_in() {
    // s06 reports its stages in tokens; the timeline's sizes are chars of Python `str()`
    // on both sides, so a call no stage changed shows the same size before and sent.
    let example = crate::common::cli::example();
    let session = ctxlab::session::load_history(&example).unwrap().messages;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path()).dry_run();
    let options = ReplayOptions {
        config: PipelineConfig::for_strategy(ctxlab::compact::Strategy::S06),
        summary_text: Some("facts".into()),
        summarizer: None,
        now_secs: 1,
        recorded: Vec::new(),
    };
    let (t, _) = Timeline::from_replay("every", session, &store, &options).unwrap();
    let mut unchanged = 0;
    for c in &t.calls {
        let changed = t.steps[c.steps.clone()].iter().any(|s| s.report.changed);
        if !changed {
            unchanged += 1;
            assert_eq!(c.size_before, c.size_after, "call {}", c.number);
        } else {
            assert!(c.size_before > c.size_after, "call {}", c.number);
        }
    }
    assert!(unchanged > 0 && unchanged < t.calls.len());
}
