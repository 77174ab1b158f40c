//! `ctxlab watch` on a `ctxlab proxy` capture while a writer appends its exchanges at an
//! agent's pace (one exchange per line as it completes, a side request before and inside
//! the thread, a line written in two halves, a micro and a full compaction): the JSON
//! follower's calls and compactions are those of the whole-file read of the final file,
//! side requests are counted and never on the curve, and the workbench's live view draws
//! the followed capture with its headroom line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use ctxlab::session::watch::{Chosen, LiveSession, WatchEvent, choose_path};
use ctxlab::session::{SessionFormat, load_session};

use super::follow_json::{Watch, append, event, is, line};
use super::live_view::{following, items, send, send_items, start};
use crate::support::screen;

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn header() -> String {
    json!({"type": "header", "format": "ctxlab-capture", "version": 1, "ctxlab": "0.1.0",
        "started": "2026-12-01T10:00:00Z", "listen": "127.0.0.1:8765"})
    .to_string()
}

/// One exchange line as the proxy writes it once the answer ended.
fn exchange(n: u64, body: Value, text: &str, cache_read: u64) -> String {
    json!({"type": "exchange", "n": n, "started": format!("2026-12-01T10:00:{n:02}.000Z"),
        "method": "POST", "path": "/v1/messages", "api": "anthropic_messages",
        "upstream": "https://api.anthropic.com",
        "request": {"headers": [{"name": "x-api-key"}], "bytes": 10, "sha256": "00", "body": body},
        "response": {"status": 200, "bytes": 5, "streamed": true, "events": 3, "model": MODEL,
            "text": text, "usage": {"input_tokens": 12, "cache_read_tokens": cache_read,
            "cache_creation_tokens": 30, "output_tokens": 5}, "stop_reason": "end_turn"},
        "timing": {"headers_ms": 1.0, "first_byte_ms": 2.0, "last_byte_ms": 3.0}})
    .to_string()
}

/// A request of the agent's main thread (its tools).
fn main_request(messages: Value) -> Value {
    json!({"model": MODEL, "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [{"name": "Read", "input_schema": {}}, {"name": "Bash", "input_schema": {}}],
        "messages": messages, "stream": true})
}

/// A side request: no tools (a quota probe, a title).
fn side_request(text: &str) -> Value {
    json!({"model": "claude-haiku-4-5", "max_tokens": 1, "messages": [user(text)]})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn read_call(id: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read",
        "input": {"file_path": "a.rs"}}]})
}

