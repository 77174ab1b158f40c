//! The tour's live run (the shared headless run, scripted model) recorded through the
//! recorder, read back, and replayed under its own strategy and settings: the replay fires
//! the stages the live run fired, at the same calls.

use std::path::PathBuf;

use crate::common::tour::tour;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::{PipelineConfig, Stage, Strategy};
use ctxlab::pipeline_replay::{ReplayOptions, replay};
use ctxlab::record::Recorder;
use ctxlab::session::recorded::RecordedKind;
use ctxlab::store::Store;

/// The stages that changed the history before each call, as (call, stage), calls counted
/// as the timeline counts them (a refused request is a call).
fn live_stages(events: &[AgentEvent]) -> Vec<(usize, Stage)> {
    let mut calls = 0;
    let mut out = Vec::new();
    for e in events {
        match e {
            AgentEvent::StageRan { report, .. } if report.changed => {
                out.push((calls + 1, report.stage))
            }
            AgentEvent::RequestSent { summary: false, .. } => calls += 1,
            _ => {}
        }
    }
    out
}

/// The tour's events written by the recorder into a fresh folder; the file's path.
fn recorded_tour(dir: &std::path::Path) -> PathBuf {
    let mut recorder =
        Recorder::create(dir, ctxlab::session::recorded::format::FrontEnd::Run).unwrap();
    for e in &tour().events {
        recorder.record(e);
    }
    recorder.path().to_path_buf()
}

fn replayed_stages(
    messages: Vec<ctxlab::message::Message>,
    options: &ReplayOptions,
) -> (Vec<(usize, Stage)>, ctxlab::pipeline_replay::ReplayTotals) {
    let ws = tempfile::tempdir().unwrap();
    let store = Store::new(ws.path()).without_sync();
    let mut out = Vec::new();
    let totals = replay(messages, &store, options, |record| {
        for r in &record.reports {
            out.push((record.call, r.stage));
        }
    })
    .unwrap();
    (out, totals)
}

#[test]
fn the_tours_replay_fires_the_stages_the_live_run_fired_at_the_same_calls() {
    let live = live_stages(&tour().events);
    // The live tour: reactive at call 31 (after the refusal of call 30), the compact tool's
    // compaction at 32, compact_history over the limit at 34.
    let summaries: Vec<(usize, Stage)> = live
        .iter()
        .copied()
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

    let dir = tempfile::tempdir().unwrap();
    let path = recorded_tour(dir.path());
    let loaded = ctxlab::session::load_history(&path).unwrap();
    assert_eq!(loaded.format.name(), "ctxlab-session");
    assert_eq!(loaded.recorded_config, Some(PipelineConfig::default()));
    let kinds: Vec<(usize, &str)> = loaded
        .recorded
        .iter()
        .map(|e| {
            let kind = match e.kind {
                RecordedKind::Refusal { .. } => "refusal",
                RecordedKind::Compact { .. } => "compact",
                RecordedKind::Config { .. } => "config",
            };
            (e.call, kind)
        })
        .collect();
    assert_eq!(kinds, vec![(30, "refusal"), (32, "compact")]);

    let options = ReplayOptions {
        config: loaded.recorded_config.unwrap(),
        summary_text: None,
        summarizer: None,
        now_secs: 1_700_000_000,
        recorded: loaded.recorded.clone(),
    };
    let (replayed, totals) = replayed_stages(loaded.messages.clone(), &options);
    assert_eq!(replayed, live, "the replay and the live run disagree");
    assert!(totals.not_applied.is_empty(), "{:?}", totals.not_applied);
    // Every request of the live run is a call of the replay, the refused one included.
    let live_calls = tour()
        .events
        .iter()
        .filter(|e| matches!(e, AgentEvent::RequestSent { summary: false, .. }))
        .count();
    assert_eq!(totals.calls, live_calls);

    // Without the recorded events the replay cannot know about the refusal or the tool:
    // it fires one summary where the live run made three.
    let blind = ReplayOptions {
        recorded: Vec::new(),
        ..options
    };
    let (blind_stages, _) = replayed_stages(loaded.messages, &blind);
    let blind_summaries = blind_stages.iter().filter(|(_, s)| s.summarizes()).count();
    assert_eq!(blind_summaries, 1);
}

