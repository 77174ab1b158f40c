//! The real binary on Claude Code and Codex sessions: `ctxlab inspect`, `ctxlab sessions`,
//! and `ctxlab replay` / `ctxlab pipeline` reading those formats, never writing next to
//! the source.

use std::path::Path;

use crate::common::cli::{homeless as ctxlab, json_out};
use crate::common::files::{copy_dir, session_fixture as fixture, snapshot};
use serde_json::Value;

#[test]
fn inspect_reports_a_claude_session_with_its_compactions() {
    let v = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("claude_code.jsonl")),
    );
    assert_eq!(v["format"], "claude-code");
    assert_eq!(v["calls"], 5);
    assert_eq!(v["calls_with_usage"], 5);
    assert_eq!(v["tool_pairs"], 4);
    assert_eq!(v["peak_context_tokens"], 2120);
    assert_eq!(v["project"], "/home/dev/parser");
    let c = v["compactions"].as_array().unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(c[0]["trigger"], "manual");
    assert_eq!(c[0]["tokens_before"]["tokens"], 2150);
    assert_eq!(c[0]["tokens_after"]["tokens"], 900);
    assert_eq!(c[1]["kind"], "micro");
    assert_eq!(c[2]["tokens_after"]["source"], "first_call_after");
    assert_eq!(v["warnings"][0]["line"], 11);
    assert_eq!(v["sidechains"][0]["agent_id"], "agent7");
    assert!(v["skipped_total"].as_u64().unwrap() >= 5);

    let out = ctxlab()
        .arg("inspect")
        .arg(fixture("claude_code.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("compactions: 3"), "{text}");
    assert!(
        text.contains("#1 at message 5 (line 14): full manual, 2,150 -> 900 tokens, 12.0 s"),
        "{text}"
    );
    assert!(text.contains("line 11: malformed line skipped"), "{text}");
}

#[test]
fn inspect_says_when_a_codex_summary_is_encrypted() {
    let v = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("codex_rollout.jsonl")),
    );
    assert_eq!(v["format"], "codex");
    assert_eq!(v["context_window"], 272000);
    let c = v["compactions"].as_array().unwrap();
    assert_eq!(c[0]["summary"], "text");
    assert_eq!(c[1]["summary"], "encrypted");
    // Two prompts kept; the encrypted summary is not counted as kept.
    assert_eq!(c[1]["kept_messages"], 2);
    let text = String::from_utf8(
        ctxlab()
            .arg("inspect")
            .arg(fixture("codex_rollout.jsonl"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("summary encrypted by the provider"), "{text}");
    let legacy = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("codex_legacy.jsonl")),
    );
    assert_eq!(legacy["format"], "codex-legacy");
    assert_eq!(legacy["project"], "/home/dev/legacy");
}

