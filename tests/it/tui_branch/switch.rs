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
