//! A capture's requests view from the command line: `ctxlab inspect CAPTURE --requests`
//! (text and `--json`) on a capture written here in the capture format (docs/capture.md),
//! where the agent clears a tool result, drops a system reminder and replaces its history
//! with a summary, with a side request between: each label at its request, the system
//! prompt and tool schemas in the breakdown, the usage beside the estimate, and every
//! strategy's request beside each main-thread request.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::cli::homeless;

const REMINDER: &str = "<system-reminder>Today is Monday.</system-reminder>";

fn exchange(n: u64, model: &str, body: Value, text: &str, input_tokens: u64) -> Value {
    json!({"type": "exchange", "n": n, "started": format!("2026-12-01T10:00:0{n}.000Z"),
        "method": "POST", "path": "/v1/messages", "api": "anthropic_messages",
        "upstream": "https://api.anthropic.com",
        "request": {"headers": [{"name": "x-api-key"}], "bytes": 10, "sha256": "00", "body": body},
        "response": {"status": 200, "bytes": 5, "streamed": true, "events": 3, "model": model,
            "text": text, "usage": {"input_tokens": input_tokens, "cache_read_tokens": 100, "output_tokens": 5},
            "stop_reason": "end_turn"},
        "timing": {"headers_ms": 1.0, "first_byte_ms": 2.0, "last_byte_ms": 3.0}})
}

fn main_request(messages: Vec<Value>) -> Value {
    json!({"model": "claude-test", "system": [{"type": "text", "text": "You are a coding agent."}],
        "tools": [{"name": "read_file", "input_schema": {"type": "object"}},
                  {"name": "bash", "input_schema": {"type": "object"}}],
        "messages": messages})
}

fn first(with_reminder: bool) -> Value {
    let mut blocks = vec![json!({"type": "text", "text": "fix a.rs"})];
    if with_reminder {
        blocks.insert(0, json!({"type": "text", "text": REMINDER}));
    }
    json!({"role": "user", "content": blocks})
}

fn call(id: &str, tool: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": tool, "input": {}}]})
}

fn result(id: &str, content: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

/// Six requests: 1 first, 2 appends a read, 3 a side request (a title, no tools), 4 clears
/// the read's result, 5 drops the reminder of the first message, 6 starts from a summary.
pub fn write_fixture(path: &Path) {
    let big = |c: &str| format!("{c}: {}\n", "x".repeat(70)).repeat(400);
    let (r1, r2, r3) = (big("a.rs"), big("make"), big("b.rs"));
    let m2 = vec![first(true), call("t1", "read_file"), result("t1", &r1)];
    let mut m4 = vec![
        first(true),
        call("t1", "read_file"),
        result("t1", "[Old tool result content cleared]"),
    ];
    m4.extend([call("t2", "bash"), result("t2", &r2)]);
    let mut m5 = m4.clone();
    m5[0] = first(false);
    m5.extend([call("t3", "read_file"), result("t3", &r3)]);
    let m6 = vec![
        json!({"role": "user", "content": "This session is being continued from a previous conversation. Summary: read a.rs and b.rs, ran make."}),
        call("t4", "bash"),
        result("t4", "ok"),
    ];
    let lines = [
        json!({"type": "header", "format": "ctxlab-capture", "version": 1, "ctxlab": "0.1.0",
            "started": "2026-12-01T10:00:00Z", "listen": "127.0.0.1:8765"}),
        exchange(
            1,
            "claude-test",
            main_request(vec![first(true)]),
            "Reading.",
            900,
        ),
        exchange(2, "claude-test", main_request(m2), "Building.", 9_000),
        exchange(
            3,
            "claude-haiku",
            json!({"model": "claude-haiku", "messages": [{"role": "user", "content": "title this"}]}),
            "Fix a.rs",
            20,
        ),
        exchange(4, "claude-test", main_request(m4), "Reading b.", 9_100),
        exchange(5, "claude-test", main_request(m5), "Compacting.", 17_000),
        exchange(6, "claude-test", main_request(m6), "Done.", 300),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn inspect(path: &Path, json: bool) -> String {
    let mut cmd = homeless();
    cmd.args(["inspect", "--requests"]).arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn inspect_requests_json_labels_each_change_at_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture-1-1.jsonl");
    write_fixture(&path);
    let v: Value = serde_json::from_str(&inspect(&path, true)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "first request",
            "appended 2",
            "side request",
            "cleared tool result",
            "dropped system reminder",
            "summary replacing history"
        ]
    );
    let cleared = &rows[3]["changes"][0];
    assert_eq!(cleared["kind"], "cleared_tool_result");
    assert_eq!(cleared["id"], "t1");
    assert_eq!(cleared["tool"], "read_file");
    assert_eq!(cleared["chars_before"], 400 * 77);
    assert_eq!(cleared["chars_after"], 33);
    let dropped = &rows[4]["changes"][0];
    assert_eq!(dropped["kind"], "dropped_system_reminder");
    assert_eq!(dropped["chars"], REMINDER.len());
    let summary = &rows[5]["changes"][0];
    assert_eq!(summary["kind"], "summary_replacing_history");
    assert_eq!(summary["removed"], 7);
    assert_eq!(summary["kept_start"], 0);

    // Exact: the system prompt and the tool schemas are categories, nothing is "not in the
    // file", and the response's usage sits beside the estimate.
    let b = &rows[1]["breakdown"];
    let cats: Vec<&str> = b["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["category"].as_str().unwrap())
        .collect();
    assert!(cats.contains(&"system_prompt"), "{cats:?}");
    assert!(cats.contains(&"tool_definitions"), "{cats:?}");
    assert!(!cats.contains(&"not_in_file"), "{cats:?}");
    assert_eq!(rows[1]["usage_tokens"], 9_100);
    assert_eq!(b["estimate"], true);

    // Every main-thread request has each strategy beside it; the side request none.
    for (k, r) in rows.iter().enumerate() {
        let n = r["strategies"].as_array().unwrap().len();
        assert_eq!(n, if k == 2 { 0 } else { 4 }, "row {k}: {r}");
    }
    let names: Vec<&str> = rows[4]["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["s08", "s08-latest", "s06", "guarded"]);
    // The agent sent the same history the strategies start from at its first request.
    assert_eq!(rows[0]["strategies"][0]["size"], rows[0]["size"]);
}

#[test]
fn inspect_requests_text_has_the_rows_and_each_detail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture-1-1.jsonl");
    write_fixture(&path);
    let text = inspect(&path, false);
    let row = |n: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{n} 10:00:0{n}")))
            .unwrap_or_else(|| panic!("no row {n}:\n{text}"))
            .to_string()
    };
    assert!(row("4").ends_with("cleared tool result"), "{}", row("4"));
    assert!(row("5").ends_with("dropped system reminder"));
    assert!(row("6").ends_with("summary replacing history"));
    assert!(row("3").ends_with("side request"));
    // Messages are numbered from 0, as everywhere: the read's result is the request's third.
    assert!(text.contains("cleared tool result: read_file t1 (message 2), 30,800 -> 33 chars"));
    assert!(
        text.contains("(anthropic_messages, claude-test): 1 message, "),
        "{text}"
    );
    assert!(text.contains("  system prompt"));
    assert!(text.contains("  tool definitions"));
    assert!(text.contains("recorded by the response"));
    assert!(text.contains("  guarded "), "{text}");
}

#[test]
fn inspect_requests_refuses_a_session_that_is_no_capture() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    let out = homeless()
        .args(["inspect", "--requests"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no ctxlab proxy capture"));
}

/// A client that gains a tool (an MCP server connected late) is still one thread: the view
/// takes the capture reader's thread, so its first request is no side request and the
/// second is diffed against it.
#[test]
fn a_client_that_gains_a_tool_is_one_thread_in_the_requests_view() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture-1-1.jsonl");
    let body = |tools: &[&str], messages: Vec<Value>| {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"name": t, "input_schema": {"type": "object"}}))
            .collect();
        json!({"model": "claude-test", "system": "s", "tools": tools, "messages": messages})
    };
    let lines = [
        exchange(
            1,
            "claude-test",
            body(&["read_file"], vec![first(false)]),
            "a",
            50,
        ),
        exchange(
            2,
            "claude-test",
            body(
                &["read_file", "mcp_x"],
                vec![
                    first(false),
                    json!({"role": "assistant", "content": "a"}),
                    json!({"role": "user", "content": "more"}),
                ],
            ),
            "b",
            60,
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let v: Value = serde_json::from_str(&inspect(&path, true)).unwrap();
    let labels: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["first request", "tool schemas changed"]);
}

