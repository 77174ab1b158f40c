//! `/config` switches the strategy live: the agent applies it from the next model call,
//! never inside the call whose pipeline is running, and the events pane says from which.

use crossterm::event::KeyCode;
use ctxlab::agent::{AgentEvent, NextStep, UserCommand};
use ctxlab::compact::{PipelineConfig, Stage};

use super::harness::start;

/// The stages the timeline recorded before call `n`.
fn stages_before(app: &ctxlab::tui::App, n: usize) -> Vec<Stage> {
    let t = app.timeline();
    let call = t.call(n).expect("the call");
    t.steps[call.steps.clone()]
        .iter()
        .map(|s| s.report.stage)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strategy_chosen_in_config_runs_from_the_next_call_and_says_so() {
    let mut b = start(PipelineConfig::default(), true).await;
    b.commands
        .send(UserCommand::Submit("Find the bug".into()))
        .unwrap();
    // Paused before model call 2: its stages (s08's) have run, its request is not sent.
    let mut model_pauses = 0;
    let commands = b.commands.clone();
    b.until(|e, _| {
        let AgentEvent::Paused { next } = e else {
            return false;
        };
        if matches!(next, NextStep::ModelCall { .. }) {
            model_pauses += 1;
        }
        if model_pauses == 2 {
            return true;
        }
        commands.send(UserCommand::Step).unwrap();
        false
    })
    .await;
    assert_eq!(b.app.timeline().calls.len(), 1);

    // /config, down to the strategy row, two strategies on (s08 -> s08-latest -> s06).
    b.keys(&[KeyCode::Esc, KeyCode::Char('i')]);
    b.type_text("/config");
    b.keys(&[KeyCode::Enter]);
    for _ in 0..PipelineConfig::KEYS.len() {
        b.keys(&[KeyCode::Char('j')]);
    }
    b.keys(&[KeyCode::Enter, KeyCode::Char('l'), KeyCode::Char('l')]);
    let screen = crate::support::screen(&mut b.app, 120, 40);
    assert!(screen.contains("‹ s06 ›"), "{screen}");
    b.keys(&[KeyCode::Enter, KeyCode::Esc]);
    assert_eq!(b.app.config().strategy.name(), "s06");

    b.commands.send(UserCommand::StepMode(false)).unwrap();
    b.until_done().await;

    // Call 2 went out as prepared (s08's four stages); s06 runs from call 3 on.
    assert_eq!(
        stages_before(&b.app, 2),
        vec![
            Stage::ToolResultBudget,
            Stage::SnipCompact,
            Stage::MicroCompact,
            Stage::CompactHistory
        ]
    );
    assert_eq!(
        stages_before(&b.app, 3),
        vec![Stage::MicroCompact, Stage::AutoCompact]
    );
    let rows = b.event_texts();
    assert!(
        rows.iter().any(|r| r == "strategy s08 -> s06, from call 3"),
        "{rows:#?}"
    );
}

/// The stages that changed the history, as (call, stage), calls counted as the timeline
/// counts them.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_switch_is_followed_by_the_replay_under_the_runs_own_strategy() {
    let mut b = start(PipelineConfig::default(), true).await;
    b.commands
        .send(UserCommand::Submit("Find the bug".into()))
        .unwrap();
    let mut seen: Vec<AgentEvent> = Vec::new();
    let mut model_pauses = 0;
    let commands = b.commands.clone();
    b.until(|e, _| {
        seen.push(e.clone());
        if let AgentEvent::Paused { next } = e {
            if matches!(next, NextStep::ModelCall { .. }) {
                model_pauses += 1;
                if model_pauses == 2 {
                    // Held until call 2's request is out: s06 from call 3.
                    let s06 =
                        PipelineConfig::default().with_strategy(ctxlab::compact::Strategy::S06);
                    commands.send(UserCommand::SetConfig(s06)).unwrap();
                    commands.send(UserCommand::StepMode(false)).unwrap();
                    return false;
                }
            }
            commands.send(UserCommand::Step).unwrap();
        }
        matches!(e, AgentEvent::TurnDone { .. })
    })
    .await;
    let live = live_stages(&seen);
    // s06's stages only from call 3 on (its micro clears old results).
    assert!(!live.is_empty());
    assert!(
        live.iter()
            .all(|(c, s)| *c < 3 || matches!(s, Stage::MicroCompact | Stage::AutoCompact)),
        "{live:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut recorder = ctxlab::record::Recorder::create(
        dir.path(),
        ctxlab::session::recorded::format::FrontEnd::Run,
    )
    .unwrap();
    // A Ready first, as the agent's stream starts (the harness's App took the real one).
    recorder.record(&AgentEvent::Ready {
        provider: "scripted tour".into(),
        workspace: b.workspace.clone(),
        config: PipelineConfig::default(),
    });
    for e in &seen {
        recorder.record(e);
    }
    let loaded = ctxlab::session::load_history(recorder.path()).unwrap();
    let switch: Vec<String> = loaded.recorded.iter().map(|e| e.describe()).collect();
    assert!(
        switch.contains(&"call 3: strategy s08 -> s06".to_string()),
        "{switch:?}"
    );
    let ws = tempfile::tempdir().unwrap();
    let store = ctxlab::store::Store::new(ws.path()).without_sync();
    let options = ctxlab::pipeline_replay::ReplayOptions {
        config: loaded.recorded_config.unwrap(),
        summary_text: None,
        summarizer: None,
        now_secs: 1_700_000_000,
        recorded: loaded.recorded.clone(),
    };
    let mut replayed = Vec::new();
    let totals = ctxlab::pipeline_replay::replay(loaded.messages.clone(), &store, &options, |r| {
        for rep in &r.reports {
            replayed.push((r.call, rep.stage));
        }
    })
    .unwrap();
    assert_eq!(replayed, live, "the replay and the live run disagree");
    // The switch was followed; only the refusal s06 could not answer live either is listed.
    assert!(
        totals.not_applied.iter().all(|n| matches!(
            n.event.kind,
            ctxlab::session::recorded::RecordedKind::Refusal { .. }
        )),
        "{:?}",
        totals.not_applied
    );

    // Under guarded from the start the switch cannot be followed, and the replay says so.
    let guarded = ctxlab::pipeline_replay::ReplayOptions {
        config: PipelineConfig::default().with_strategy(ctxlab::compact::Strategy::Guarded),
        ..options
    };
    let totals =
        ctxlab::pipeline_replay::replay(loaded.messages, &store, &guarded, |_| {}).unwrap();
    let why: Vec<String> = totals.not_applied.iter().map(|n| n.describe()).collect();
    assert!(
        why.iter()
            .any(|w| w.contains("the replay runs guarded; the live run switched from s08 to s06")),
        "{why:?}"
    );
}
