//! One number everywhere: for every session fixture in the repo, `ctxlab sessions --json`
//! and `ctxlab inspect --json` give the same project, start, end, calls, compactions and
//! peak; a file with nothing in it, or no conversation, is reported the same way by every
//! command; and the fixtures written for issue 24 keep their counts.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cli::{homeless as ctxlab, json_out};
use crate::common::files::session_fixture as fixture;

/// Every session file among the fixtures: subagent files are read with their session.
fn session_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "subagents" {
                session_files(&path, out);
            }
        } else if name.ends_with(".jsonl") && !name.starts_with("agent-") {
            out.push(path);
        }
    }
}

#[test]
fn every_fixture_has_the_same_numbers_in_the_listing_and_in_inspect() {
    let mut files = Vec::new();
    session_files(&fixture(""), &mut files);
    files.sort();
    assert!(files.len() >= 11, "{files:?}");
    let mut compared = 0;
    for file in &files {
        if std::fs::metadata(file).unwrap().len() == 0 {
            continue; // The empty file has no numbers: see the next test.
        }
        let listing = json_out(ctxlab().args(["sessions", "--json"]).arg(file));
        let listed = &listing.as_array().unwrap()[..];
        assert_eq!(listed.len(), 1, "{}: {listing}", file.display());
        let listed = &listed[0];
        assert_eq!(listed["error"], Value::Null, "{}", file.display());
        let inspect = json_out(ctxlab().args(["inspect", "--json"]).arg(file));
        for field in [
            "project",
            "project_source",
            "started",
            "ended",
            "calls",
            "peak_context_tokens",
            "without_conversation",
        ] {
            assert_eq!(listed[field], inspect[field], "{}: {field}", file.display());
        }
        assert_eq!(
            listed["compactions"].as_u64().unwrap() as usize,
            inspect["compactions"].as_array().unwrap().len(),
            "{}: compactions",
            file.display()
        );
        compared += 1;
    }
    assert_eq!(compared, files.len() - 1);
}

#[test]
fn an_empty_file_is_reported_the_same_way_by_every_command() {
    let file = fixture("empty.jsonl");
    let work = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<String>> = vec![
        vec!["sessions".into(), "--json".into()],
        vec!["inspect".into()],
        vec![
            "replay".into(),
            "--workspace".into(),
            work.path().join("w").display().to_string(),
        ],
        vec![
            "export".into(),
            "--out".into(),
            work.path().join("page.html").display().to_string(),
        ],
    ];
    let expected = format!(
        "ctxlab: {}: no messages (the file is empty)\n",
        file.display()
    );
    for args in runs {
        let out = ctxlab()
            .args(&args[..1])
            .arg(&file)
            .args(&args[1..])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!work.path().join("page.html").exists());
}

/// `replay` and `export` of a file without conversation: exit 2 with what it holds.
fn nothing_to_replay(name: &str, holds: &str) {
    let file = fixture(name);
    let work = tempfile::tempdir().unwrap();
    let expected = format!(
        "ctxlab: {}: nothing to replay: the file holds {holds}\n",
        file.display()
    );
    let replay = ctxlab()
        .arg("replay")
        .arg(&file)
        .arg("--workspace")
        .arg(work.path().join("w"))
        .output()
        .unwrap();
    let page = work.path().join("page.html");
    let export = ctxlab()
        .arg("export")
        .arg(&file)
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    for out in [replay, export] {
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected);
    }
    assert!(!page.exists());
    let inspect = json_out(ctxlab().args(["inspect", "--json"]).arg(&file));
    assert_eq!(inspect["without_conversation"], holds);
    let text = ctxlab().arg("inspect").arg(&file).output().unwrap();
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains(&format!("holds: {holds}\n")));
    // The listing says the same of it, in its row and in its JSON.
    let listed = json_out(ctxlab().args(["sessions", "--json"]).arg(&file));
    assert_eq!(listed[0]["without_conversation"], holds);
    let out = ctxlab().arg("sessions").arg(&file).output().unwrap();
    assert!(out.status.success());
    let row = String::from_utf8_lossy(&out.stdout);
    assert!(row.contains(&format!("(holds: {holds})\n")), "{row}");
}

