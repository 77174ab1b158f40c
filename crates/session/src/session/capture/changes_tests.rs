use serde_json::{Value, json};

use super::*;
use crate::session::capture::format::ApiKind;
use crate::session::capture::request::exact_request;

fn anthropic(system: &str, tools: &[&str], messages: Value) -> ExactRequest {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t, "input_schema": {"type": "object"}}))
        .collect();
    let body = json!({"model": "claude-x", "system": system, "tools": tools, "messages": messages});
    exact_request(ApiKind::AnthropicMessages, &body).expect("a request")
}

fn call(id: &str, tool: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": tool, "input": {}}]})
}

fn result(id: &str, content: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

#[test]
fn appended_messages_only() {
    let a = anthropic("sys", &["bash"], json!([user("hi")]));
    let b = anthropic(
        "sys",
        &["bash"],
        json!([user("hi"), call("t1", "bash"), result("t1", "ok")]),
    );
    let c = request_changes(&a, &b);
    assert_eq!(c, vec![RequestChange::Appended { messages: 2 }]);
    assert_eq!(headline(&c), "appended 2");
}

#[test]
fn a_result_replaced_in_place_is_a_cleared_tool_result_with_its_tool() {
    let long = "x".repeat(500);
    let a = anthropic(
        "sys",
        &["bash"],
        json!([user("hi"), call("t1", "bash"), result("t1", &long)]),
    );
    let b = anthropic(
        "sys",
        &["bash"],
        json!([
            user("hi"),
            call("t1", "bash"),
            result("t1", "[Old tool result content cleared]"),
            user("next")
        ]),
    );
    let c = request_changes(&a, &b);
    assert_eq!(
        c,
        vec![
            RequestChange::ClearedToolResult {
                id: "t1".into(),
                tool: Some("bash".into()),
                message: 2,
                chars_before: 500,
                chars_after: 33,
            },
            RequestChange::Appended { messages: 1 },
        ]
    );
    assert_eq!(headline(&c), "cleared tool result");
    assert_eq!(
        edited_in_place(&a.messages, &b.messages).map(|e| e.cleared),
        Some(vec!["t1".to_string()])
    );
}

#[test]
fn history_replaced_by_a_new_first_message_is_a_summary() {
    let a = anthropic(
        "sys",
        &["bash"],
        json!([
            user("fix it"),
            call("t1", "bash"),
            result("t1", "out"),
            json!({"role": "assistant", "content": "done"})
        ]),
    );
    let b = anthropic(
        "sys",
        &["bash"],
        json!([
            user("This session is being continued. Summary: fixed it."),
            user("go on")
        ]),
    );
    let c = request_changes(&a, &b);
    assert_eq!(
        c,
        vec![
            RequestChange::SummaryReplacingHistory {
                removed: 4,
                kept_start: 0,
                summary_chars: 51,
            },
            RequestChange::Appended { messages: 1 },
        ]
    );
    assert_eq!(headline(&c), "summary replacing history");
    assert_eq!(edited_in_place(&a.messages, &b.messages), None);
}

#[test]
fn a_reminder_block_or_message_gone_is_a_dropped_system_reminder() {
    let reminder = "<system-reminder>The date is today.</system-reminder>";
    let a = anthropic(
        "sys",
        &[],
        json!([
            {"role": "user", "content": [{"type": "text", "text": reminder}, {"type": "text", "text": "hello"}]},
            {"role": "assistant", "content": "hi"},
            user(reminder),
            user("more")
        ]),
    );
    let b = anthropic(
        "sys",
        &[],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {"role": "assistant", "content": "hi"},
            user("more"),
            {"role": "assistant", "content": "ok"}
        ]),
    );
    let c = request_changes(&a, &b);
    assert_eq!(
        c,
        vec![
            RequestChange::DroppedSystemReminder {
                message: 0,
                chars: reminder.len(),
                whole_message: false,
            },
            RequestChange::DroppedSystemReminder {
                message: 2,
                chars: reminder.len(),
                whole_message: true,
            },
            RequestChange::Appended { messages: 1 },
        ]
    );
    assert_eq!(headline(&c), "dropped system reminder");
    // An edit in place but no micro compaction: no result was cleared. The reminder
    // message that went shifts the new answer to index 3 of the later request.
    assert_eq!(
        edited_in_place(&a.messages, &b.messages),
        Some(InPlace {
            cleared: Vec::new(),
            appended_from: 3
        })
    );
}

