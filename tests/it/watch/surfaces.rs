//! One number everywhere (docs/real-agents.md lists the real runs' checks): for each
//! session fixture cut from a real agent's files, `inspect --json`, `sessions --json`,
//! `forgot --json`, the export's recorded section and `watch --json` give the same calls,
//! compactions and tokens before and after each compaction.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::follow_json::{Watch, event, is};

const FIXTURES: &[&str] = &[
    "sessions/claude_code_2_1_332.jsonl",
    "sessions/claude_code.jsonl",
    "sessions/codex_rollout.jsonl",
    "sessions/codex_0171.jsonl",
    "sessions/codex_compactions_only.jsonl",
    "captures/claude_code_compact.jsonl",
    "captures/codex_compactions.jsonl",
];

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn json_of(args: &[&str], path: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(args)
        .arg(path)
        .env(
            "CTXLAB_DATA_DIR",
            std::env::temp_dir().join("ctxlab-it-surfaces"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn tokens(v: &Value) -> Value {
    match v {
        Value::Object(o) => o.get("tokens").cloned().unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// `(calls, [(before, after)])` as each surface gives them.
type Figures = (Value, Vec<(Value, Value)>);

#[test]
fn every_surface_gives_the_same_calls_and_compactions_for_each_fixture() {
    for rel in FIXTURES {
        let path = fixture(rel);
        let inspect = json_of(&["inspect", "--json"], &path);
        let read: Figures = (
            inspect["calls"].clone(),
            inspect["compactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| (tokens(&c["tokens_before"]), tokens(&c["tokens_after"])))
                .collect(),
        );
        assert!(!read.1.is_empty(), "{rel}: a fixture with compactions");

        let listed = json_of(&["sessions", "--json"], &path);
        let row = &listed[0];
        assert_eq!(row["calls"], read.0, "{rel}: sessions");
        assert_eq!(row["compactions"], read.1.len(), "{rel}: sessions");
        assert_eq!(
            row["peak_context_tokens"], inspect["peak_context_tokens"],
            "{rel}: sessions"
        );

        let forgot = json_of(&["forgot", "--json"], &path);
        let befores: Vec<Value> = forgot["compactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| tokens(&c["tokens_before"]))
            .collect();
        let want: Vec<Value> = read.1.iter().map(|(b, _)| b.clone()).collect();
        assert_eq!(befores, want, "{rel}: forgot");

        let dir = tempfile::tempdir().unwrap();
        let mut w = Watch::start(
            &[
                &path.to_string_lossy(),
                "--json",
                "--from-start",
                "--poll-ms",
                "200",
            ],
            dir.path(),
            &[],
        );
        let caught_up = w.until("caught up", is("caught_up"));
        let seen = w.interrupt();
        assert_eq!(
            caught_up["calls"], inspect["calls_with_usage"],
            "{rel}: watch"
        );
        let mut live: Vec<(u64, (Value, Value))> = Vec::new();
        for v in seen
            .iter()
            .filter(|v| matches!(event(v), "compaction" | "compaction_update"))
        {
            let i = v["index"].as_u64().unwrap();
            let figures = (v["tokens_before"].clone(), v["tokens_after"].clone());
            match live.iter_mut().find(|(j, _)| *j == i) {
                Some(slot) => slot.1 = figures,
                None => live.push((i, figures)),
            }
        }
        let live: Vec<(Value, Value)> = live.into_iter().map(|(_, f)| f).collect();
        assert_eq!(live, read.1, "{rel}: watch");
    }
}

/// The real Codex 0.171 over its WebSocket (the harness's `codex-ws` run, trimmed)
/// compacts on the server twice: `inspect`, `forgot` and `watch` name both compactions
/// `server`, and `watch` reports the 16 calls the rollout records. It reported 18: Codex
/// writes each server compaction's own call just before the `compacted` line naming it.
#[test]
fn a_server_compaction_is_named_so_everywhere_and_its_own_call_is_no_call() {
    let path = fixture("sessions/codex_ws_0171.jsonl");
    let inspect = json_of(&["inspect", "--json"], &path);
    assert_eq!(inspect["calls"], 16);
    let kinds = |v: &Value| -> Vec<String> {
        v["compactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&inspect), ["server", "server"]);
    let forgot = json_of(&["forgot", "--json"], &path);
    assert_eq!(kinds(&forgot), ["codex server", "codex server"]);

    let dir = tempfile::tempdir().unwrap();
    let mut w = Watch::start(
        &[
            &path.to_string_lossy(),
            "--json",
            "--from-start",
            "--poll-ms",
            "200",
        ],
        dir.path(),
        &[],
    );
    w.until("caught up", is("caught_up"));
    let seen = w.interrupt();
    let calls: Vec<&Value> = seen
        .iter()
        .filter(|v| event(v) == "call" && v["summary_call"] != true)
        .collect();
    assert_eq!(calls.len(), 16, "{calls:#?}");
    let watched: Vec<&str> = seen
        .iter()
        .filter(|v| event(v) == "compaction")
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(watched, ["server", "server"]);
}
