//! A `ctxlab proxy` capture is a session: read back with each model call's exact messages,
//! the agent's own compactions between calls found (results cleared in place, a summary
//! replacing the history), side requests left out, a cut last line skipped with a warning,
//! and taken by `sessions`, `inspect`, `replay`, `forgot` and `export`.

use std::path::Path;

use serde_json::{Value, json};

use ctxlab::session::{CompactionKind, SessionFormat, Tool, load_session};

use crate::common::cli::ctxlab;

fn exchange(n: u64, body: Value, text: &str, input_tokens: u64) -> Value {
    json!({"type": "exchange", "n": n, "started": format!("2026-12-01T10:00:0{n}.000Z"),
        "method": "POST", "path": "/v1/messages", "api": "anthropic_messages",
        "upstream": "https://api.anthropic.com",
        "request": {"headers": [{"name": "x-api-key"}], "bytes": 10, "sha256": "00", "body": body},
        "response": {"status": 200, "bytes": 5, "streamed": true, "events": 3, "model": "claude-test",
            "text": text, "usage": {"input_tokens": input_tokens, "output_tokens": 5}, "stop_reason": "end_turn"},
        "timing": {"headers_ms": 1.0, "first_byte_ms": 2.0, "last_byte_ms": 3.0}})
}

fn request(messages: Value) -> Value {
    json!({"model": "claude-test", "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [{"name": "read_file", "input_schema": {}}], "messages": messages})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn read_call(id: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "read_file", "input": {"path": "a.rs"}}]})
}

fn result(id: &str, content: &str, cached: bool) -> Value {
    let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
    if cached {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    json!({"role": "user", "content": [block]})
}

/// Four calls of one thread (the second clears a result in place, the fourth starts from a
/// summary), a side request with no tools between them, and a last line cut by a kill.
fn write_capture(path: &Path) {
    let long = "fn main() {}\n".repeat(50);
    let lines = [
        json!({"type": "header", "format": "ctxlab-capture", "version": 1, "ctxlab": "0.1.0",
            "started": "2026-12-01T10:00:00Z", "listen": "127.0.0.1:8765"}),
        exchange(1, request(json!([user("fix a.rs")])), "", 100),
        // The marker moved to the newest message: still the same conversation.
        exchange(
            2,
            request(json!([
                user("fix a.rs"),
                read_call("t1"),
                result("t1", &long, true)
            ])),
            "",
            900,
        ),
        exchange(
            3,
            json!({"model": "claude-haiku", "max_tokens": 1, "messages": [user("quota")]}),
            "",
            1,
        ),
        exchange(
            4,
            request(json!([
                user("fix a.rs"),
                read_call("t1"),
                result("t1", "[Old tool result content cleared]", false),
                read_call("t2"),
                result("t2", "ok", true)
            ])),
            "Summary: a.rs was read.",
            400,
        ),
        exchange(
            5,
            request(json!([
                user(
                    "This session is being continued from a previous conversation. Summary: a.rs was read."
                ),
                user("go on")
            ])),
            "Done.",
            150,
        ),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str(r#"{"type":"exchange","n":6,"started":"2026-12-01T10:00:09.000Z","method":"PO"#);
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_capture_reads_as_a_session_with_the_agents_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture-1-1.jsonl");
    write_capture(&path);
    let s = load_session(&path).unwrap();
    assert_eq!(s.format, SessionFormat::ProxyCapture);
    assert_eq!(s.tool(), Tool::Proxy);
    assert_eq!(
        s.calls.len(),
        4,
        "the side request is not a call of the thread"
    );
    assert_eq!(
        s.skipped
            .get("side request (other tools than the main thread's)"),
        Some(&1)
    );
    let torn: Vec<_> = s.warnings.iter().filter(|w| w.line == 7).collect();
    assert_eq!(torn.len(), 1, "{:?}", s.warnings);
    assert!(torn[0].message.contains("cut off"));
    assert_eq!(s.compactions.len(), 2);
    assert_eq!(s.compactions[0].kind, CompactionKind::Micro);
    assert_eq!(s.compactions[0].cleared_tool_ids, vec!["t1".to_string()]);
    assert_eq!(s.compactions[1].kind, CompactionKind::Full);
    let summary = s.compactions[1].summary_message.unwrap();
    assert!(
        s.messages[summary]
            .joined_text()
            .starts_with("This session is being continued")
    );
    // The model's last view: the summary, the request after it, and the last answer.
    let view = s.model_view(s.messages.len());
    assert_eq!(view.len(), 3);
    assert_eq!(view[2].joined_text(), "Done.");
    // What the thread's third call sent, its cleared result included.
    let at = s.compactions[1].at;
    assert_eq!(
        s.messages[at - 1].joined_text(),
        "Summary: a.rs was read.",
        "the summary call's answer"
    );
    let before = s.model_view(at - 1);
    assert_eq!(before.len(), 5);
    let cleared = before[2].tool_results().next().unwrap();
    assert_eq!(cleared["content"], "[Old tool result content cleared]");
    assert!(cleared.get("cache_control").is_none());
    assert_eq!(s.calls[3].usage.input_tokens, 150);
}

#[test]
fn sessions_inspect_replay_forgot_and_export_take_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let captures = dir.path().join("data").join("captures");
    std::fs::create_dir_all(&captures).unwrap();
    let path = captures.join("capture-1-1.jsonl");
    write_capture(&path);

    // Listed from the data dir's captures/ with the default roots.
    let out = ctxlab()
        .args(["sessions", "--json"])
        .env("CTXLAB_DATA_DIR", dir.path().join("data"))
        .env("HOME", dir.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = listed.to_string();
    assert!(text.contains("capture-1-1.jsonl"), "{text}");
    assert!(text.contains("\"proxy\""), "{text}");

    let out = ctxlab()
        .args(["inspect", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "proxy-capture");
    assert!(
        v["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("cut off")
    );
    assert_eq!(v["calls"], 4);

    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .arg("replay")
        .arg(&path)
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = ctxlab()
        .args(["forgot", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["compactions"].as_array().unwrap().len(), 2);

    let page = dir.path().join("page.html");
    let out = ctxlab()
        .arg("export")
        .arg(&path)
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&page).unwrap().len() > 0);
}
