//! Step mode's pauses and "run to", the events a class watches (the API's refusal, the
//! report of a compact_history that did not run), a live pace, and starting paused.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Answer, Harness, STEP, text, too_long};
use crate::common::agent::{pinned_clock, stop_reason, until, until_done};
use ctxlab::agent::{AgentEvent, AgentSetup, NextStep, StepTarget, UserCommand, spawn};
use ctxlab::compact::{PipelineConfig, Stage, Strategy};
use ctxlab::message::block;
use ctxlab::provider::{Model, Scenario, ScriptedModel};
use ctxlab::tools::Workspace;

/// A bash call whose output is longer than the micro threshold below.
fn echo(id: &str) -> Answer {
    let command = format!("echo {}", "x".repeat(100));
    Answer::Reply(
        vec![block::tool_use(id, "bash", json!({ "command": command }))],
        "tool_use",
    )
}

/// micro_compact keeps one result and replaces older ones over 60 chars (the placeholder
/// itself is shorter, so it is never replaced twice).
fn micro_config() -> PipelineConfig {
    PipelineConfig {
        micro_keep_recent: 1,
        micro_min_chars: 60,
        ..PipelineConfig::default()
    }
}

fn is_paused(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::Paused { .. })
}

fn pauses(events: &[AgentEvent]) -> usize {
    events.iter().filter(|e| is_paused(e)).count()
}

fn main_calls(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::RequestSent { summary: false, .. }))
        .count()
}

fn last_pause(events: &[AgentEvent]) -> &NextStep {
    match events.last() {
        Some(AgentEvent::Paused { next }) => next,
        other => panic!("expected a pause, got {other:?}"),
    }
}

/// Four calls; micro changes the history before calls 3 and 4. "Run to the next stage"
/// passes the model calls; "run to the next model call" passes the stage; a target not
/// reached ends with the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_to_passes_every_pause_its_target_does_not_stop_at() {
    let mut h = Harness::start_with(
        vec![echo("t1"), echo("t2"), echo("t3"), text("done")],
        micro_config(),
    );
    h.send(UserCommand::StepMode(true));
    h.send(UserCommand::Submit("go".into()));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(matches!(
        last_pause(&seen),
        NextStep::ModelCall { messages: 1, .. }
    ));

    // To the next stage: calls 1 and 2 happen without a pause; it stops before micro.
    h.send(UserCommand::RunTo(StepTarget::Stage));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert_eq!(main_calls(&seen), 2, "calls 1 and 2 ran");
    assert_eq!(pauses(&seen), 1, "no pause before call 2");
    match last_pause(&seen) {
        NextStep::Stage { stage, preview } => {
            assert_eq!(*stage, Stage::MicroCompact);
            assert_eq!(preview.reason, "2 results > keep 1; 1 older over 60 chars");
        }
        other => panic!("expected micro's pause, got {other:?}"),
    }

    // To the next model call: micro runs without a pause of its own, call 3 is next.
    h.send(UserCommand::RunTo(StepTarget::ModelCall));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(seen.iter().any(|e| matches!(
        e,
        AgentEvent::StageRan { report, .. } if report.stage == Stage::MicroCompact && report.changed
    )));
    assert_eq!(main_calls(&seen), 0);
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));

    // To the next stage again: call 3 runs; the micro before call 4 makes one placeholder,
    // as the one shown before call 3 did: no new lesson, so it goes by and the turn ends.
    h.send(UserCommand::RunTo(StepTarget::Stage));
    let done = until_done(&mut h.events, STEP).await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    assert_eq!(main_calls(&done), 2, "calls 3 and 4 ran");
    assert_eq!(pauses(&done), 0);
    assert!(
        done.iter().any(|e| matches!(
            e,
            AgentEvent::StageRan { report, .. } if report.stage == Stage::MicroCompact && report.changed
        )),
        "the micro before call 4 still ran"
    );

    // The target ended with the turn: the next one pauses before its first call.
    h.send(UserCommand::Submit("again".into()));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));
    assert_eq!(main_calls(&seen), 0);
    h.quit().await;
}

/// Under s06 (no reactive compaction) the refusal is still an event; step mode does not
/// pause before a stage that will not run, and the turn ends with the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reactive_compaction_the_refusal_is_an_event_and_nothing_pauses_for_it() {
    let config = PipelineConfig::default().with_strategy(Strategy::S06);
    let mut h = Harness::start_with(vec![too_long()], config);
    h.send(UserCommand::StepMode(true));
    h.send(UserCommand::Submit("hello".into()));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));
    h.send(UserCommand::Step);
    let done = until_done(&mut h.events, STEP).await;
    assert_eq!(stop_reason(&done), Some("error"));
    assert!(
        done.iter()
            .any(|e| matches!(e, AgentEvent::PromptTooLong { .. }))
    );
    assert_eq!(pauses(&done), 0, "{done:#?}");
    h.quit().await;
}

