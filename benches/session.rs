//! Loading sessions: a generated Claude Code session (one line per content block, results
//! interleaved, compactions, sidechain lines) and a Codex rollout, about 4 MB each, read
//! from text into the session model. Opening a real session must stay line-based and
//! linear: at these rates a 50 MB file loads well within the one second the workbench
//! allows for its first screen (`scripts/gen_claude_session.py` writes one to try). The
//! workbench's opening (`session_open`): the head it shows at once, and the whole view.
//! `replay`: `ctxlab replay` of a JSON array, read whole or streamed.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn tool_output(rng: &mut fastrand::Rng) -> String {
    const LINES: [&str; 3] = [
        "src/parser.rs:41: let token = lexer.next()?; // it's fine\n",
        "test parser::tests::nested ... FAILED\n",
        "warning: unused variable `x` — 解析器 ✅\n",
    ];
    let chars = rng.usize(200..6_000);
    let mut s = String::new();
    while s.len() < chars {
        s.push_str(LINES[rng.usize(0..LINES.len())]);
    }
    s
}

fn claude_session(calls: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = String::new();
    let mut line = |v: serde_json::Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let base = |kind: &str, uuid: String| {
        json!({"parentUuid": null, "isSidechain": false, "cwd": "/home/dev/p", "sessionId": "s",
               "version": "2.0.30", "type": kind, "uuid": uuid, "timestamp": "2025-12-01T10:00:00.000Z"})
    };
    let mut u = base("user", "u0".into());
    u["message"] = json!({"role": "user", "content": "Fix the parser"});
    line(u);
    for call in 0..calls {
        let usage = json!({"input_tokens": 5, "cache_read_input_tokens": 20_000 + call, "cache_creation_input_tokens": 100, "output_tokens": 50});
        for k in 0..2 {
            let mut a = base("assistant", format!("a{call}-{k}"));
            a["message"] = json!({"id": format!("msg_{call}"), "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": format!("t{call}-{k}"), "name": "Bash", "input": {"command": "cargo test"}}],
                "usage": usage});
            line(a);
            let text = tool_output(&mut rng);
            let mut r = base("user", format!("r{call}-{k}"));
            r["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{call}-{k}"), "content": text}]});
            r["toolUseResult"] = json!({"stdout": text});
            line(r);
        }
        if call % 100 == 99 {
            let mut b = base("system", format!("b{call}"));
            b["subtype"] = json!("compact_boundary");
            b["compactMetadata"] =
                json!({"trigger": "auto", "preTokens": 150_000, "postTokens": 9_000});
            line(b);
            let mut s = base("user", format!("s{call}"));
            s["isCompactSummary"] = json!(true);
            s["message"] =
                json!({"role": "user", "content": "Summary: the parser splits quoted commas."});
            line(s);
        }
        if call % 10 == 0 {
            line(json!({"type": "progress", "data": {"type": "hook_progress"}}));
        }
    }
    out
}

fn codex_session(calls: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = String::new();
    let mut line = |t: &str, p: serde_json::Value| {
        out.push_str(
            &json!({"timestamp": "2025-11-02T09:00:00.000Z", "type": t, "payload": p}).to_string(),
        );
        out.push('\n');
    };
    line(
        "session_meta",
        json!({"id": "c", "cwd": "/home/dev/p", "cli_version": "0.55.0"}),
    );
    line(
        "turn_context",
        json!({"cwd": "/home/dev/p", "model": "gpt-5-codex"}),
    );
    line(
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it"}]}),
    );
    for call in 0..calls {
        line(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"cargo\",\"test\"]}", "call_id": format!("c{call}")}),
        );
        let total = json!({"input_tokens": 1000 * call, "cached_input_tokens": 0, "output_tokens": call, "total_tokens": 1001 * call});
        let last = json!({"input_tokens": 30_000, "cached_input_tokens": 20_000, "output_tokens": 40, "total_tokens": 30_040});
        line(
            "event_msg",
            json!({"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": last, "model_context_window": 272_000}}),
        );
        line(
            "response_item",
            json!({"type": "function_call_output", "call_id": format!("c{call}"), "output": tool_output(&mut rng)}),
        );
    }
    out
}

fn bench_loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("session_load");
    group.sample_size(10);
    for (name, text) in [
        ("claude_code", claude_session(600)),
        ("codex", codex_session(1200)),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(ctxlab::session::parse_session_text(black_box(&text)).unwrap()))
        });
    }
    group.finish();
}

/// The workbench opening a session file: the first screen's head (`open_head`, what shows
/// at once) and the whole file with its view rows (`open_full`, the background job).
fn bench_opening(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claude.jsonl");
    let text = claude_session(600);
    std::fs::write(&path, &text).unwrap();
    let mut group = c.benchmark_group("session_open");
    group.sample_size(10);
    group.bench_function("head", |b| {
        b.iter(|| black_box(ctxlab::tui::sessions::open_head(black_box(&path)).unwrap()))
    });
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("full", |b| {
        let progress = ctxlab::tui::sessions::Progress::default();
        b.iter(|| black_box(ctxlab::tui::sessions::open_full(black_box(&path), &progress).unwrap()))
    });
    group.finish();
}

/// `ctxlab replay --json` of a JSON array of messages with the lesson's numbers, into a
/// fresh workspace each time: the file read whole and then replayed, or streamed, read and
/// parsed on another thread while the replay runs (docs/architecture.md, "Replay of a long
/// session"). Here, in one warm process, the two take about the same time (the whole-file
/// load parses on every core, and memory is reused across iterations); what streaming
/// saves is a fresh process's first touch of every page, which `scripts/measure_replay.py`
/// shows against the Python lesson on a 45 MB session.
fn bench_replay(c: &mut Criterion) {
    use ctxlab::commands::replay::{run_replay, run_replay_stream};
    use ctxlab::pipeline_replay::ReplayOptions;
    use ctxlab::session::{OpenedHistory, load_history, open_history};

    let mut rng = fastrand::Rng::with_seed(7);
    let mut messages = vec![json!({"role": "user", "content": "Fix the parser"})];
    for call in 0..1200 {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": format!("t{call}"), "name": "bash", "input": {"command": "cargo test"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("t{call}"), "content": tool_output(&mut rng)}]}));
    }
    let text = serde_json::to_string(&messages).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.json");
    std::fs::write(&path, &text).unwrap();
    let options = ReplayOptions {
        summary_text: Some("Goal: keep going.".into()),
        ..ReplayOptions::default()
    };
    let workspace = || tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("whole", |b| {
        b.iter_batched(
            workspace,
            |ws| {
                let store = ctxlab::store::Store::new(ws.path());
                let loaded = load_history(&path).unwrap();
                run_replay(
                    loaded.messages,
                    &store,
                    &options,
                    true,
                    &mut std::io::sink(),
                )
                .unwrap();
                ws
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("streamed", |b| {
        b.iter_batched(
            workspace,
            |ws| {
                let store = ctxlab::store::Store::new(ws.path());
                let OpenedHistory::Streamed(stream) = open_history(&path).unwrap() else {
                    panic!("an array is streamed");
                };
                run_replay_stream(stream, &store, &options, true, &mut std::io::sink()).unwrap();
                ws
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_loading, bench_opening, bench_replay);
criterion_main!(benches);