#[test]
fn a_reminder_span_taken_out_of_a_text_is_dropped_too() {
    let a = anthropic(
        "s",
        &[],
        json!([user("<system-reminder>x</system-reminder>\nfix a.rs")]),
    );
    let b = anthropic("s", &[], json!([user("fix a.rs")]));
    let c = request_changes(&a, &b);
    assert!(matches!(
        c.as_slice(),
        [RequestChange::DroppedSystemReminder {
            message: 0,
            whole_message: false,
            ..
        }]
    ));
}

#[test]
fn system_prompt_and_tools_are_compared_apart() {
    let a = anthropic("short", &["bash", "read"], json!([user("hi")]));
    let b = anthropic("a longer one", &["bash", "edit"], json!([user("hi")]));
    let c = request_changes(&a, &b);
    assert_eq!(
        c,
        vec![
            RequestChange::SystemPromptChanged {
                chars_before: 5,
                chars_after: 12,
            },
            RequestChange::ToolsChanged {
                added: vec!["edit".into()],
                removed: vec!["read".into()],
                changed: vec![],
            },
        ]
    );
    assert_eq!(headline(&c), "system prompt changed");
    assert!(c[1].describe().contains("added edit; removed read"));
}

#[test]
fn chat_completions_cleared_result_and_summary() {
    let chat = |messages: Value| {
        let body = json!({"model": "gpt-x", "messages": messages,
            "tools": [{"type": "function", "function": {"name": "shell", "parameters": {}}}]});
        exact_request(ApiKind::OpenaiChat, &body).expect("a request")
    };
    let asst = json!({"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]});
    let a = chat(json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list"},
        asst,
        {"role": "tool", "tool_call_id": "c1", "content": "a\nb\nc\nd"}
    ]));
    let b = chat(json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list"},
        asst,
        {"role": "tool", "tool_call_id": "c1", "content": "[cleared]"},
        {"role": "assistant", "content": "done"}
    ]));
    let c = request_changes(&a, &b);
    assert_eq!(
        c[0],
        RequestChange::ClearedToolResult {
            id: "c1".into(),
            tool: Some("shell".into()),
            message: 2,
            chars_before: 7,
            chars_after: 9,
        }
    );
    let s = chat(json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "Summary so far: listed files."}
    ]));
    let c = request_changes(&b, &s);
    assert!(matches!(
        c.as_slice(),
        [RequestChange::SummaryReplacingHistory {
            removed: 4,
            kept_start: 0,
            ..
        }]
    ));
}

#[test]
fn responses_input_cleared_output_and_instructions_changed() {
    let resp = |instructions: &str, output: &str| {
        let body = json!({"model": "gpt-x", "instructions": instructions, "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run ls"}]},
            {"type": "function_call", "call_id": "f1", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "f1", "output": output}
        ]});
        exact_request(ApiKind::OpenaiResponses, &body).expect("a request")
    };
    let a = resp("v1", "file1\nfile2\nfile3");
    let b = resp("v2 longer", "");
    let c = request_changes(&a, &b);
    assert_eq!(
        c[0],
        RequestChange::SystemPromptChanged {
            chars_before: 2,
            chars_after: 9
        }
    );
    assert!(
        matches!(&c[1], RequestChange::ClearedToolResult { id, tool, chars_after: 0, .. }
            if id == "f1" && tool.as_deref() == Some("shell")),
        "{c:?}"
    );
}

#[test]
fn a_block_added_to_an_earlier_message_is_not_in_place() {
    let a = anthropic(
        "s",
        &[],
        json!([{"role": "user", "content": [{"type": "text", "text": "a"}]}]),
    );
    let b = anthropic(
        "s",
        &[],
        json!([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]),
    );
    let c = request_changes(&a, &b);
    assert!(matches!(
        c[0],
        RequestChange::SummaryReplacingHistory { .. }
    ));
}
