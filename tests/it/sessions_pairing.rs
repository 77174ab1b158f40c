//! Codex rollouts where something comes between a tool call and its output (a developer
//! message, a user message, the next call's reasoning, several calls in flight): each
//! output still answers its call in the message right after it, and what came between
//! follows the results (docs/pipeline.md, "Reading sessions").

use ctxlab::message::{Message, block_tool_id, tool_pairing_error};
use ctxlab::session::{MessageKind, Session, parse_session_text};
use serde_json::{Value, json};

use crate::common::files::session_fixture as fixture;

/// A rollout line in the envelope layout.
fn line(t: u32, kind: &str, payload: Value) -> String {
    json!({"timestamp": format!("2026-02-03T10:00:{t:02}.000Z"), "type": kind, "payload": payload})
        .to_string()
}

fn item(t: u32, payload: Value) -> String {
    line(t, "response_item", payload)
}

fn call(t: u32, id: &str) -> String {
    item(
        t,
        json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": id}),
    )
}

fn output(t: u32, id: &str) -> String {
    item(
        t,
        json!({"type": "function_call_output", "call_id": id, "output": format!("out {id}")}),
    )
}

fn message(t: u32, role: &str, text: &str) -> String {
    let part = if role == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    item(
        t,
        json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]}),
    )
}

fn token_count(t: u32, total: u64) -> String {
    let usage = json!({"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": 110});
    let totals = json!({"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": total});
    line(
        t,
        "event_msg",
        json!({"type": "token_count", "info": {"total_token_usage": totals, "last_token_usage": usage}}),
    )
}

fn rollout(lines: &[String]) -> Session {
    let mut text = line(
        0,
        "session_meta",
        json!({"id": "s", "timestamp": "2026-02-03T10:00:00.000Z", "cwd": "/w", "cli_version": "0.104.0"}),
    );
    text.push('\n');
    text.push_str(&message(1, "user", "go"));
    text.push('\n');
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    parse_session_text(&text).unwrap()
}

/// Each message as `role:what`, what being the tool ids of its uses or results, or its text.
fn shape(s: &Session) -> Vec<String> {
    s.messages
        .iter()
        .map(|m: &Message| {
            let ids: Vec<&str> = m
                .tool_uses()
                .chain(m.tool_results())
                .filter_map(block_tool_id)
                .collect();
            let what = if ids.is_empty() {
                text_of(m).chars().take(12).collect::<String>()
            } else {
                ids.join(",")
            };
            format!("{}:{what}", m.role())
        })
        .collect()
}

/// A message's text, from string content or its text blocks.
fn text_of(m: &Message) -> String {
    match m.text() {
        Some(t) => t.to_string(),
        None => m
            .blocks()
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
    }
}

fn assert_paired(s: &Session) {
    assert!(
        s.warnings.is_empty(),
        "no result kept as an orphan: {:?}",
        s.warnings
    );
    assert_eq!(tool_pairing_error(&s.replay_messages()), None);
}

#[test]
fn a_developer_message_between_a_call_and_its_output_follows_the_result() {
    let s = rollout(&[
        call(2, "a"),
        token_count(3, 100),
        message(4, "developer", "<approval>ok</approval>"),
        output(5, "a"),
        message(6, "assistant", "done"),
    ]);
    assert_paired(&s);
    assert_eq!(
        shape(&s),
        [
            "user:go",
            "assistant:a",
            "user:a",
            "developer:<approval>ok",
            "assistant:done"
        ]
    );
    assert_eq!(s.info[3].kind, MessageKind::Injected);
    assert_eq!(s.tool_pairs(), 1);
}

#[test]
fn a_user_message_between_a_call_and_its_output_follows_the_result() {
    let s = rollout(&[
        call(2, "a"),
        token_count(3, 100),
        message(4, "user", "also this"),
        output(5, "a"),
        message(6, "assistant", "done"),
    ]);
    assert_paired(&s);
    assert_eq!(
        shape(&s),
        [
            "user:go",
            "assistant:a",
            "user:a",
            "user:also this",
            "assistant:done"
        ]
    );
    assert_eq!(s.info[3].kind, MessageKind::Conversation);
}

#[test]
fn a_reasoning_item_of_the_next_call_before_the_output_opens_that_call_after_the_result() {
    let s = rollout(&[
        call(2, "a"),
        token_count(3, 100),
        item(
            4,
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "next step"}], "encrypted_content": "gAAA"}),
        ),
        output(5, "a"),
        message(6, "assistant", "done"),
        token_count(7, 200),
    ]);
    assert_paired(&s);
    assert_eq!(shape(&s).len(), 4, "{:?}", shape(&s));
    assert_eq!(&shape(&s)[..3], ["user:go", "assistant:a", "user:a"]);
    // The reasoning and the answer are one call, after the result.
    let last = &s.messages[3];
    assert_eq!(last.role(), "assistant");
    assert_eq!(last.blocks().len(), 2);
    assert!(text_of(last).contains("done"));
    assert_eq!(s.tool_pairs(), 1);
}

#[test]
fn a_reasoning_item_of_the_same_call_before_the_output_stays_in_that_call() {
    let s = rollout(&[
        call(2, "a"),
        item(
            3,
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "same call"}], "encrypted_content": "gAAA"}),
        ),
        token_count(4, 100),
        output(5, "a"),
    ]);
    assert_paired(&s);
    assert_eq!(shape(&s), ["user:go", "assistant:a", "user:a"]);
    assert_eq!(s.messages[1].blocks().len(), 2);
}

#[test]
fn several_calls_in_flight_with_messages_between_their_outputs_keep_one_results_message() {
    let s = rollout(&[
        call(2, "d"),
        call(2, "e"),
        token_count(3, 100),
        message(4, "developer", "first note"),
        output(5, "e"),
        message(6, "developer", "second note"),
        output(7, "d"),
        message(8, "assistant", "done"),
    ]);
    assert_paired(&s);
    assert_eq!(
        shape(&s),
        [
            "user:go",
            "assistant:d,e",
            "user:e,d",
            "developer:first note",
            "developer:second note",
            "assistant:done"
        ]
    );
    assert_eq!(s.tool_pairs(), 2);
}

#[test]
fn a_message_after_the_last_output_is_not_held() {
    // Everything answered: the developer message closes the call as before.
    let s = rollout(&[
        call(2, "a"),
        output(3, "a"),
        message(4, "developer", "after"),
        message(5, "assistant", "done"),
    ]);
    assert_paired(&s);
    assert_eq!(
        shape(&s),
        [
            "user:go",
            "assistant:a",
            "user:a",
            "developer:after",
            "assistant:done"
        ]
    );
}

#[test]
fn the_fixture_with_messages_between_calls_and_outputs_pairs_every_call() {
    let text = std::fs::read_to_string(fixture("codex_between.jsonl")).unwrap();
    let s = parse_session_text(&text).unwrap();
    assert_paired(&s);
    assert_eq!(s.lines, 24);
    assert_eq!(s.messages.len(), 14);
    assert_eq!(
        s.messages
            .iter()
            .filter(|m| m.role() == "assistant")
            .count(),
        5
    );
    assert_eq!(s.calls.len(), 5);
    assert_eq!(s.tool_pairs(), 5);
    assert_eq!(s.peak_context_tokens(), Some(5200));
    let injected = s
        .info
        .iter()
        .filter(|i| i.kind == MessageKind::Injected)
        .count();
    assert_eq!(injected, 3);
}