/// The API's refusal is an event with its words, reactive_compact waits with them, and the
/// summary call waits too, after the transcript was saved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactive_compact_pauses_with_the_apis_words_and_before_its_summary_call() {
    let config = PipelineConfig {
        reactive_keep_tail: 1,
        ..PipelineConfig::default()
    };
    let mut h = Harness::start_with(vec![text("hi"), too_long(), text("fine now")], config);
    let done = h.turn("hello").await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    h.send(UserCommand::StepMode(true));
    h.send(UserCommand::Submit("again".into()));
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));

    h.send(UserCommand::Step);
    let seen = until(&mut h.events, STEP, is_paused).await;
    let refusal = seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::PromptTooLong {
                message, messages, ..
            } => Some((message.clone(), *messages)),
            _ => None,
        })
        .expect("the refusal is an event");
    assert_eq!(
        refusal,
        (
            "prompt is too long: 300000 tokens > 200000 maximum".to_string(),
            3
        )
    );
    match last_pause(&seen) {
        NextStep::Reactive {
            stage,
            api_message,
            replaced,
            kept,
            ..
        } => {
            assert_eq!(*stage, Stage::ReactiveCompact);
            assert_eq!(*api_message, refusal.0);
            assert_eq!((*replaced, *kept), (2, 1));
        }
        other => panic!("expected reactive's pause, got {other:?}"),
    }
    let transcript = h.ws.path().join(".transcripts/transcript_1700000000.jsonl");
    assert!(!transcript.exists(), "nothing written before the step");

    h.send(UserCommand::Step);
    let seen = until(&mut h.events, STEP, is_paused).await;
    match last_pause(&seen) {
        NextStep::SummaryCall {
            stage, replaced, ..
        } => {
            assert_eq!(*stage, Stage::ReactiveCompact);
            assert_eq!(*replaced, 2);
        }
        other => panic!("expected the summary call's pause, got {other:?}"),
    }
    assert!(transcript.is_file(), "the transcript is saved first");
    assert_eq!(h.requests().len(), 2, "the summary request is not sent yet");

    h.send(UserCommand::Step);
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(seen.iter().any(|e| matches!(
        e,
        AgentEvent::StageRan { report, .. } if report.stage == Stage::ReactiveCompact && report.changed
    )));
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));
    h.send(UserCommand::Step);
    let done = until_done(&mut h.events, STEP).await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    h.quit().await;
}

/// compact_history reports why it did not run; over the limit it pauses with its reason,
/// then before its summary call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_history_says_why_it_did_not_run_and_pauses_before_it_does() {
    let mut h = Harness::start(vec![text("one"), text("two")]);
    let done = h.turn("first").await;
    let within: Vec<&String> = done
        .iter()
        .filter_map(|e| match e {
            AgentEvent::StageRan { report, .. } if report.stage == Stage::CompactHistory => {
                assert!(!report.changed);
                Some(&report.reason)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        within,
        vec!["38 <= 50,000"],
        "one report before the one call"
    );

    h.send(UserCommand::SetConfig(PipelineConfig {
        context_limit: 10,
        ..PipelineConfig::default()
    }));
    h.send(UserCommand::StepMode(true));
    h.send(UserCommand::Submit("second".into()));
    let seen = until(&mut h.events, STEP, is_paused).await;
    match last_pause(&seen) {
        NextStep::Summarize {
            stage,
            messages,
            reason,
            focus,
            ..
        } => {
            assert_eq!(*stage, Stage::CompactHistory);
            assert_eq!(*messages, 3);
            assert!(reason.ends_with(" > 10"), "{reason}");
            assert_eq!(*focus, None);
        }
        other => panic!("expected compact_history's pause, got {other:?}"),
    }
    h.send(UserCommand::Step);
    let seen = until(&mut h.events, STEP, is_paused).await;
    assert!(matches!(
        last_pause(&seen),
        NextStep::SummaryCall {
            stage: Stage::CompactHistory,
            replaced: 3,
            ..
        }
    ));
    h.send(UserCommand::StepMode(false));
    let done = until_done(&mut h.events, STEP).await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    h.quit().await;
}

/// `/pace` reaches the scripted model while it runs; a model without a pace says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_pace_changes_the_scripted_models_pace_live() {
    let ws = tempfile::tempdir().unwrap();
    let scripted = Arc::new(
        ScriptedModel::new(Scenario::embedded("tour").unwrap())
            .with_pace(Duration::from_millis(30)),
    );
    let model: Arc<dyn Model> = scripted.clone();
    let mut setup = AgentSetup::new(
        model,
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    );
    setup.clock = pinned_clock;
    let (commands, mut events, handle) = spawn(setup);
    commands
        .send(UserCommand::SetPace(Duration::from_millis(250)))
        .unwrap();
    let seen = until(&mut events, STEP, |e| {
        matches!(e, AgentEvent::PaceChanged { .. })
    })
    .await;
    assert!(matches!(
        seen.last(),
        Some(AgentEvent::PaceChanged {
            pace_ms: 250,
            applied: true
        })
    ));
    assert_eq!(scripted.pace(), Duration::from_millis(250));
    commands.send(UserCommand::Quit).unwrap();
    tokio::time::timeout(STEP, handle).await.unwrap().unwrap();

    let mut h = Harness::start(vec![]);
    h.send(UserCommand::SetPace(Duration::ZERO));
    let seen = until(&mut h.events, STEP, |e| {
        matches!(e, AgentEvent::PaceChanged { .. })
    })
    .await;
    assert!(matches!(
        seen.last(),
        Some(AgentEvent::PaceChanged {
            pace_ms: 0,
            applied: false
        })
    ));
    h.quit().await;
}

