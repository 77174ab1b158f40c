//! What a capture's follower holds (issue 39, item 5): a window of the conversation, not
//! every message of it (a 220 MB capture took `watch` to 147 MB), and forgetting what it
//! reported changes no item it reports.

use serde_json::json;

use super::*;

/// A capture of `calls` calls of one thread that grows by two messages a call and starts
/// again from a summary every 40 messages, with a micro compaction (a result cleared in
/// place) now and then.
fn capture_lines(calls: u64) -> Vec<String> {
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
        if n % 7 == 0 && messages.len() > 3 {
            // The agent cleared an older result in place.
            messages[2]["content"][0]["content"] = json!("[cleared]");
        }
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("step {n}")},
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("out {n}")}]}));
        if messages.len() > 40 {
            messages = vec![json!({"role": "user", "content": format!("summary of {n}")})];
        }
    }
    lines
}

fn follow(lines: &[String], keep_all: bool) -> (Vec<LiveItem>, usize) {
    let mut live = LiveSession::new();
    live.keep_all = keep_all;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        live.push_line(i + 1, l, &mut out);
    }
    (out, live.held_items())
}

#[test]
fn a_capture_follower_holds_a_window_and_reports_what_a_whole_follower_reports() {
    let short = capture_lines(1_500);
    let long = capture_lines(3_000);
    let (kept, all) = follow(&long, true);
    let (forgot, held_long) = follow(&long, false);
    let (_, held_short) = follow(&short, false);
    assert_eq!(kept, forgot);
    let count = |f: fn(&LiveItem) -> bool| kept.iter().filter(|i| f(i)).count();
    assert_eq!(count(|i| matches!(i, LiveItem::Call(_))), 3_000);
    assert!(count(|i| matches!(i, LiveItem::Compaction { .. })) >= 100);
    assert!(
        count(|i| matches!(i, LiveItem::Compaction { compaction, .. }
        if compaction.kind == crate::session::model::CompactionKind::Micro))
            > 0
    );
    // Messages and their origins behind the last reported, forgotten a batch at a time,
    // and calls the same: bounded whatever the length of the capture.
    let bound = 2 * (64 + 256) + 16 + 256 + 32;
    assert!(
        held_short <= bound && held_long <= bound,
        "{held_short} items held after 1500 calls, {held_long} after 3000"
    );
    assert!(all > 4 * bound, "{all}: there was something to forget");
}