#[test]
fn a_replay_under_a_strategy_without_reactive_compaction_says_what_it_could_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_tour(dir.path());
    let loaded = ctxlab::session::load_history(&path).unwrap();
    let options = ReplayOptions {
        config: PipelineConfig::for_strategy(Strategy::S06),
        summary_text: None,
        summarizer: None,
        now_secs: 1_700_000_000,
        recorded: loaded.recorded.clone(),
    };
    let (stages, totals) = replayed_stages(loaded.messages, &options);
    let said: Vec<String> = totals.not_applied.iter().map(|n| n.describe()).collect();
    assert_eq!(
        said,
        vec![
            "call 30: the API refused the request as too long: not applied (s06 has no reactive compaction)"
                .to_string()
        ]
    );
    // Typed, and in JSON the same words as when it was text.
    assert_eq!(
        totals.not_applied[0].why,
        ctxlab::pipeline_replay::NotAppliedWhy::NoReactive(Strategy::S06)
    );
    let json = serde_json::to_value(&totals.not_applied[0]).unwrap();
    assert_eq!(json["why"], "s06 has no reactive compaction");
    // The compact tool's request is followed: s06's auto_compact runs at call 32.
    assert!(
        stages.contains(&(32, Stage::AutoCompact)),
        "s06 stages: {stages:?}"
    );
}

#[test]
fn the_exported_timeline_of_a_recording_marks_the_refused_call_as_the_live_one_did() {
    use ctxlab::timeline::{CallOutcome, Timeline};
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_tour(dir.path());
    let loaded = ctxlab::session::load_history(&path).unwrap();
    let options = ReplayOptions {
        config: loaded.recorded_config.unwrap(),
        summary_text: None,
        summarizer: None,
        now_secs: 1_700_000_000,
        recorded: loaded.recorded.clone(),
    };
    let ws = tempfile::tempdir().unwrap();
    let store = Store::new(ws.path()).dry_run();
    let (t, _) = Timeline::from_replay("tour", loaded.messages, &store, &options).unwrap();
    let refused: Vec<usize> = t
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.outcome == CallOutcome::PromptTooLong)
        .map(|(k, _)| k + 1)
        .collect();
    assert_eq!(refused, vec![30]);
}

/// A recorded change of numbers alone (the live run lowered its limit, no strategy switch)
/// is followed by a replay under another strategy, with the numbers under its own strategy.
/// Before, guarded listed it as not applied: "the live run switched from s08 to s08".
#[test]
fn a_change_of_numbers_is_followed_under_another_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_tour(dir.path());
    let loaded = ctxlab::session::load_history(&path).unwrap();
    let lowered = PipelineConfig {
        context_limit: 2_000,
        ..PipelineConfig::default()
    };
    let mut recorded = loaded.recorded.clone();
    recorded.push(ctxlab::session::recorded::RecordedEvent {
        at: 0,
        call: 5,
        kind: RecordedKind::Config {
            config: lowered,
            from: lowered.strategy,
        },
    });
    recorded.sort_by_key(|e| e.call);
    let guarded = |recorded: Vec<_>| ReplayOptions {
        config: PipelineConfig::for_strategy(Strategy::Guarded),
        summary_text: None,
        summarizer: None,
        now_secs: 1_700_000_000,
        recorded,
    };
    let (with, totals) = replayed_stages(loaded.messages.clone(), &guarded(recorded));
    let said: Vec<String> = totals.not_applied.iter().map(|n| n.describe()).collect();
    assert!(
        !said.iter().any(|w| w.contains("switched")),
        "a change of numbers is no switch: {said:?}"
    );
    let (without, _) = replayed_stages(loaded.messages, &guarded(loaded.recorded.clone()));
    let first_summary = |stages: &[(usize, Stage)]| {
        stages
            .iter()
            .find(|(_, s)| s.summarizes())
            .map(|(call, _)| *call)
    };
    // Under a 2,000-char limit from call 5, guarded summarizes from call 5 on, long before
    // it does under its own limit.
    let early = first_summary(&with).expect("a summary under the lowered limit");
    assert!(early >= 5, "{with:?}");
    assert!(
        first_summary(&without).is_none_or(|c| c > early),
        "{with:?} / {without:?}"
    );
}
