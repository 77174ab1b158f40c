//! Captures written for the tests of the readers: one thread of calls, as `ctxlab proxy`
//! writes them.

use serde_json::json;

/// The lines of a capture of `calls` calls of one thread that grows by two messages a call
/// (an answer with a tool call, its result) and starts again from a summary once it holds
/// more than `restart_over` messages; every `clear_every` calls (0: never) the agent clears
/// an older result in place (a micro compaction).
pub(crate) fn thread_capture(calls: u64, restart_over: usize, clear_every: u64) -> Vec<String> {
    let mut lines = vec![
        json!({"type": "header", "format": "ctxlab-capture", "version": 1,
        "ctxlab": "0", "started": "2026-12-01T00:00:00Z", "listen": "127.0.0.1:1"})
        .to_string(),
    ];
    let mut messages = vec![json!({"role": "user", "content": "fix it"})];
    for n in 1..=calls {
        let id = format!("t{n}");
        lines.push(
            json!({"type": "exchange", "n": n, "started": "2026-12-01T00:00:01.000Z",
                "method": "POST", "path": "/v1/messages", "api": "anthropic_messages",
                "upstream": "u",
                "request": {"headers": [], "bytes": 1, "sha256": "0",
                    "body": {"model": "m", "tools": [{"name": "Bash", "input_schema": {}}],
                        "messages": messages}},
                "response": {"status": 200, "text": format!("step {n}"),
                    "tool_calls": [{"id": id, "name": "Bash", "input": {"command": "ls"}}],
                    "usage": {"input_tokens": 100 * n, "output_tokens": 1}},
                "timing": {}})
            .to_string(),
        );
        if clear_every > 0 && n % clear_every == 0 && messages.len() > 3 {
            messages[2]["content"][0]["content"] = json!("[cleared]");
        }
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("step {n}")},
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("out {n} ").repeat(8)}]}));
        if messages.len() > restart_over {
            messages = vec![json!({"role": "user", "content": format!("summary of {n}")})];
        }
    }
    lines
}
