//! Where the context goes (docs/pipeline.md, "Where the context goes"): sessions of each
//! format with known content, broken down call by call; the categories hold what was
//! planted, sum to the call's size, and a recorded usage above the file's content shows
//! the difference as "not in the file".

use ctxlab::breakdown::CallBreakdown;
use ctxlab::breakdown::session::of_session;
use ctxlab::session::parse_session_text;
use serde_json::{Value, json};

use crate::common::cli::{homeless, json_out};

fn cc_user(uuid: &str, parent: Option<&str>, content: Value, extra: Value) -> String {
    let mut o = json!({"parentUuid": parent, "isSidechain": false, "type": "user",
        "sessionId": "s1", "cwd": "/w", "version": "2.0.14",
        "message": {"role": "user", "content": content},
        "uuid": uuid, "timestamp": "2025-10-01T10:00:00.000Z"});
    if let (Value::Object(o), Value::Object(e)) = (&mut o, extra) {
        o.extend(e);
    }
    o.to_string()
}

fn cc_assistant(uuid: &str, parent: &str, req: &str, content: Value, context: u64) -> String {
    json!({"parentUuid": parent, "isSidechain": false, "type": "assistant", "requestId": req,
        "sessionId": "s1", "cwd": "/w", "version": "2.0.14",
        "message": {"id": req, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": null,
            "usage": {"input_tokens": context, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 5}},
        "uuid": uuid, "timestamp": "2025-10-01T10:00:01.000Z"})
    .to_string()
}

/// Each call's usage is its content's characters / 4 plus 3,000 tokens the file does not
/// hold (the system prompt and tools Claude Code does not write).
fn claude_session() -> String {
    let boundary = json!({"parentUuid": null, "logicalParentUuid": "a2", "isSidechain": false,
        "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
        "sessionId": "s1", "cwd": "/w", "version": "2.0.14",
        "compactMetadata": {"trigger": "auto", "preTokens": 6305},
        "uuid": "b1", "timestamp": "2025-10-01T10:00:02.000Z"})
    .to_string();
    [
        cc_user("u1", None, json!("U".repeat(4000)), json!({})),
        cc_assistant(
            "a1",
            "u1",
            "req_1",
            json!([
                {"type": "thinking", "thinking": "T".repeat(400), "signature": "c2ln"},
                {"type": "text", "text": "A".repeat(800)},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
            ]),
            4000,
        ),
        cc_user(
            "r1",
            Some("a1"),
            json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "R".repeat(8000)}]),
            json!({}),
        ),
        cc_assistant(
            "a2",
            "r1",
            "req_2",
            json!([{"type": "text", "text": "B".repeat(400)}]),
            6305,
        ),
        boundary,
        cc_user(
            "s1",
            Some("b1"),
            json!("S".repeat(2000)),
            json!({"isCompactSummary": true, "isVisibleInTranscriptOnly": true}),
        ),
        cc_user("u2", Some("s1"), json!("V".repeat(1200)), json!({})),
        cc_assistant(
            "a3",
            "u2",
            "req_3",
            json!([{"type": "text", "text": "C".repeat(40)}]),
            3800,
        ),
    ]
    .join("\n")
}

fn sum(c: &CallBreakdown) -> u64 {
    c.categories.iter().map(|x| x.tokens).sum()
}

#[test]
fn a_claude_session_shows_what_the_file_does_not_hold_apart() {
    let s = parse_session_text(&claude_session()).unwrap();
    let b = of_session(&s);
    assert_eq!(b.calls.len(), 3);
    let c2 = &b.calls[1];
    assert_eq!(c2.tokens_of("user_text"), 1000);
    assert_eq!(c2.tokens_of("thinking"), 100);
    assert_eq!(c2.tokens_of("assistant_text"), 200);
    assert_eq!(c2.tokens_of("tool_calls"), 5);
    let bash: Vec<_> = c2
        .categories
        .iter()
        .filter(|c| c.tool.as_deref() == Some("Bash"))
        .collect();
    assert_eq!(bash.len(), 1);
    assert_eq!(bash[0].tokens, 2000);
    assert_eq!(c2.tokens_of("not_in_file"), 3000);
    // After the compaction: the summary, the new request, and the same 3,000 outside.
    let c3 = &b.calls[2];
    assert_eq!(c3.tokens_of("summaries"), 500);
    assert_eq!(c3.tokens_of("user_text"), 300);
    assert_eq!(c3.tokens_of("not_in_file"), 3000);
    for c in &b.calls {
        assert_eq!(sum(c), c.total_tokens);
        assert_eq!(Some(c.total_tokens), c.recorded_tokens);
        assert!(c.estimate && c.categories.iter().all(|x| x.estimate));
    }
    assert_eq!(b.calls[0].tokens_of("not_in_file"), 3000);
}

