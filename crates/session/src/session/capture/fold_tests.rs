//! The thread rule of the capture fold, line by line.

use serde_json::{Value, json};

use super::*;
use crate::message::Role;
use crate::session::model::TokenSource;

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

/// One tool-less, one-message request from a client of its own (`user-agent`, model).
fn lone_request(n: u64, client: &str, model: &str, text: &str) -> Value {
    let mut e = exchange(n, &[], json!([user(text)]));
    e["request"]["headers"] = json!([{"name": "user-agent", "value": client}]);
    e["request"]["body"]["model"] = json!(model);
    e["response"]["model"] = json!(model);
    e
}

/// Three clients each send one unrelated request through the same proxy: three
/// conversations, never one thread that "compacted" twice.
#[test]
fn unrelated_one_message_requests_are_separate_conversations_not_compactions() {
    let s = fold(&[
        lone_request(1, "curl/8", "claude-haiku-4-5", "what is 2+2"),
        lone_request(2, "python-httpx/0.27", "gpt-5.1", "name a colour"),
        lone_request(3, "node", "claude-sonnet-4-6", "say hi"),
    ])
    .finish();
    assert!(s.compactions.is_empty(), "{:?}", s.compactions);
    assert_eq!(s.calls.len(), 1);
    assert_eq!(
        s.skipped.get(OTHER_CONVERSATION),
        Some(&2),
        "{:?}",
        s.skipped
    );
    // The thread's messages are its question and its answer, nothing of the others.
    assert_eq!(s.messages.len(), 2);
}

/// A 429 answered nothing: the client sends the same request again, which is the call.
#[test]
fn a_refused_request_is_listed_and_is_no_call() {
    let mut refused = exchange(2, &["Read"], json!([user("a"), asst("b"), user("c")]));
    refused["response"] = json!({"status": 429, "bytes": 80,
        "error": "rate_limit_error: slow down", "headers": [{"name": "retry-after", "value": "1"}]});
    let s = fold(&[
        exchange(1, &["Read"], json!([user("a")])),
        refused,
        exchange(3, &["Read"], json!([user("a"), asst("b"), user("c")])),
    ])
    .finish();
    assert_eq!(
        s.calls.iter().map(|c| c.line).collect::<Vec<_>>(),
        [1, 3],
        "the refused request is no call"
    );
    assert_eq!(s.skipped.get(REFUSED), Some(&1), "{:?}", s.skipped);
    assert!(s.compactions.is_empty());
}

/// Claude Code's summary request keeps its tools and puts its prompt into the last user
/// message: it is the compaction's request, not a call and not a second compaction; the
/// tokens after come from the next call's recorded usage.
#[test]
fn a_summary_request_with_tools_is_one_compaction_with_the_tokens_after_it() {
    let s = summary_request_then_call(None);
    assert_eq!(
        s.calls.iter().map(|c| c.line).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert_eq!(s.compactions.len(), 1, "{:?}", s.compactions);
    let c = &s.compactions[0];
    assert_eq!((c.kind, c.line), (CompactionKind::Full, 3));
    assert_eq!(c.tokens_before.map(|t| t.tokens), Some(200));
    assert_eq!(
        c.tokens_after.map(|t| (t.tokens, t.source)),
        Some((400, TokenSource::FirstCallAfter))
    );
    assert_eq!(s.skipped.get(COMPACTION_REQUEST), Some(&1));
    // The answer the summary request left out and the next request kept verbatim is one
    // message: one assistant message per call.
    let answers = s
        .messages
        .iter()
        .filter(|m| m.role_kind() == Role::Assistant)
        .count();
    assert_eq!(answers, s.calls.len());
}

/// The same request answered by the server's own compaction (the proxy records it as
/// `server_compaction`, as for Codex's `compaction_trigger` over the WebSocket): one
/// compaction, of kind "server".
#[test]
fn a_compaction_the_server_made_itself_is_of_kind_server() {
    let s = summary_request_then_call(Some(json!({"bytes": 420})));
    assert_eq!(s.compactions.len(), 1, "{:?}", s.compactions);
    assert_eq!(
        (s.compactions[0].kind, s.compactions[0].line),
        (CompactionKind::Server, 3)
    );
}

/// Two calls, the agent's summary request (answered by the server's compaction when
/// `server` is given), then the call after it.
fn summary_request_then_call(server: Option<Value>) -> Session {
    let prompt = json!({"role": "user", "content": [
        {"type": "text", "text": "c"},
        {"type": "text", "text": "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests."}]});
    let mut ask = exchange(3, &["Read"], json!([user("a"), asst("b"), prompt]));
    ask["response"]["text"] =
        json!("<analysis>x</analysis>\n<summary>The user asked for a.</summary>");
    if let Some(c) = server {
        ask["response"]["server_compaction"] = c;
    }
    fold(&[
        exchange(1, &["Read"], json!([user("a")])),
        exchange(2, &["Read"], json!([user("a"), asst("b"), user("c")])),
        ask,
        exchange(
            4,
            &["Read"],
            json!([
                user("This session is being continued. Summary:\nThe user asked for a."),
                asst("ok"),
                user("go on")
            ]),
        ),
    ])
    .finish()
}

/// Anthropic's server compaction: an answer holds the server's `compaction` block (the
/// proxy records `server_compaction`), and the next request starts from it instead of
/// the history. No compaction request came: the change is a compaction of kind "server".
#[test]
fn a_request_after_an_answer_the_server_compacted_shows_a_server_compaction() {
    let mut compacted = exchange(2, &["Read"], json!([user("a"), asst("b"), user("c")]));
    compacted["response"]["server_compaction"] =
        json!({"text": "The user asked for a.", "bytes": 21});
    let s = fold(&[
        exchange(1, &["Read"], json!([user("a")])),
        compacted,
        exchange(
            3,
            &["Read"],
            json!([user("The user asked for a."), asst("ok"), user("go on")]),
        ),
    ])
    .finish();
    assert_eq!(s.compactions.len(), 1, "{:?}", s.compactions);
    assert_eq!(s.compactions[0].kind, CompactionKind::Server);
}