fn result(id: &str, content: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

/// The capture's lines after its header: a quota probe, two calls of the thread, a title
/// request, a call after the agent cleared a result in place, the summary call, and the
/// call that starts from the summary.
fn exchanges() -> Vec<String> {
    let long = "fn main() {}\n".repeat(40);
    let cleared = "[Old tool result content cleared]";
    let history = |t1: &str| {
        vec![
            user("fix a.rs"),
            read_call("t1"),
            result("t1", t1),
            read_call("t2"),
            result("t2", "ok"),
        ]
    };
    let mut summary_ask = history(cleared);
    summary_ask.push(user("Summarize the conversation so far."));
    vec![
        exchange(1, side_request("quota"), "", 0),
        exchange(2, main_request(json!([user("fix a.rs")])), "", 1_000),
        exchange(
            3,
            main_request(json!([
                user("fix a.rs"),
                read_call("t1"),
                result("t1", &long)
            ])),
            "",
            9_000,
        ),
        exchange(
            4,
            side_request("Write a title for: fix a.rs"),
            "Fix a.rs",
            0,
        ),
        exchange(5, main_request(json!(history(cleared))), "", 4_000),
        exchange(
            6,
            main_request(json!(summary_ask)),
            "Summary: a.rs was read.",
            5_000,
        ),
        exchange(
            7,
            main_request(json!([
                user(
                    "This session is being continued from a previous conversation. Summary: a.rs was read."
                ),
                user("go on")
            ])),
            "Done.",
            800,
        ),
    ]
}

/// A call, a compaction or a skipped side request as a label both reads can give.
fn call_label(line: u64, context: u64, model: &str) -> String {
    format!("call line {line} context {context} {model}")
}

fn compaction_label(
    kind: &str,
    line: u64,
    before: Option<u64>,
    kept: Option<u64>,
    cleared: &[String],
) -> String {
    format!("{kind} compaction line {line} before {before:?} kept {kept:?} cleared {cleared:?}")
}

#[test]
fn a_capture_followed_as_the_proxy_writes_it_gives_the_calls_and_compactions_of_the_whole_file_read()
 {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("capture-1-1.jsonl");
    std::fs::write(&file, format!("{}\n", header())).unwrap();
    let path = file.to_string_lossy().into_owned();
    let mut w = Watch::start(&[&path, "--json", "--poll-ms", "200"], dir.path(), &[]);
    let summary = w.until("the summary", is("summary"));
    assert_eq!(summary["calls"], 0);
    let lines = exchanges();
    // The quota probe offers no tools: held until a call says what it was.
    line(&file, &lines[0]);
    line(&file, &lines[1]);
    w.until("the first call", is("call"));
    line(&file, &lines[2]);
    let second = w.until("the second call", is("call"));
    // Headroom before any compaction: the window of the model the responses name.
    assert_eq!(
        second["headroom"]["limit_tokens"].as_u64(),
        Some(200_000),
        "{second}"
    );
    line(&file, &lines[3]);
    w.until("the title request", is("skipped"));
    // The proxy's write of one line, seen in two halves.
    let (head, tail) = lines[4].split_at(lines[4].len() / 2);
    let before = w.seen.len();
    append(&file, head);
    std::thread::sleep(Duration::from_millis(450));
    w.drain(Duration::from_millis(100));
    assert!(
        !w.seen[before..]
            .iter()
            .any(|v| matches!(event(v), "warning" | "compaction" | "call")),
        "half a line is never read: {:#?}",
        w.seen
    );
    append(&file, &format!("{tail}\n"));
    w.until("the micro compaction", is("compaction"));
    w.until("the call after it", is("call"));
    line(&file, &lines[5]);
    w.until("the summary call", is("call"));
    line(&file, &lines[6]);
    w.until("the full compaction", is("compaction"));
    let last = w.until("the call after the summary", is("call"));
    let seen = w.interrupt();
    // After the agent's compaction: the size it compacted at.
    assert_eq!(
        last["headroom"]["limit"], "compacted at ~5,042 tokens last time",
        "{last}"
    );

    let live: Vec<String> = seen
        .iter()
        .filter_map(|v| match event(v) {
            "call" => {
                assert_eq!(v["summary_call"], false);
                Some(call_label(
                    v["line"].as_u64().unwrap(),
                    v["context_tokens"].as_u64().unwrap(),
                    v["model"].as_str().unwrap(),
                ))
            }
            "compaction" => {
                let cleared: Vec<String> =
                    serde_json::from_value(v["cleared_tool_ids"].clone()).unwrap();
                Some(compaction_label(
                    v["kind"].as_str().unwrap(),
                    v["line"].as_u64().unwrap(),
                    v["tokens_before"].as_u64(),
                    v["kept_messages"].as_u64(),
                    &cleared,
                ))
            }
            "skipped" => Some(format!("skipped {}", v["what"].as_str().unwrap())),
            _ => None,
        })
        .collect();

    let s = load_session(&file).unwrap();
    assert_eq!(s.format, SessionFormat::ProxyCapture);
    let mut whole: Vec<(usize, String)> = s
        .calls
        .iter()
        .map(|c| {
            (
                c.line,
                call_label(
                    c.line as u64,
                    c.usage.context_tokens(),
                    c.model.as_deref().unwrap(),
                ),
            )
        })
        .chain(s.compactions.iter().map(|c| {
            (
                c.line,
                compaction_label(
                    c.kind.name(),
                    c.line as u64,
                    c.tokens_before.map(|t| t.tokens),
                    c.kept.as_ref().map(|k| k.len() as u64),
                    &c.cleared_tool_ids,
                ),
            )
        }))
        .collect();
    // A compaction comes before the call of its line.
    whole.sort_by_key(|(line, label)| (*line, !label.contains("compaction")));
    let whole: Vec<String> = whole.into_iter().map(|(_, l)| l).collect();
    let live_thread: Vec<String> = live
        .iter()
        .filter(|l| !l.starts_with("skipped"))
        .cloned()
        .collect();
    assert_eq!(live_thread, whole, "{seen:#?}");
    assert_eq!(s.calls.len(), 5, "the side requests are not calls");
    assert_eq!(s.compactions.len(), 2);
    let side = "side request (other tools than the main thread's)";
    assert_eq!(
        live.iter().filter(|l| l.ends_with(side)).count(),
        s.skipped.get(side).copied().unwrap(),
        "side requests are counted apart: {live:#?}"
    );
    assert_eq!(s.skipped.get(side), Some(&2));
    assert_eq!(
        live,
        [
            format!("skipped {side}"),
            call_label(3, 1_042, MODEL),
            call_label(4, 9_042, MODEL),
            format!("skipped {side}"),
            compaction_label("micro", 6, None, None, &["t1".to_string()]),
            call_label(6, 4_042, MODEL),
            call_label(7, 5_042, MODEL),
            compaction_label("full", 8, Some(5_042), Some(0), &[]),
            call_label(8, 842, MODEL),
        ]
    );
}

#[test]
fn a_captures_folder_is_followed_at_its_newest_capture() {
    let dir = tempfile::tempdir().unwrap();
    let older = dir.path().join("capture-1-1.jsonl");
    std::fs::write(&older, format!("{}\n", header())).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let newer = dir.path().join("capture-2-1.jsonl");
    std::fs::write(&newer, format!("{}\n{}\n", header(), exchanges()[1])).unwrap();
    // The older one written to last would be newer: set the times apart explicitly.
    let old_time = std::time::SystemTime::now() - Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&older)
        .unwrap()
        .set_modified(old_time)
        .unwrap();
    let chosen = choose_path(dir.path()).unwrap();
    assert_eq!(chosen.path, newer);
}

