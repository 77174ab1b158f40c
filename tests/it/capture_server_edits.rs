//! What the model saw after the server's own edits (issue 35, item 3): a scripted Anthropic
//! upstream written here applies `clear_tool_uses_20250919` as the API documents it
//! (clears all but the last tool result once the request passes its trigger, and says so in
//! `context_management.applied_edits` on `message_delta`), then answers a request asking
//! for `compact_20260112` with a `compaction` block and `stop_reason: "compaction"`.
//! Through the proxy, `ctxlab inspect CAPTURE --requests` (text and `--json`) shows per
//! request the edits asked for, those applied with what they cleared, the compaction, and
//! what the model saw beside the body sent.

use serde_json::{Value, json};

use crate::common::cli::homeless;
use crate::proxy_upstream::{Received, Reply, Upstream, capture_lines, client, sse, start_proxy};

/// Characters per token the scripted server counts with.
const CHARS_PER_TOKEN: usize = 4;

fn tool_results(body: &Value) -> Vec<usize> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or("").len())
        .collect()
}

/// The server: clears every tool result but the last when the body passes 1,000 tokens and
/// the request asks for it; compacts when the request asks for `compact_20260112`.
fn answer(r: &Received) -> Reply {
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    let edits: Vec<String> = body["context_management"]["edits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    let sent = r.body.len() / CHARS_PER_TOKEN;
    let mut applied = Vec::new();
    let mut cleared_tokens = 0;
    if edits.iter().any(|e| e == "clear_tool_uses_20250919") && sent > 1_000 {
        let results = tool_results(&body);
        let cleared = &results[..results.len().saturating_sub(1)];
        cleared_tokens = cleared.iter().sum::<usize>() / CHARS_PER_TOKEN;
        applied.push(json!({"type": "clear_tool_uses_20250919",
            "cleared_tool_uses": cleared.len(), "cleared_input_tokens": cleared_tokens}));
    }
    let compact = edits.iter().any(|e| e == "compact_20260112");
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"model": "claude-test",
            "usage": {"input_tokens": sent - cleared_tokens, "output_tokens": 1}}}),
    )];
    if compact {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "compaction", "content": "Summary: three files read."}}),
        ));
    } else {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": "ok"}}),
        ));
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    let mut delta = json!({"type": "message_delta",
        "delta": {"stop_reason": if compact { "compaction" } else { "end_turn" }},
        "usage": {"output_tokens": 5}});
    if !applied.is_empty() {
        delta["context_management"] = json!({"applied_edits": applied});
    }
    events.push(("message_delta", delta));
    events.push(("message_stop", json!({"type": "message_stop"})));
    Reply::streamed(vec![sse(&events)], None)
}

fn request(results: usize, edits: Value) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "read the files"})];
    for i in 0..results {
        let id = format!("t{i}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "read_file", "input": {"path": format!("f{i}.rs")}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("{i}: {}", "x".repeat(2_000))}]}));
    }
    json!({"model": "claude-test", "max_tokens": 100, "stream": true,
        "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
        "context_management": {"edits": edits}, "messages": messages})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_requests_view_shows_the_edits_the_server_applied_and_its_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let upstream = Upstream::start(answer).await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let clear = json!([{"type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 1000}}]);
    let compact = json!([{"type": "compact_20260112"}]);
    for body in [
        request(1, clear.clone()),
        request(3, clear),
        request(3, compact),
    ] {
        let resp = client()
            .post(format!("{proxy}/v1/messages"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert!(resp.bytes().await.is_ok());
    }
    capture_lines(&capture, 3).await;

    let out = homeless()
        .args(["inspect", "--requests", "--json"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // 1: asked, under the trigger: nothing applied.
    assert_eq!(
        rows[0]["server"]["asked"][0]["kind"],
        "clear_tool_uses_20250919"
    );
    assert_eq!(rows[0]["server"]["asked"][0]["trigger_tokens"], 1000);
    assert!(
        rows[0]["server"]
            .get("applied")
            .is_none_or(|a| a.as_array().unwrap().is_empty())
    );
    // 2: two of three results cleared, with the tokens the server says.
    let applied = &rows[1]["server"]["applied"][0];
    assert_eq!(applied["cleared_tool_uses"], 2);
    let cleared = applied["cleared_input_tokens"].as_u64().unwrap();
    assert_eq!(cleared, (2 * "0: ".len() + 2 * 2_000) as u64 / 4);
    assert!(
        rows[1]["label"]
            .as_str()
            .unwrap()
            .contains("server cleared 2 tool uses")
    );
    // 3: the server's compaction.
    assert_eq!(
        rows[2]["server"]["compaction_chars"],
        "Summary: three files read.".len()
    );
    assert!(
        rows[2]["label"]
            .as_str()
            .unwrap()
            .contains("server compacted")
    );

    let out = homeless()
        .args(["inspect", "--requests"])
        .arg(&capture)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("server edits asked for: clear_tool_uses_20250919 (at 1,000 tokens)"),
        "{text}"
    );
    assert!(
        text.contains(
            "applied by the server: clear_tool_uses_20250919: cleared 2 tool uses, 1,001 tokens"
        ),
        "{text}"
    );
    assert!(text.contains("what the model saw: ~"), "{text}");
    assert!(
        text.contains("after the server's edits: tool results ~"),
        "{text}"
    );
    assert!(text.contains(" less 1,001)"), "{text}");
    assert!(
        text.contains("the server compacted the context: a summary of 26 chars"),
        "{text}"
    );
}
