//! Issue 19 §9: a fuzz corpus for the session readers, kept in CI. Every case is made
//! deterministically from the session fixtures (and a message array) by a seeded mutator:
//! cut short, bytes flipped or dropped, lines duplicated, shuffled or swapped for a hostile
//! line (wrong types, deep nesting, huge numbers, controls, invalid UTF-8). Each case goes
//! through every entry point a user reaches (the loader, the summary, the listing's peek and
//! counts, the replay's loader and stream); none may panic, and an error must be a
//! `SessionError`. `CTXLAB_FUZZ_CASES` sets the number of cases (400 by default, a few
//! seconds; the README gives the long run).

use std::path::Path;

use ctxlab::session::discover::entry_for;
use ctxlab::session::numbers::numbers_of_file;
use ctxlab::session::summary::SessionSummary;
use ctxlab::session::{OpenedHistory, load_history, load_session, open_history};

use crate::common::files::session_fixture;

const HOSTILE_LINES: &[&[u8]] = &[
    b"{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":7,\"usage\":\"x\"}}",
    b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\"}]}}",
    b"{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"compactMetadata\":{\"preTokens\":1e400}}",
    b"{\"type\":\"summary\",\"summary\":\"\\u001b]0;x\\u0007\"}",
    b"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"arguments\":null}}",
    b"{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":-1}}}",
    b"{\"record_type\":\"state\"}",
    b"{\"sessionId\":[],\"timestamp\":{},\"cwd\":12345678901234567890123}",
    b"\xff\xfe\x00{\"type\":\"user\"}",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    b"{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":null,\"name\":5}]}}",
    b"{\"type\":\"compacted\",\"payload\":{\"message\":7,\"replacement_history\":{}}}",
];

fn corpus_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "claude_code.jsonl",
        "claude_code_summary_only.jsonl",
        "codex_legacy.jsonl",
        "codex_rollout.jsonl",
    ]
    .iter()
    .map(|name| std::fs::read(session_fixture(name)).unwrap())
    .collect();
    seeds.push(
        br#"[{"role":"user","content":"fix it"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a\nb"}]},{"role":"assistant","content":"done"}]"#
            .to_vec(),
    );
    seeds
}

fn mutate(rng: &mut fastrand::Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..rng.usize(1..4) {
        match rng.u8(0..7) {
            0 if !bytes.is_empty() => bytes.truncate(rng.usize(0..bytes.len())),
            1 if !bytes.is_empty() => {
                for _ in 0..rng.usize(1..8) {
                    let i = rng.usize(0..bytes.len());
                    bytes[i] ^= 1 << rng.u8(0..8);
                }
            }
            2 if !bytes.is_empty() => {
                let a = rng.usize(0..bytes.len());
                let b = (a + rng.usize(0..64)).min(bytes.len());
                bytes.drain(a..b);
            }
            3 | 4 => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                let at = rng.usize(0..=lines.len());
                let line = HOSTILE_LINES[rng.usize(0..HOSTILE_LINES.len())].to_vec();
                lines.insert(at, line);
                bytes = lines.join(&b'\n');
            }
            5 => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                rng.shuffle(&mut lines);
                if let Some(first) = lines.first().cloned() {
                    lines.push(first);
                }
                bytes = lines.join(&b'\n');
            }
            _ => {
                // A string value replaced by a control-laden or non-UTF-8 one.
                if let Some(i) = bytes.windows(3).position(|w| w == b"\":\"") {
                    let at = i + 3;
                    for (k, b) in b"\\u001b[2J\xc3(".iter().enumerate() {
                        bytes.insert(at + k, *b);
                    }
                }
            }
        }
    }
    bytes
}

/// Every reader on one file; panics propagate and fail the test with the case's bytes.
fn read_everything(path: &Path) {
    if let Ok(session) = load_session(path) {
        let summary = SessionSummary::of(&session);
        let _ = serde_json::to_string(&summary).unwrap();
    }
    let _ = entry_for(path);
    let _ = numbers_of_file(path);
    let _ = load_history(path);
    if let Ok(OpenedHistory::Streamed(stream)) = open_history(path) {
        let _ = stream.count();
    }
}

#[test]
fn the_session_readers_survive_a_mutated_corpus() {
    let cases: usize = std::env::var("CTXLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let seeds = corpus_seeds();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(19);
    for case in 0..cases {
        let seed = &seeds[case % seeds.len()];
        let bytes = mutate(&mut rng, seed);
        let path = dir.path().join(format!("case-{}.jsonl", case % 8));
        std::fs::write(&path, &bytes).unwrap();
        let result = std::panic::catch_unwind(|| read_everything(&path));
        if result.is_err() {
            let keep = dir.path().join("failing-case.jsonl");
            std::fs::copy(&path, &keep).unwrap();
            panic!(
                "case {case} panicked; its bytes: {:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}