#[test]
fn a_file_of_summary_lines_says_so_instead_of_empty() {
    nothing_to_replay(
        "claude_summary_lines.jsonl",
        "3 summary lines and no conversation messages",
    );
}

#[test]
fn a_codex_file_of_compactions_says_so_instead_of_empty() {
    nothing_to_replay(
        "codex_compactions_only.jsonl",
        "4 compactions and no conversation messages",
    );
    let v = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("codex_compactions_only.jsonl")),
    );
    assert_eq!(v["messages"], 0);
    assert_eq!(v["compactions"].as_array().unwrap().len(), 4);
}

#[test]
fn a_legacy_codex_end_that_was_not_recorded_is_not_printed_as_a_time() {
    let file = fixture("codex_legacy_trimmed.jsonl");
    let v = json_out(ctxlab().args(["inspect", "--json"]).arg(&file));
    assert_eq!(v["format"], "codex-legacy");
    assert_eq!(v["started"], "2025-09-10T18:58:38.331Z");
    assert_eq!(v["ended"], Value::Null);
    assert_eq!(v["project"], "/home/dev/tool");
    assert_eq!(v["project_source"], "recorded");
    assert_eq!(
        (v["lines"].as_u64(), v["messages"].as_u64()),
        (Some(8), Some(5))
    );
    assert_eq!(
        (v["calls"].as_u64(), v["tool_pairs"].as_u64()),
        (Some(2), Some(1))
    );
    let out = ctxlab().arg("inspect").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("time: 2025-09-10T18:58:38.331Z -> end not recorded\n"),
        "{text}"
    );
    assert!(!text.contains("[trimmed]"), "{text}");
    let listed = json_out(ctxlab().args(["sessions", "--json"]).arg(&file));
    assert_eq!(listed[0]["project"], "/home/dev/tool");

    // The older fixture: its first message's <cwd> is the project everywhere.
    let old = fixture("codex_legacy.jsonl");
    let listed = json_out(ctxlab().args(["sessions", "--json"]).arg(&old));
    assert_eq!(listed[0]["project"], "/home/dev/legacy");
    assert_eq!(listed[0]["ended"], Value::Null);
}

#[test]
fn a_claude_session_without_cwd_shows_its_decoded_folder_marked_as_such() {
    let file = fixture("-home-dev-blog/s-rewind.jsonl");
    let v = json_out(ctxlab().args(["inspect", "--json"]).arg(&file));
    assert_eq!(v["project"], "/home/dev/blog");
    assert_eq!(v["project_source"], "folder_name");
    let out = ctxlab().arg("inspect").arg(&file).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("project: /home/dev/blog (decoded from the folder name)\n")
    );
    let out = ctxlab().arg("sessions").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("/home/dev/blog (decoded from the folder name)\n"),
        "{text}"
    );
    // A file outside such a folder: not recorded.
    let v = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("claude_summary_lines.jsonl")),
    );
    assert_eq!(v["project"], Value::Null);
}

#[test]
fn the_claude_fixture_with_a_rewind_and_a_subagent_keeps_its_counts() {
    let v = json_out(
        ctxlab()
            .args(["inspect", "--json"])
            .arg(fixture("-home-dev-blog/s-rewind.jsonl")),
    );
    // The abandoned branch (r3, r4) stays in the file and in the count.
    assert_eq!(v["lines"], 9);
    assert_eq!(v["messages"], 8);
    assert_eq!(v["calls"], 4);
    assert_eq!(v["calls_with_usage"], 4);
    assert_eq!(v["tool_pairs"], 1);
    assert_eq!(v["peak_context_tokens"], 2100);
    assert_eq!(v["started"], "2026-01-20T08:00:01.000Z");
    assert_eq!(v["ended"], "2026-01-20T08:00:10.000Z");
    let sides = v["sidechains"].as_array().unwrap();
    assert_eq!(sides.len(), 1);
    assert_eq!(sides[0]["agent_id"], "r1a");
    assert_eq!(
        (sides[0]["messages"].as_u64(), sides[0]["calls"].as_u64()),
        (Some(2), Some(1))
    );
    // Listed alone, without its subagent file.
    let listed = json_out(
        ctxlab()
            .args(["sessions", "--json"])
            .arg(fixture("-home-dev-blog")),
    );
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["calls"], 4);
}
