//! Claude Code rewinds: a person's message whose `parentUuid` points back past an answer
//! starts a new branch. The branch that continued is the conversation (what a replay takes,
//! what the model saw afterwards); the abandoned one stays in the full session, marked, and
//! still counts as the model calls it cost (docs/pipeline.md, "Reading sessions").

use ctxlab::message::Message;
use ctxlab::session::{MessageKind, Session, load_history, parse_session_text};
use serde_json::{Value, json};

use crate::common::cli::{homeless as ctxlab, json_out};
use crate::common::files::session_fixture as fixture;

/// One Claude Code line: `kind` user/assistant/system, its uuid and parent (`None` writes
/// `"parentUuid": null`).
fn line(kind: &str, uuid: &str, parent: Option<&str>, extra: Value) -> String {
    let mut v = json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
        "sessionId": "s", "cwd": "/w", "timestamp": "2026-01-20T08:00:00.000Z"});
    if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
        o.extend(e);
    }
    v.to_string()
}

fn typed(uuid: &str, parent: Option<&str>, text: &str) -> String {
    line(
        "user",
        uuid,
        parent,
        json!({"message": {"role": "user", "content": text}}),
    )
}

fn answer(uuid: &str, parent: &str, text: &str) -> String {
    line(
        "assistant",
        uuid,
        Some(parent),
        json!({"message": {"id": format!("msg_{uuid}"), "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 5}}}),
    )
}

fn read(lines: &[String]) -> Session {
    parse_session_text(&(lines.join("\n") + "\n")).unwrap()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().map(Message::joined_text).collect()
}

fn kinds(s: &Session) -> Vec<MessageKind> {
    s.info.iter().map(|i| i.kind).collect()
}

#[test]
fn the_fixture_replays_the_branch_that_continued_and_marks_the_other() {
    let file = fixture("-home-dev-blog/s-rewind.jsonl");
    let history = load_history(&file).unwrap();
    let replayed = texts(&history.messages);
    assert_eq!(history.messages.len(), 6, "{replayed:?}");
    assert!(
        !replayed.iter().any(|t| t.contains("CPU caches")),
        "{replayed:?}"
    );
    assert!(!replayed.iter().any(|t| t.contains("L1 and L2")));
    assert_eq!(
        history.active_request,
        "Add a section on cache invalidation"
    );

    let s = ctxlab::session::load_session(&file).unwrap();
    assert_eq!(s.messages.len(), 8);
    assert_eq!(
        kinds(&s)[2..4],
        [MessageKind::Abandoned, MessageKind::Abandoned]
    );
    assert!(
        kinds(&s)[4..]
            .iter()
            .all(|k| *k == MessageKind::Conversation)
    );
    // What the model saw when the session ended: the continued branch only.
    let seen = texts(&s.model_view(s.messages.len()));
    assert!(!seen.iter().any(|t| t.contains("CPU caches")), "{seen:?}");
    // Inside the abandoned branch, the model saw that branch.
    let then = texts(&s.model_view(4));
    assert!(then.iter().any(|t| t.contains("CPU caches")), "{then:?}");

    let v = json_out(ctxlab().args(["inspect", "--json"]).arg(&file));
    assert_eq!(v["rewinds"], 1);
    assert_eq!(v["abandoned_messages"], 2);
    let out = ctxlab().arg("inspect").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("rewinds: 1 (2 messages on an abandoned branch, left out of a replay)\n"),
        "{text}"
    );
}

#[test]
fn a_rewind_to_the_first_message_abandons_everything_before_it() {
    let s = read(&[
        typed("u1", None, "first try"),
        answer("a1", "u1", "answer one"),
        typed("u2", None, "second try"),
        answer("a2", "u2", "answer two"),
    ]);
    assert_eq!(
        kinds(&s),
        [
            MessageKind::Abandoned,
            MessageKind::Abandoned,
            MessageKind::Conversation,
            MessageKind::Conversation
        ]
    );
    assert_eq!(
        texts(&s.replay_messages()),
        ["second try", "answer two"].map(String::from)
    );
}

#[test]
fn a_rewind_through_a_system_line_finds_the_message_it_hangs_after() {
    // Claude Code chains its bookkeeping lines too: the rewound message's parent is the
    // system line written after the first answer.
    let s = read(&[
        typed("u1", None, "start"),
        answer("a1", "u1", "one"),
        line(
            "system",
            "d1",
            Some("a1"),
            json!({"subtype": "turn_duration", "durationMs": 5}),
        ),
        typed("u2", Some("d1"), "go on"),
        answer("a2", "u2", "two"),
        typed("u3", Some("d1"), "go elsewhere"),
        answer("a3", "u3", "three"),
    ]);
    assert_eq!(
        texts(&s.replay_messages()),
        ["start", "one", "go elsewhere", "three"].map(String::from)
    );
    assert_eq!(s.messages.len(), 6);
}

#[test]
fn a_file_without_a_chain_or_with_a_straight_one_has_no_rewind() {
    // Every parent null (as a script writes them): the file records no chain, so
    // nothing is rewound.
    let unchained = read(&[
        typed("u1", None, "a"),
        line(
            "assistant",
            "a1",
            None,
            json!({"message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "b"}]}}),
        ),
        typed("u2", None, "c"),
    ]);
    assert!(
        kinds(&unchained)
            .iter()
            .all(|k| *k == MessageKind::Conversation)
    );
    // A straight chain: nothing is rewound either.
    let straight = read(&[
        typed("u1", None, "a"),
        answer("a1", "u1", "b"),
        typed("u2", Some("a1"), "c"),
        answer("a2", "u2", "d"),
    ]);
    assert_eq!(straight.replay_messages().len(), 4);
    // A message hung on the tool use line after its result came in goes back past no
    // answer: nothing is abandoned.
    let queued = read(&[
        typed("u1", None, "run it"),
        line(
            "assistant",
            "a1",
            Some("u1"),
            json!({"message": {"id": "m1", "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}}),
        ),
        line(
            "user",
            "r1",
            Some("a1"),
            json!({"message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}),
        ),
        typed("u2", Some("a1"), "and then"),
    ]);
    assert_eq!(queued.replay_messages().len(), 4);
    assert_eq!(queued.meta.rewinds, 0);
    // The repo's other Claude Code fixtures have no rewind.
    for name in [
        "claude_code.jsonl",
        "claude_code_summary_only.jsonl",
        "claude_project/s-main.jsonl",
    ] {
        let s = ctxlab::session::load_session(&fixture(name)).unwrap();
        assert!(
            !s.info.iter().any(|i| i.kind == MessageKind::Abandoned),
            "{name}"
        );
    }
}