/// Claude Code's `/compact` (a real run's capture, `capture_fidelity`): its summary request
/// is a row marked as the compaction request, not diffed as the thread's; a 429 before a
/// retry is a row marked refused.
#[test]
fn the_compaction_request_and_a_refused_request_are_marked_in_the_requests_view() {
    let rows = |path: &Path| -> Vec<(String, String)> {
        let v: Value = serde_json::from_str(&inspect(path, true)).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap().to_string(),
                    r["label"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let real = rows(&crate::capture_fidelity::fixture(
        "claude_code_compact.jsonl",
    ));
    assert_eq!(real.len(), 13);
    assert_eq!(
        real[8],
        ("compaction_request".into(), "compaction request".into())
    );
    assert!(real[9].1.contains("summary"), "{:?}", real[9]);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture-1-1.jsonl");
    let mut refused = exchange(2, "claude-test", main_request(vec![first(false)]), "", 0);
    refused["response"] = json!({"status": 429, "bytes": 60, "error": "rate_limit_error"});
    let lines = [
        exchange(1, "claude-test", main_request(vec![first(false)]), "a", 50),
        refused,
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    assert_eq!(
        rows(&path),
        [
            ("call".to_string(), "first request".to_string()),
            ("refused".to_string(), "refused (status 429)".to_string())
        ]
    );
}

/// Issue 39, item 8: `inspect --requests` read a whole non-capture before refusing it (15 s
/// on a million lines); its first lines say what it is. A sparse file far over the file
/// cap shows it: read whole, it was refused for its size, not for what it is.
#[test]
fn a_non_capture_is_refused_from_its_first_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let first = r#"{"type":"user","sessionId":"s1","uuid":"u1","cwd":"/p","timestamp":"2025-10-01T10:00:01Z","message":{"role":"user","content":"hi"}}"#;
    std::fs::write(&path, format!("{first}\n")).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(3 << 30).unwrap();
    drop(f);
    let e = ctxlab::capture_view::of_capture_file(&path).err().unwrap();
    assert!(
        matches!(e, ctxlab::capture_view::NotACapture::Format(_)),
        "{e}"
    );
    assert!(e.to_string().contains("claude-code"), "{e}");
}
