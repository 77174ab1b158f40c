//! The thread rule of the capture fold, line by line.

use serde_json::{Value, json};

use super::*;

fn exchange(n: u64, tools: &[&str], messages: Value) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t, "input_schema": {}}))
        .collect();
    json!({"type": "exchange", "n": n, "started": "2026-12-01T10:00:00.000Z",
        "method": "POST", "path": "/v1/messages", "api": "anthropic_messages",
        "upstream": "https://api.anthropic.com",
        "request": {"headers": [], "bytes": 1, "sha256": "00",
            "body": {"model": "m", "tools": tools, "messages": messages}},
        "response": {"status": 200, "bytes": 1, "text": "ok",
            "usage": {"input_tokens": n * 100, "output_tokens": 1}},
        "timing": {}})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn asst(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

fn fold(lines: &[Value]) -> CaptureFold {
    let mut f = CaptureFold::new();
    for (k, l) in lines.iter().enumerate() {
        f.push(k + 1, Ok(l.clone()), false);
    }
    f
}

fn side(s: &Session) -> usize {
    s.skipped.get(SIDE_REQUEST).copied().unwrap_or(0)
}

#[test]
fn a_client_that_gains_tools_stays_the_thread_and_one_with_fewer_is_a_side_request() {
    let f = fold(&[
        exchange(1, &["Read"], json!([user("a")])),
        exchange(
            2,
            &["Read", "mcp_x"],
            json!([user("a"), asst("b"), user("c")]),
        ),
        // A subagent: fewer tools.
        exchange(3, &["Read"], json!([user("sub")])),
        exchange(
            4,
            &["Read", "mcp_x"],
            json!([user("a"), asst("b"), user("c"), asst("d"), user("e")]),
        ),
    ]);
    let s = f.session();
    assert_eq!(s.calls.len(), 3);
    assert_eq!(side(s), 1);
    assert!(s.compactions.is_empty());
}

#[test]
fn tool_less_calls_wait_until_a_call_says_what_they_were() {
    // A quota probe, then a thread with tools: the probe was a side request.
    let mut f = fold(&[exchange(1, &[], json!([user("quota")]))]);
    assert_eq!(f.held(), 1);
    assert!(f.session().calls.is_empty());
    f.push(2, Ok(exchange(2, &["Read"], json!([user("a")]))), false);
    assert_eq!(f.held(), 0);
    assert_eq!((f.session().calls.len(), side(f.session())), (1, 1));

    // A client without tools: its second call extends the first, so both are the thread;
    // the probe it does not extend is a side request.
    let f = fold(&[
        exchange(1, &[], json!([user("quota")])),
        exchange(2, &[], json!([user("a")])),
        exchange(3, &[], json!([user("a"), asst("b"), user("c")])),
    ]);
    let s = f.session();
    assert_eq!(s.calls.iter().map(|c| c.line).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(side(s), 1);

    // A capture that ends while a call still waits takes it as the thread.
    let s = fold(&[exchange(1, &[], json!([user("hi")]))]).finish();
    assert_eq!(s.calls.len(), 1);
    assert_eq!(
        s.messages.len(),
        2,
        "the question and the answer from the response"
    );
}

/// Claude Code drops a reminder message between two calls: the conversation goes on (no
/// compaction, no message twice), and a result cleared beside it is still the agent's micro
/// compaction with the new messages appended once.
#[test]
fn a_dropped_reminder_is_no_compaction_and_repeats_no_message() {
    let reminder = user("<system-reminder>the todo list is empty</system-reminder>");
    let result = |text: &str| {
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": text}]})
    };
    let call = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]});
    let f = fold(&[
        exchange(1, &["Read"], json!([user("a"), reminder.clone()])),
        exchange(
            2,
            &["Read"],
            json!([user("a"), reminder, call.clone(), result("long output")]),
        ),
        // The reminder is gone and nothing else changed: two new messages follow.
        exchange(
            3,
            &["Read"],
            json!([
                user("a"),
                call.clone(),
                result("long output"),
                asst("b"),
                user("c")
            ]),
        ),
        // The result is cleared and the answer appended.
        exchange(
            4,
            &["Read"],
            json!([
                user("a"),
                call,
                result("[cleared]"),
                asst("b"),
                user("c"),
                asst("d"),
                user("e")
            ]),
        ),
    ]);
    let s = f.session();
    assert_eq!(s.calls.len(), 4);
    assert_eq!(s.compactions.len(), 1, "{:?}", s.compactions);
    assert_eq!(s.compactions[0].kind, CompactionKind::Micro);
    assert_eq!(s.compactions[0].cleared_tool_ids, vec!["t1".to_string()]);
    let texts: Vec<String> = s.messages.iter().map(|m| m.joined_text()).collect();
    for once in ["a", "b", "c", "d", "e"] {
        assert_eq!(
            texts.iter().filter(|t| t.as_str() == once).count(),
            1,
            "{once} once in {texts:?}"
        );
    }
}
