//! Item 1: a panic of the agent task is an error the user sees. The events end with an
//! `error` and `turn_done: error` (so `ctxlab run` fails, in text and JSON), and the
//! workbench keeps the session on screen instead of exiting.

use std::time::Duration;

use ctxlab::agent::{AgentEvent, AgentSetup, ErrorKind, StopReason, UserCommand, spawn};
use ctxlab::commands::run::{HeadlessStep, RunningAgent, SessionEnd, run_session};
use ctxlab::compact::PipelineConfig;
use ctxlab::tools::Workspace;

use crate::common::agent::until_done;
use crate::common::models::{PanicModel, arc};
use crate::common::pty::{Pty, demo_binary};
use crate::common::scratch::Scratch;

fn panicking_setup(ws: &tempfile::TempDir) -> AgentSetup {
    AgentSetup::new(
        arc(PanicModel),
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_agent_ends_the_turn_with_an_error_event() {
    let ws = tempfile::tempdir().unwrap();
    let (commands, mut events, handle) = spawn(panicking_setup(&ws));
    commands.send(UserCommand::Submit("hello".into())).unwrap();
    let seen = until_done(&mut events, Duration::from_secs(10)).await;
    let error = seen.iter().find_map(|e| match e {
        AgentEvent::Error { kind, message } => Some((*kind, message.clone())),
        _ => None,
    });
    let (kind, message) = error.expect("an error event");
    assert_eq!(kind, ErrorKind::Internal);
    assert!(message.contains("model exploded on purpose"), "{message}");
    assert!(matches!(
        seen.last(),
        Some(AgentEvent::TurnDone {
            stop_reason: StopReason::Error
        })
    ));
    // The task is over and the event stream closes: a front end sees the agent is gone.
    tokio::time::timeout(Duration::from_secs(5), handle)
        .await
        .expect("the supervisor ends")
        .unwrap();
    assert!(events.recv().await.is_none());
}

async fn headless(json: bool) -> (SessionEnd, String) {
    let ws = tempfile::tempdir().unwrap();
    let (commands, events, handle) = spawn(panicking_setup(&ws));
    let mut out = Vec::new();
    let end = run_session(
        vec![HeadlessStep::Submit("hello".into())],
        RunningAgent {
            commands,
            events,
            handle,
        },
        json,
        &mut out,
        std::future::pending(),
        std::future::pending(),
    )
    .await
    .unwrap();
    (end, String::from_utf8(out).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctxlab_run_reports_the_panic_as_an_error_in_text_and_json() {
    let (end, text) = tokio::time::timeout(Duration::from_secs(20), headless(false))
        .await
        .expect("the run ends");
    let SessionEnd::Finished(outcome) = end else {
        panic!("the run did not finish: {end:?}");
    };
    assert_eq!(outcome.stop_reason, Some(StopReason::Error));
    let cause = outcome.last_error.expect("the cause, for stderr");
    assert!(cause.contains("model exploded on purpose"), "{cause}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("[error] Internal:") && l.contains("model exploded")),
        "{text}"
    );
    assert_eq!(text.lines().last(), Some("[done] error"), "{text}");

    let (_, json) = tokio::time::timeout(Duration::from_secs(20), headless(true))
        .await
        .expect("the run ends");
    let events: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "error" && e["kind"] == "internal"),
        "{json}"
    );
    let last = events.last().unwrap();
    assert_eq!(
        (last["event"].as_str(), last["stop_reason"].as_str()),
        (Some("turn_done"), Some("error"))
    );
}

/// The workbench on a fake agent that panics when asked something (the `tui_demo` example,
/// supervised like the real agent): the error shows, the screen stays, `q` still quits clean.
#[test]
fn the_workbench_shows_an_agent_panic_and_keeps_the_session() {
    let demo = demo_binary();
    let scratch = Scratch::new();
    let mut s = Pty::start(
        &demo,
        &[],
        scratch.path(),
        &scratch.home(),
        &[("CTXLAB_DEMO_AGENT_PANIC", "1")],
    );
    s.wait_for("1 Conversation");
    // Focus starts outside the input box: `i` types.
    s.send(b"i");
    s.send(b"first request\r");
    s.wait_for("You said: first request");
    s.send(b"panic please\r");
    let screen = s.wait_for("error internal: the agent");
    assert!(
        screen.contains("first request"),
        "the session is gone:\n{screen}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        s.is_running(),
        "the workbench exited after the agent's panic"
    );
    s.send(b"\x03\x03");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}
