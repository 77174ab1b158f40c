//! `ctxlab fork` of a Claude Code session whose agent spawned subagents: the fixture is cut
//! from the files the real Claude Code 2.1.332 wrote against the scripted server's
//! `--script subagent` (a foreground `Agent` call before a `/compact`, another after it),
//! with each subagent's transcript a file of its own under `<session>/subagents/`.
//! The fork holds the `Agent` call and its result (the subagent's report, which is all the
//! agent resumes with: the real Claude Code resumed such a fork, docs/fork.md) and leaves
//! the subagents' own files out, saying how many.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cli::ctxlab;

const SESSION: &str =
    "tests/fixtures/fork/claude_subagents/a95d5584-e984-4ca1-81af-24904a555d63.jsonl";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION)
}

#[test]
fn the_fork_keeps_the_agent_call_and_its_report_and_leaves_the_subagent_files_out() {
    let session = ctxlab::session::load_session(&fixture()).unwrap();
    assert_eq!(
        session.sidechains.len(),
        2,
        "both subagents' files are read"
    );
    assert_eq!(session.compactions.len(), 1);

    let home = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .arg("fork")
        .arg(fixture())
        .args(["--before", "1", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // One subagent ran before the compaction, the other after it.
    assert_eq!(v["subagents_left_out"], 1, "{v}");
    let path = PathBuf::from(v["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let blocks = |kind: &str| -> Vec<Value> {
        lines
            .iter()
            .filter_map(|l| l["message"]["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == kind)
            .cloned()
            .collect()
    };
    let calls = blocks("tool_use");
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["name"], "Agent");
    let results = blocks("tool_result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], calls[0]["id"]);
    assert!(
        results[0].to_string().contains("SUBAGENT-REPORT"),
        "{results:#?}"
    );
    // Nothing of the subagents' own transcripts, nothing from after the fork point.
    assert!(lines.iter().all(|l| l["isSidechain"] != true));
    assert!(!text.contains("Delegate it once more"));
    let stem = path.file_stem().unwrap();
    assert!(!path.with_file_name(stem).exists(), "no subagents folder");

    // The text report says it too.
    let home = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .arg("fork")
        .arg(fixture())
        .args(["--before", "1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("not copied: the transcript of 1 subagent started before the fork point"),
        "{said}"
    );
}
