//! Issue 25 point 5, the smaller items, each as the user meets it: the full session shows
//! the `[Compacted]` summary, retries read alike in both front ends, a refused summary
//! attempt has its row and the timeline marks every refusal one way, the summary call's
//! sizes are named, a connection refused names the URL, the rewound conversation's title
//! fits at 120 columns and Esc in pane 1 returns to live, and the events pane follows.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Driver, focus, key, screen, session};
use crossterm::event::KeyCode;
use ctxlab::agent::events::{AgentEvent, StopReason};
use ctxlab::commands::run::describe_event;
use ctxlab::message::Message;
use ctxlab::provider::{Model, ModelRequest, OpenAiModel, RetryPolicy};
use ctxlab::timeline::CallOutcome;
use ctxlab::tui::app::{ConvView, EventKind};
use ctxlab::tui::event_rows::row_text;

fn event_texts(d: &Driver) -> Vec<String> {
    d.app.events().iter().map(|e| row_text(&e.kind)).collect()
}

#[test]
fn the_full_session_shows_the_compacted_summary_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let summary = d
        .app
        .conversation()
        .history()
        .iter()
        .find(|r| {
            r.info()
                .message
                .text()
                .is_some_and(|t| t.contains("[Compacted"))
        })
        .map(|r| r.info().message.clone())
        .expect("the fake session compacts once");
    let in_session: Vec<usize> = (0..d.app.conversation().session().len())
        .filter(|&i| d.app.conversation().session()[i].info().message == summary)
        .collect();
    assert_eq!(
        in_session.len(),
        1,
        "the summary is not in the full session"
    );
    let at = in_session[0];
    assert!(
        d.app.conversation().session()[at].live(),
        "the model still sees the summary"
    );
    // It comes after the messages it replaced, which are dimmed with where they went;
    // every row gone later still says where it went (the rows' fates are not shifted).
    let gone: Vec<usize> = (0..d.app.conversation().session().len())
        .filter(|&i| !d.app.conversation().session()[i].live())
        .collect();
    assert!(gone.iter().any(|&i| i < at), "{gone:?} vs {at}");
    d.app.update(key(KeyCode::Esc));
    d.app.update(key(KeyCode::Char('v')));
    assert_eq!(d.app.conversation().view(), ConvView::Session);
    for &i in &gone {
        let note = d.app.conv_row(i).unwrap().note;
        assert!(
            note.as_deref()
                .is_some_and(|n| i > at || n.contains("compact_history")),
            "row {i}: {note:?}"
        );
    }
    assert!(d.app.conv_row(at).unwrap().note.is_none());
}

#[test]
fn retries_are_numbered_alike_in_the_workbench_and_headless() {
    let wait = Duration::from_millis(1_500);
    let row = row_text(&EventKind::Retry {
        attempt: 2,
        reason: "overloaded (529)".into(),
        wait,
    });
    let line = describe_event(&AgentEvent::Retrying {
        attempt: 2,
        reason: "overloaded (529)".into(),
        wait,
    })
    .unwrap();
    let words = "attempt 2 in 1.5s: overloaded (529)";
    assert!(row.contains(words), "workbench: {row}");
    assert!(line.contains(words), "headless: {line}");
    assert!(!row.contains('#'), "{row}");
}

fn summary_request(history_chars: usize, instruction_chars: usize) -> AgentEvent {
    let request = ModelRequest {
        system: "s".repeat(instruction_chars),
        messages: vec![Message::user_text("h".repeat(history_chars))],
        tools: Vec::new(),
        max_tokens: 512,
        kind: ctxlab::provider::RequestKind::Summary,
    };
    AgentEvent::RequestSent {
        estimate_chars: ctxlab::compact::estimate_size(&request.messages),
        messages: 1,
        summary: true,
        request: Some(Arc::new(request)),
        body: None,
    }
}

const REFUSAL: &str = "request (2337 tokens) exceeds the available context size (2048 tokens)";

fn refused() -> AgentEvent {
    AgentEvent::PromptTooLong {
        message: REFUSAL.into(),
        messages: 4,
        estimate_chars: 3_609,
    }
}

#[test]
fn a_refused_summary_attempt_has_a_refused_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    d.send(AgentEvent::TurnStarted {
        request: "/compact".into(),
    });
    d.send(summary_request(3_000, 300));
    d.send(refused());
    let texts = event_texts(&d);
    let row = texts
        .iter()
        .find(|t| t.contains(REFUSAL))
        .unwrap_or_else(|| panic!("{texts:#?}"));
    assert!(row.contains("summary") && row.contains("refused"), "{row}");
    // A summary request is not a model call of the timeline: nothing is marked there.
    assert!(d.app.timeline().calls.is_empty());
}