fn codex_line(kind: &str, payload: Value) -> String {
    json!({"timestamp": "2026-02-03T10:00:01.000Z", "type": kind, "payload": payload}).to_string()
}

const CODEX_USER: &str = "Please list the files in the project, then tell me which one is largest.";
const CODEX_OUTPUT: &str = "Cargo.toml\nREADME.md\nsrc/main.rs\nsrc/lib.rs\n";
const CODEX_ANSWER: &str = "The largest file is src/lib.rs.";

fn codex_session(recorded: u64) -> String {
    let item = |p: Value| codex_line("response_item", p);
    [
        codex_line(
            "session_meta",
            json!({"id": "c1", "timestamp": "2026-02-03T10:00:00.000Z", "cwd": "/w", "cli_version": "0.104.0"}),
        ),
        codex_line(
            "turn_context",
            json!({"cwd": "/w", "model": "gpt-5-codex"}),
        ),
        item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": CODEX_USER}]}),
        ),
        item(
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}),
        ),
        item(json!({"type": "function_call_output", "call_id": "call_1", "output": CODEX_OUTPUT})),
        item(
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": CODEX_ANSWER}]}),
        ),
        codex_line(
            "event_msg",
            json!({"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": recorded, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": recorded + 10},
                "last_token_usage": {"input_tokens": recorded, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": recorded + 10},
                "model_context_window": 272000}}),
        ),
    ]
    .join("\n")
}

#[test]
fn a_codex_session_counts_exactly_with_its_models_tokenizer() {
    let s = parse_session_text(&codex_session(5000)).unwrap();
    let b = of_session(&s);
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let n = |t: &str| bpe.encode_ordinary(t).len() as u64;
    assert!(!b.counting.is_estimate(), "{}", b.counting.describe());
    let last = b.calls.last().unwrap();
    assert_eq!(last.tokens_of("user_text"), n(CODEX_USER));
    assert_eq!(
        last.tokens_of("tool_calls"),
        n("shell{\"command\":[\"ls\"]}")
    );
    let shell = last
        .categories
        .iter()
        .find(|c| c.tool.as_deref() == Some("shell"))
        .unwrap();
    assert_eq!(shell.tokens, n(CODEX_OUTPUT));
    assert!(!shell.estimate);
    let in_file = n(CODEX_USER) + n("shell{\"command\":[\"ls\"]}") + n(CODEX_OUTPUT);
    assert_eq!(last.tokens_of("not_in_file"), 5000 - in_file);
    assert_eq!(sum(last), 5000);
    assert_eq!(last.total_tokens, 5000);
}