fn chosen(path: &Path) -> Chosen {
    Chosen {
        path: PathBuf::from(path),
        why: "the file named on the command line".into(),
        scope: None,
    }
}

#[test]
fn snapshot_live_view_of_a_capture() {
    let (mut a, id) = following(true);
    start(&mut a, id);
    let mut live = LiveSession::new();
    let old = items(&mut live, 1, &[header()]);
    assert!(send_items(&mut a, id, old, false).is_empty());
    let path = chosen(Path::new("/tmp/project/s1.jsonl")).path;
    send(
        &mut a,
        id,
        WatchEvent::CaughtUp {
            path,
            format: live.format(),
            lines: 1,
            bytes: 200,
            skipped: 0,
            sidechain_lines: 0,
            unknown_format: false,
        },
    );
    let new = items(&mut live, 2, &exchanges());
    send_items(&mut a, id, new, true);
    let v = a.live_view().expect("the live view is open");
    assert_eq!(v.format(), Some(SessionFormat::ProxyCapture));
    assert_eq!(v.calls(), 5, "side requests stay off the curve");
    assert_eq!(v.curve().len(), 5);
    assert_eq!(v.skipped(), 2);
    let text = screen(&mut a, 100, 40);
    insta::assert_snapshot!("live_view_capture_100x40", text);
}

/// The real agents' captures (`capture_fidelity`), followed from their start: the calls,
/// tool calls and compactions (their tokens before and after) of the whole-file read.
#[test]
fn a_real_agents_capture_followed_from_its_start_gives_what_inspect_gives() {
    for name in ["claude_code_compact.jsonl", "codex_compactions.jsonl"] {
        let path = crate::capture_fidelity::fixture(name);
        let whole = crate::capture_fidelity::inspect(&path);
        let dir = tempfile::tempdir().unwrap();
        let file = path.to_string_lossy().into_owned();
        let mut w = Watch::start(
            &[&file, "--json", "--from-start", "--poll-ms", "200"],
            dir.path(),
            &[],
        );
        let caught_up = w.until("caught up", is("caught_up"));
        let seen = w.interrupt();
        assert_eq!(caught_up["calls"], whole["calls_with_usage"], "{name}");
        assert_eq!(caught_up["tool_calls"], whole["tool_pairs"], "{name}");
        let live: Vec<(Value, Value)> = seen
            .iter()
            .filter(|v| event(v) == "compaction")
            .map(|v| (v["tokens_before"].clone(), v["tokens_after"].clone()))
            .collect();
        let read: Vec<(Value, Value)> = whole["compactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["tokens_before"]["tokens"].clone(),
                    c["tokens_after"]["tokens"].clone(),
                )
            })
            .collect();
        assert_eq!(live, read, "{name}");
        assert!(!read.is_empty());
    }
}
