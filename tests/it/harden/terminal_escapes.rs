//! Issue 19 §1: no text from a session file, a file name, a model or a tool reaches the
//! terminal raw in a human mode. Every field `inspect`, `sessions`, `replay` and `run` print
//! is fed each hostile sequence (OSC 52 clipboard, OSC 0 title, clear screen, NUL, CR, DEL,
//! a C1 CSI, bidi override and isolate); stdout and stderr must hold no control byte but
//! newline and tab, and the hostile text must still be there, visibly escaped. JSON output
//! stays exact.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::scratch::Scratch;
use crate::common::stub_server::{after_tools, start, text_answer};

/// One of each kind of sequence the sanitizer must neutralise.
const HOSTILE: &str =
    "X\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\0\r\u{7f}\u{9b}2J\u{202e}\u{2066}Y";

/// What a terminal would act on: C0 but newline and tab, DEL, C1, bidi controls.
fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .filter(|&c| {
            matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

fn assert_clean(what: &str, out: &std::process::Output, must_show: &[&str]) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let bad = raw_controls(bytes);
        assert!(
            bad.is_empty(),
            "{what}: {name} holds raw {bad:?}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for tag in must_show {
        let shown = format!("{tag}X\\e]52;c;cHduZWQ=\\a\\e]0;pwned\\a\\e[2J");
        assert!(
            all.contains(&shown),
            "{what}: {tag} not shown escaped:\n{all}"
        );
    }
}

fn h(tag: &str) -> String {
    format!("{tag}{HOSTILE}")
}

/// `h` for a file name: everything but NUL, which no file name can hold.
fn h_name(tag: &str) -> String {
    h(tag).replace('\0', "")
}

/// A Claude Code session with every printed field hostile, and a subagent file.
fn write_hostile_session(dir: &Path) -> std::path::PathBuf {
    let project = dir.join(h_name("proj-"));
    std::fs::create_dir_all(&project).unwrap();
    let name = format!("{}.jsonl", h_name("file-"));
    let path = project.join(&name);
    let base = json!({"sessionId": h("sid-"), "version": h("ver-"), "cwd": h("cwd-"),
        "gitBranch": "main", "isSidechain": false});
    let line = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let lines = [
        json!({"type": "summary", "summary": h("title-"), "leafUuid": "a2"}).to_string(),
        line(
            json!({"type": "user", "uuid": "u1", "timestamp": "2025-10-01T10:00:00Z",
            "message": {"role": "user", "content": h("ask-")}}),
        ),
        line(
            json!({"type": "assistant", "uuid": "a1", "timestamp": "2025-10-01T10:00:01Z",
            "message": {"id": "m1", "role": "assistant", "model": h("model-"), "usage": usage,
                "content": [{"type": "tool_use", "id": h("tid-"), "name": h("tool-"), "input": {}}]}}),
        ),
        line(
            json!({"type": "user", "uuid": "r1", "timestamp": "2025-10-01T10:00:02Z",
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": h("tid-"), "content": h("out-")}]}}),
        ),
        line(
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "c1",
            "timestamp": "2025-10-01T10:00:03Z",
            "compactMetadata": {"trigger": h("trig-"), "preTokens": 100}}),
        ),
        line(
            json!({"type": "user", "uuid": "s1", "isCompactSummary": true,
            "timestamp": "2025-10-01T10:00:04Z",
            "message": {"role": "user", "content": h("sum-")}}),
        ),
        line(
            json!({"type": "assistant", "uuid": "a2", "timestamp": "2025-10-01T10:00:05Z",
            "message": {"id": "m2", "role": "assistant", "model": h("model-"), "usage": usage,
                "content": [{"type": "text", "text": h("said-")}]}}),
        ),
        line(json!({"type": h("kind-"), "uuid": "k1"})),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let side = project
        .join(name.trim_end_matches(".jsonl"))
        .join("subagents");
    std::fs::create_dir_all(&side).unwrap();
    let side_line = line(json!({"type": "user", "uuid": "x1", "agentId": h("agent-"),
        "isSidechain": true, "message": {"role": "user", "content": "hi"}}));
    std::fs::write(side.join("agent-1.jsonl"), side_line + "\n").unwrap();
    path
}

#[test]
fn inspect_sessions_and_replay_print_no_raw_control_from_a_session() {
    let s = Scratch::new();
    let file = write_hostile_session(s.path());
    let inspect = s.ctxlab().arg("inspect").arg(&file).output().unwrap();
    assert!(inspect.status.success(), "{inspect:?}");
    assert_clean(
        "inspect",
        &inspect,
        &[
            "sid-", "title-", "cwd-", "model-", "ver-", "trig-", "agent-", "kind-",
        ],
    );
    // JSON stays exact: the same text, escaped by JSON and given back whole.
    let json = s
        .ctxlab()
        .args(["inspect", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["session_id"], h("sid-"), "{v}");

    let listing = s.ctxlab().arg("sessions").arg(s.path()).output().unwrap();
    assert!(listing.status.success(), "{listing:?}");
    assert_clean("sessions", &listing, &["file-", "cwd-"]);

    let replay = s
        .ctxlab()
        .arg("replay")
        .arg(&file)
        .arg("--workspace")
        .arg(s.path().join("ws"))
        .output()
        .unwrap();
    assert_clean("replay", &replay, &[]);

    // An error message naming a hostile path.
    let missing = s
        .ctxlab()
        .arg("inspect")
        .arg(s.path().join(h_name("gone-")))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert_clean("an error", &missing, &["gone-"]);
}

/// An answer calling a tool whose name and id are hostile.
fn hostile_tool_answer() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "type": "message",
            "role": "assistant", "content": [], "model": "stub", "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": h("said-")}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use",
            "id": h("tid-"), "name": h("tool-"), "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

#[test]
fn run_prints_no_raw_control_from_the_model_or_a_tool() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let stub = start(Arc::new(|body: &Value| {
        if after_tools(body) {
            text_answer(&h("end-"))
        } else {
            hostile_tool_answer()
        }
    }));
    let out = s
        .ctxlab_anthropic(&stub.url, "sk-ant-stub")
        .args(["run", "--workspace"])
        .arg(s.ws())
        .arg("go")
        .output()
        .unwrap();
    assert_clean("run", &out, &["said-", "tool-", "end-"]);
}