#[test]
fn the_summary_call_row_names_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    d.send(summary_request(4_005, 255));
    let texts = event_texts(&d);
    let words = "4,005 chars of history, 4,260 with the instructions";
    assert!(texts.iter().any(|t| t.contains(words)), "{texts:#?}");
    // `ctxlab run` says the same.
    let line = describe_event(&summary_request(4_005, 255)).unwrap();
    assert!(line.contains(words), "{line}");
}

#[test]
fn every_refused_call_is_marked_refused_in_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    d.send(AgentEvent::TurnStarted {
        request: "hi".into(),
    });
    d.append(Message::user_text("hi"));
    d.pre_call();
    // Refused, and no reactive compaction follows (the error goes to the user).
    d.send(refused());
    d.send(AgentEvent::TurnDone {
        stop_reason: StopReason::Error,
    });
    assert_eq!(d.app.timeline().calls.len(), 1);
    assert_eq!(
        d.app.timeline().calls[0].outcome,
        CallOutcome::PromptTooLong
    );
    focus(&mut d.app, '6');
    let text = screen(&mut d.app, 120, 40);
    assert!(
        text.lines()
            .any(|l| l.contains("   1 ") && l.contains("✗ refused")),
        "{text}"
    );
}

#[tokio::test]
async fn a_refused_connection_names_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let base = format!("http://{addr}");
    let models: Vec<(&str, Arc<dyn Model>)> = vec![
        (
            "/v1/chat/completions",
            Arc::new(
                OpenAiModel::new("m")
                    .unwrap()
                    .with_base_url(base.clone())
                    .with_retry(RetryPolicy::no_retries()),
            ),
        ),
        (
            "/v1/messages",
            Arc::new(
                ctxlab::provider::AnthropicModel::new(ctxlab::provider::ApiKey::new("k"), "m")
                    .unwrap()
                    .with_base_url(base.clone())
                    .with_retry(RetryPolicy::no_retries()),
            ),
        ),
    ];
    for (path, model) in models {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let err = model
            .stream(&crate::common::provider::req(), &tx)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("{base}{path}")), "{err}");
    }
}

#[test]
fn the_rewound_title_fits_at_120_columns_and_esc_in_pane_1_returns_to_live() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    focus(&mut d.app, '6');
    assert!(d.app.timeline_view().is_some());
    d.app.update(key(KeyCode::Char('1')));
    let text = screen(&mut d.app, 120, 40);
    let title = text
        .lines()
        .find(|l| l.contains("1 Conversation"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(title.contains("Esc: live)"), "{title}");
    d.app.update(key(KeyCode::Esc));
    assert!(
        d.app.timeline_view().is_none(),
        "Esc in pane 1 left it rewound"
    );
    let text = screen(&mut d.app, 120, 40);
    let title = text.lines().find(|l| l.contains("1 Conversation")).unwrap();
    assert!(title.contains("what the model sees"), "{title}");
}

/// The newest event row is on screen after each push while the cursor is on the last row,
/// whatever the user did before getting there.
#[test]
fn the_events_pane_follows_while_the_cursor_is_on_the_last_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let mut n = 0;
    let mut push = |d: &mut Driver| {
        n += 1;
        d.send(AgentEvent::Retrying {
            attempt: 2,
            reason: format!("M{n}"),
            wait: Duration::from_secs(1),
        });
        let text = screen(&mut d.app, 120, 40);
        assert!(
            text.contains(&format!(": M{n} ")),
            "row {n} not shown:\n{text}"
        );
    };
    for _ in 0..30 {
        push(&mut d);
    }
    // Up and back down to the last row.
    focus(&mut d.app, '2');
    d.app.update(key(KeyCode::Char('k')));
    d.app.update(key(KeyCode::Char('j')));
    push(&mut d);
    // The "all stages" filter on and off.
    d.app.update(key(KeyCode::Char('u')));
    d.app.update(key(KeyCode::Char('G')));
    push(&mut d);
    d.app.update(key(KeyCode::Char('u')));
    push(&mut d);
    // The timeline opened and closed.
    d.app.update(key(KeyCode::Char('6')));
    d.app.update(key(KeyCode::Esc));
    focus(&mut d.app, '2');
    d.app.update(key(KeyCode::Char('G')));
    push(&mut d);
    // Focus elsewhere: still following.
    focus(&mut d.app, '1');
    for _ in 0..5 {
        push(&mut d);
    }
}