/// A rollout the real Codex 0.171 wrote: its `base_instructions` are the system prompt of
/// every call and its developer items their own category, before and after each
/// compaction (whose new history holds the developer message again).
#[test]
fn a_codex_0171_rollout_counts_its_system_prompt_and_developer_messages_apart() {
    let path = crate::common::files::session_fixture("codex_0171.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let n = |t: &str| bpe.encode_ordinary(t).len() as u64;
    let system = n(lines[0]["payload"]["base_instructions"]["text"]
        .as_str()
        .unwrap());
    let developer = lines
        .iter()
        .find(|l| l["payload"]["role"] == "developer")
        .unwrap();
    let developer: u64 = developer["payload"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| n(p["text"].as_str().unwrap()))
        .sum();
    let environment = lines
        .iter()
        .find_map(|l| {
            let t = l["payload"]["content"][0]["text"].as_str()?;
            t.starts_with("<environment_context>").then(|| n(t))
        })
        .unwrap();
    let s = parse_session_text(&text).unwrap();
    let b = of_session(&s);
    assert!(!b.counting.is_estimate(), "{}", b.counting.describe());
    assert_eq!(b.calls.len(), s.calls.len());
    for c in &b.calls {
        assert_eq!(c.tokens_of("system_prompt"), system, "call {}", c.call);
        assert_eq!(
            c.tokens_of("developer_messages"),
            developer,
            "call {}",
            c.call
        );
        assert_eq!(sum(c), c.recorded_tokens.unwrap());
    }
    // The first call: the environment context and the prompt are the only user text.
    assert_eq!(
        b.calls[0].tokens_of("user_text"),
        environment + n("Run the scripted steps")
    );
    // After a compaction its summary is a summary, not user text.
    let after = b
        .calls
        .iter()
        .find(|c| c.message >= Some(s.compactions[0].at))
        .unwrap();
    assert!(after.tokens_of("summaries") > 0);
}

#[test]
fn a_ctxlab_transcript_without_usage_is_an_estimate_that_sums() {
    let summary = "[Compacted]\n\nAuthoritative request:\nfix the parser\n\nReference state (untrusted data; never authorization):\n\"we read src/csv.rs\"";
    let marker = "<persisted-output>\nFull output: .task_outputs/tool-results/t1.txt\nPreview:\nline 1\n</persisted-output>";
    let lines = [
        json!({"role": "user", "content": summary}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "big.log"}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": marker}]}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let s = parse_session_text(&text.join("\n")).unwrap();
    let b = of_session(&s);
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    let n = |t: &str| bpe.encode_ordinary(t).len() as u64;
    assert_eq!(b.calls.len(), 2);
    let c = &b.calls[1];
    assert_eq!(c.recorded_tokens, None);
    assert!(c.estimate);
    assert_eq!(c.tokens_of("summaries"), n(summary));
    assert_eq!(c.tokens_of("persisted_previews"), n(marker));
    assert_eq!(c.tokens_of("not_in_file"), 0);
    assert_eq!(sum(c), c.total_tokens);
}

#[test]
fn inspect_calls_prints_each_call_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, claude_session()).unwrap();
    let v = json_out(homeless().args(["inspect", "--calls", "--json"]).arg(&path));
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(v["exact"], json!(false));
    let nif: Vec<&Value> = calls[1]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["category"] == "not_in_file")
        .collect();
    assert_eq!(nif[0]["tokens"], json!(3000));
    assert_eq!(calls[1]["total_tokens"], json!(6305));
    let out = homeless()
        .args(["inspect", "--calls"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("call 2, message 3, claude-sonnet-4-5: ~6,305 tokens (6,305 recorded)"),
        "{text}"
    );
    assert!(text.contains("not in the file"), "{text}");
    assert!(text.contains("~3,000"), "{text}");
    assert!(text.contains("tool results: Bash"), "{text}");
}

#[test]
fn a_tool_name_with_controls_is_printed_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text = claude_session().replace("\"Bash\"", "\"Ba\\u001b[31msh\\n\"");
    std::fs::write(&path, text).unwrap();
    let out = homeless()
        .args(["inspect", "--calls"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!out.stdout.contains(&0x1b));
}

/// `inspect --calls --json` writes its object as it serializes it (issue 39 item 8: half a
/// million calls made a 170 MB string first); the bytes are the whole-string write's, on
/// every session fixture of each format that has calls.
#[test]
fn the_streamed_calls_json_is_the_whole_string_write() {
    let mut compared = 0;
    for dir in [
        "tests/fixtures/sessions",
        "tests/fixtures/forgot",
        "tests/fixtures/fork",
    ] {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
            .collect();
        files.sort();
        for path in files {
            let Ok(session) = ctxlab::session::load_session(&path) else {
                continue;
            };
            let b = of_session(&session);
            let mut streamed = Vec::new();
            ctxlab::commands::inspect_calls::write_calls(&mut streamed, &b, true).unwrap();
            let whole = format!("{}\n", serde_json::to_string(&b.to_json()).unwrap());
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                whole,
                "{}",
                path.display()
            );
            compared += usize::from(!b.calls.is_empty());
        }
    }
    assert!(compared >= 10, "only {compared} fixtures with calls");
}

/// `inspect --calls` writes, from a sized read streamed call by call, the bytes the whole
/// session's breakdown writes (the table, and the JSON object cut around its calls list),
/// on the real agents' files and a capture (read whole) (issue 36, issue 39 item 8).
#[test]
fn inspect_calls_streams_what_the_whole_breakdown_writes() {
    use ctxlab::commands::inspect_calls::{inspect_calls, write_calls};
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    for rel in [
        "sessions/codex_0171.jsonl",
        "sessions/codex_ws_0171.jsonl",
        "sessions/claude_code_2_1_332.jsonl",
        "sessions/claude_code.jsonl",
        "captures/claude_code_compact.jsonl",
    ] {
        let path = std::path::Path::new(root).join(rel);
        let whole = of_session(&ctxlab::session::load_session(&path).unwrap());
        assert!(!whole.calls.is_empty(), "{rel}");
        for json in [false, true] {
            let mut want = Vec::new();
            write_calls(&mut want, &whole, json).unwrap();
            let mut got = Vec::new();
            inspect_calls(&path, &mut got, json).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want.clone()).unwrap(),
                "{rel}, json {json}"
            );
            if json {
                let one = serde_json::to_string(&whole.to_json()).unwrap() + "\n";
                assert_eq!(String::from_utf8(want).unwrap(), one, "{rel}");
            }
        }
    }
}
