//! Issue 25 point 3 in the workbench: an answer cut at `max_tokens` marks its message row,
//! gets an event row of its own (not a start-up notice) and is said in the status line
//! after the turn, long after the hint line's notice has gone.

use crate::support::{Driver, screen};
use ctxlab::agent::events::{AgentEvent, StopReason};
use ctxlab::message::Message;

/// A turn whose answer stopped at its output limit, as the agent reports it.
fn cut_turn(d: &mut Driver) {
    d.send(AgentEvent::TurnStarted {
        request: "list everything".into(),
    });
    d.append(Message::user_text("list everything"));
    d.append(Message::assistant_blocks(vec![
        ctxlab::message::block::text("1. a\n2. b\n3."),
    ]));
    d.send(AgentEvent::AnswerCut {
        max_tokens: 512,
        index: 1,
    });
    d.send(AgentEvent::TurnDone {
        stop_reason: StopReason::MaxTokens,
    });
    // Long enough for the hint line's notice to expire: what stays is the state's own.
    d.ticks(400);
}

fn status_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains(" ctxlab │"))
        .unwrap_or_else(|| panic!("no status line:\n{text}"))
}

#[test]
fn a_cut_answer_marks_its_row_its_event_and_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    cut_turn(&mut d);
    let text = screen(&mut d.app, 120, 40);
    let status = status_line(&text);
    assert!(
        status.contains("answer cut at max_tokens: 512"),
        "the status line says only: {status}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("asst") && l.contains("1. a"))
        .unwrap_or_else(|| panic!("no row for the answer:\n{text}"));
    assert!(row.contains("cut at max_tokens"), "row not marked: {row}");
    let user_row = text
        .lines()
        .find(|l| l.contains("user") && l.contains("list everything"))
        .unwrap();
    assert!(!user_row.contains("cut at"), "{user_row}");
    // Its own event row, not a start-up notice (the legend lists those).
    assert!(
        text.lines()
            .any(|l| l.contains("answer cut at max_tokens: 512") && !l.contains("notice")),
        "{text}"
    );
    assert!(
        d.app.notices().iter().all(|n| !n.contains("answer cut")),
        "{:?}",
        d.app.notices()
    );
}

#[test]
fn the_next_turn_clears_the_status_but_not_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    cut_turn(&mut d);
    d.send(AgentEvent::TurnStarted {
        request: "go on".into(),
    });
    d.append(Message::user_text("go on"));
    d.append(Message::assistant_blocks(vec![
        ctxlab::message::block::text("done"),
    ]));
    d.send(AgentEvent::TurnDone {
        stop_reason: StopReason::EndTurn,
    });
    d.ticks(400);
    let text = screen(&mut d.app, 120, 40);
    let status = status_line(&text);
    assert!(status.contains("idle"), "{status}");
    assert!(!status.contains("cut"), "{status}");
    let row = text
        .lines()
        .find(|l| l.contains("asst") && l.contains("1. a"))
        .unwrap();
    assert!(row.contains("cut at max_tokens"), "{row}");
}

/// `ctxlab run` against a server whose answer stops at `max_tokens`: the readable output
/// and the JSON lines both say the answer was cut, and the run ends `max_tokens`.
#[test]
fn headless_run_says_the_answer_was_cut_as_lines_and_as_json() {
    use crate::common::scratch::Scratch;
    use crate::common::stub_server::{cut_answer, start};
    use std::sync::Arc;

    let stub = start(Arc::new(|_: &serde_json::Value| {
        cut_answer("1. a\n2. b\n3.")
    }));
    let run = |json: bool| {
        let s = Scratch::new();
        std::fs::create_dir_all(s.ws()).unwrap();
        let mut cmd = s.ctxlab();
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-stub-key-cut")
            .env("ANTHROPIC_BASE_URL", &stub.url)
            .env("CTXLAB_MAX_ATTEMPTS", "1")
            .args(["run", "--provider", "anthropic", "--workspace"])
            .arg(s.ws());
        if json {
            cmd.arg("--json");
        }
        let out = cmd.arg("list everything").output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let lines = run(false);
    let cut = lines
        .lines()
        .find(|l| l.starts_with("[cut] "))
        .unwrap_or_else(|| panic!("no [cut] line:\n{lines}"));
    assert!(cut.contains("answer cut at max_tokens: "), "{cut}");
    // Messages count from 0 in every view (issue 22): the cut answer is message 1.
    assert!(cut.contains("(message 1:"), "{cut}");
    assert_eq!(lines.lines().last(), Some("[done] max_tokens"), "{lines}");

    let json = run(true);
    let events: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cut = events
        .iter()
        .find(|e| e["event"] == "answer_cut")
        .unwrap_or_else(|| panic!("no answer_cut event:\n{json}"));
    assert_eq!(cut["index"], 1);
    assert!(cut["max_tokens"].as_u64().is_some_and(|n| n > 0), "{cut}");
    let done = events.last().unwrap();
    assert_eq!(done["event"], "turn_done");
    assert_eq!(done["stop_reason"], "max_tokens");
}