/// Running to the next stage stops once per kind of change: the tour's every stage in
/// eight presses of `s` (the README's figure), where it took 28 when each of the eighteen
/// one-result micro_compacts stopped. A single step (Space) still stops at each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_to_the_next_stage_stops_once_per_kind_of_change_in_the_tour() {
    let ws = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    ctxlab::startup::copy_tree(&demo, ws.path()).unwrap();
    let scripted =
        ScriptedModel::new(Scenario::embedded("tour").unwrap()).with_pace(Duration::ZERO);
    let scenario = Scenario::embedded("tour").unwrap();
    let request = scenario.request.clone();
    let mut setup = AgentSetup::new(
        Arc::new(scripted),
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    );
    setup.step_mode = true;
    setup.clock = pinned_clock;
    let (commands, mut events, handle) = spawn(setup);
    commands.send(UserCommand::Submit(request)).unwrap();
    let seen = until(&mut events, STEP, is_paused).await;
    assert!(matches!(last_pause(&seen), NextStep::ModelCall { .. }));
    let mut stops = Vec::new();
    let mut micro_ran = 0;
    loop {
        commands
            .send(UserCommand::RunTo(StepTarget::Stage))
            .unwrap();
        let seen = until(&mut events, Duration::from_secs(60), |e| {
            is_paused(e) || matches!(e, AgentEvent::TurnDone { .. })
        })
        .await;
        micro_ran += seen
            .iter()
            .filter(|e| matches!(e, AgentEvent::StageRan { report, .. } if report.stage == Stage::MicroCompact && report.changed))
            .count();
        match seen.last() {
            Some(AgentEvent::Paused { next }) => stops.push(next.clone()),
            _ => break,
        }
        assert!(stops.len() < 40, "the tour never ended");
    }
    let stages: Vec<Stage> = stops
        .iter()
        .filter_map(|n| match n {
            NextStep::Stage { stage, .. }
            | NextStep::Summarize { stage, .. }
            | NextStep::Reactive { stage, .. } => Some(*stage),
            _ => None,
        })
        .collect();
    assert_eq!(
        stages,
        vec![
            Stage::MicroCompact,
            Stage::SnipCompact,
            Stage::ReactiveCompact,
            Stage::CompactHistory,
            Stage::ToolResultBudget,
            Stage::MicroCompact,
            Stage::CompactHistory,
        ],
        "{stops:#?}"
    );
    // Seven stops and the press that ends the tour.
    assert_eq!(stops.len() + 1, 8);
    assert!(
        micro_ran > 10,
        "the repeated micro_compacts still ran: {micro_ran}"
    );
    commands.send(UserCommand::Quit).unwrap();
    tokio::time::timeout(STEP, handle).await.unwrap().unwrap();
}

/// An agent set up in step mode says so when it starts and pauses before the first call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_started_in_step_mode_says_so_and_pauses_before_the_first_call() {
    let ws = tempfile::tempdir().unwrap();
    let scripted =
        ScriptedModel::new(Scenario::embedded("tour").unwrap()).with_pace(Duration::ZERO);
    let mut setup = AgentSetup::new(
        Arc::new(scripted),
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    );
    setup.step_mode = true;
    setup.clock = pinned_clock;
    let (commands, mut events, handle) = spawn(setup);
    let first = until(&mut events, STEP, |e| {
        matches!(e, AgentEvent::StepModeChanged { .. })
    })
    .await;
    assert!(matches!(first[0], AgentEvent::Ready { .. }));
    assert!(matches!(
        first.last(),
        Some(AgentEvent::StepModeChanged { on: true })
    ));
    commands.send(UserCommand::Submit("go".into())).unwrap();
    let seen = until(&mut events, STEP, is_paused).await;
    assert!(matches!(
        last_pause(&seen),
        NextStep::ModelCall { messages: 1, .. }
    ));
    assert_eq!(main_calls(&seen), 0);
    commands.send(UserCommand::Quit).unwrap();
    tokio::time::timeout(STEP, handle).await.unwrap().unwrap();
}