#[test]
fn sessions_lists_the_default_roots_without_subagent_files() {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join("claude-config");
    copy_dir(
        &fixture("claude_project"),
        &claude.join("projects/-home-dev-site"),
    );
    let codex = home.path().join("codex-home");
    let day = codex.join("sessions/2025/11/02");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(
        fixture("codex_rollout.jsonl"),
        day.join("rollout-2025-11-02T09-00-00-0199a.jsonl"),
    )
    .unwrap();
    let v = json_out(
        ctxlab()
            .args(["sessions", "--json"])
            .env("CLAUDE_CONFIG_DIR", &claude)
            .env("CODEX_HOME", &codex),
    );
    let list = v.as_array().unwrap();
    let names: Vec<&str> = list
        .iter()
        .map(|e| {
            Path::new(e["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
        })
        .collect();
    // Newest first, the browser's order (issue 22: one order for both). `agent-cd34.jsonl`
    // and `s-main/subagents/agent-ab12.jsonl` are s-main's subagents, listed with it;
    // `agent-zz99.jsonl` names a session `s-other` that is not there, so it is listed.
    assert_eq!(
        names,
        [
            "agent-zz99.jsonl",
            "s-main.jsonl",
            "rollout-2025-11-02T09-00-00-0199a.jsonl"
        ],
        "{v}"
    );
    let codex_entry = &list[2];
    assert_eq!(codex_entry["tool"], "codex");
    assert_eq!(codex_entry["project"], "/home/dev/api");
    // What `inspect` says (issue 18, "One number everywhere"): six answers, one of them
    // (the web search before the second compaction) with no usage recorded.
    assert_eq!(codex_entry["calls"], 6);
    assert_eq!(codex_entry["compactions"], 2);
    assert_eq!(codex_entry["peak_context_tokens"], 6000);
    assert_eq!(codex_entry["started"], "2025-11-02T09:00:00.000Z");
    let claude_entry = &list[1];
    assert_eq!(claude_entry["tool"], "claude-code");
    assert_eq!(claude_entry["calls"], 2);
    assert_eq!(claude_entry["peak_context_tokens"], 1000);
    assert_eq!(
        claude_entry["size_bytes"].as_u64().unwrap(),
        std::fs::metadata(fixture("claude_project/s-main.jsonl"))
            .unwrap()
            .len()
    );

    // A path given on the command line replaces the default roots.
    let out = ctxlab()
        .arg("sessions")
        .arg(fixture("claude_code.jsonl"))
        .env("CLAUDE_CONFIG_DIR", &claude)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("/home/dev/parser\n"), "{text}");
    assert!(text.contains("claude-code"), "{text}");
    assert!(text.contains("5 calls   3 compactions"), "{text}");
    assert!(!text.contains("s-main"), "{text}");
}

#[test]
fn replay_and_pipeline_read_claude_and_codex_sessions() {
    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .arg("replay")
        .arg(fixture("claude_code.jsonl"))
        .arg("--workspace")
        .arg(ws.path())
        .args(["--json", "--summary-text", "facts"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    // The conversation holds 5 assistant messages: 5 model calls.
    assert_eq!(last["calls"], 5);
    assert_eq!(last["final_messages"], 10);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("line 11: malformed line skipped"), "{err}");

    let v = json_out(
        ctxlab()
            .args(["pipeline", "--input"])
            .arg(fixture("codex_rollout.jsonl"))
            .arg("--workspace")
            .arg(ws.path())
            .args(["--now", "1700000000", "--summary-text", "facts"]),
    );
    let summary = v["compact_history"]["messages"][0]["content"]
        .as_str()
        .unwrap();
    assert!(
        summary.starts_with("[Compacted]\n\nAuthoritative request:\nFix it and add a test\n"),
        "{summary}"
    );
    // The harness's injected context is not part of the conversation.
    let input = v["stages"]["budget"]["messages"].as_array().unwrap();
    assert_eq!(input.len(), 11);
    assert_eq!(input[0]["content"], "Why does login fail?");
}

#[test]
fn replaying_an_imported_session_never_writes_next_to_it() {
    let source = tempfile::tempdir().unwrap();
    copy_dir(&fixture("claude_project"), source.path());
    std::fs::copy(
        fixture("claude_code.jsonl"),
        source.path().join("s-claude-1.jsonl"),
    )
    .unwrap();
    let before = snapshot(source.path());
    let ws = tempfile::tempdir().unwrap();
    for file in ["s-main.jsonl", "s-claude-1.jsonl"] {
        // Small thresholds: every stage writes into the workspace.
        let out = ctxlab()
            .current_dir(source.path())
            .arg("replay")
            .arg(source.path().join(file))
            .arg("--workspace")
            .arg(ws.path())
            .args([
                "--set",
                "context_limit=300",
                "--set",
                "budget_chars=20",
                "--set",
                "persist_threshold=10",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for cmd in ["inspect", "sessions"] {
            let out = ctxlab()
                .current_dir(source.path())
                .arg(cmd)
                .arg(source.path().join(file))
                .output()
                .unwrap();
            assert!(out.status.success());
        }
    }
    assert!(ws.path().join(".transcripts").read_dir().unwrap().count() > 0);
    assert!(
        ws.path()
            .join(".task_outputs/tool-results")
            .read_dir()
            .unwrap()
            .count()
            > 0
    );
    assert_eq!(snapshot(source.path()), before);
}

/// A small `.jsonl.zst` that inflates past the session cap (a zip bomb) is refused with
/// what happened, after reading one chunk, whatever its size on disk.
#[test]
fn a_zst_file_that_inflates_past_the_cap_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.jsonl.zst");
    let line =
        "{\"timestamp\":\"2026-12-02T07:53:13.882Z\",\"type\":\"world_state\",\"payload\":{}}\n";
    let text = line.repeat(200_000);
    let packed = zstd::stream::encode_all(text.as_bytes(), 19).unwrap();
    assert!(packed.len() < text.len() / 100);
    std::fs::write(&path, &packed).unwrap();
    let out = ctxlab()
        .env("CTXLAB_MAX_SESSION_BYTES", "1000000")
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("decompresses to more than 1000000 bytes"),
        "{err}"
    );
}

/// Codex's `archived_sessions/` beside `sessions/` is a default root: its rollouts are
/// listed and marked archived; a compressed rollout is listed and opens.
#[test]
fn sessions_lists_codex_archived_and_compressed_rollouts() {
    let home = tempfile::tempdir().unwrap();
    let codex = home.path().join("codex-home");
    let day = codex.join("sessions/2026/12/02");
    let archive = codex.join("archived_sessions");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::create_dir_all(&archive).unwrap();
    let plain = std::fs::read(fixture("codex_0171.jsonl")).unwrap();
    let packed = zstd::stream::encode_all(&plain[..], 3).unwrap();
    let zst = day.join("rollout-2026-12-02T07-53-13-a.jsonl.zst");
    std::fs::write(&zst, packed).unwrap();
    std::fs::copy(
        fixture("codex_rollout.jsonl"),
        archive.join("rollout-2025-11-02T09-00-00-0199a.jsonl"),
    )
    .unwrap();
    let listing = |json: bool| {
        let mut cmd = ctxlab();
        cmd.arg("sessions")
            .env("CODEX_HOME", &codex)
            .env("CLAUDE_CONFIG_DIR", home.path().join("none"));
        if json {
            cmd.arg("--json");
        }
        cmd
    };
    let v = json_out(&mut listing(true));
    let rows: Vec<(String, bool)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let name = Path::new(e["path"].as_str().unwrap()).file_name().unwrap();
            (name.to_string_lossy().to_string(), e["archived"] == true)
        })
        .collect();
    assert!(rows.contains(&("rollout-2026-12-02T07-53-13-a.jsonl.zst".into(), false)));
    assert!(rows.contains(&("rollout-2025-11-02T09-00-00-0199a.jsonl".into(), true)));
    let text = String::from_utf8(listing(false).output().unwrap().stdout).unwrap();
    let archived = text.lines().find(|l| l.contains("0199a")).unwrap();
    assert!(archived.ends_with("(archived)"), "{archived}");
    // The compressed rollout opens as the plain one does.
    let inspected = json_out(ctxlab().args(["inspect", "--json"]).arg(&zst));
    let want = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("codex_0171.jsonl")),
    );
    assert_eq!(inspected["compactions"], want["compactions"]);
    assert_eq!(inspected["calls"], want["calls"]);
}
