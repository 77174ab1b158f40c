//! `ctxlab replay --compare` on the real binary: the table of strategies side by side,
//! the JSON lines (one per strategy per call, then each strategy's totals), the
//! per-strategy workspaces, any session format the loader reads, and the usage errors.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::cli::ctxlab;

/// Five results in one batch, then twelve exchanges of text: s08's micro replaces two
/// results before the model sees them, and with `snip_max_messages=8` s08's snip cuts text
/// it keeps no copy of; guarded saves, archives and loses nothing.
fn session_file(dir: &Path) -> PathBuf {
    let ids = ["a", "b", "c", "d", "e"];
    let long = |t: String| format!("{t} {}", "x".repeat(200));
    let mut messages = vec![
        json!({"role": "user", "content": "look at five files"}),
        json!({"role": "assistant", "content": ids.iter().map(|id| json!({
            "type": "tool_use", "id": id, "name": "bash", "input": {"command": format!("cat {id}")}
        })).collect::<Vec<_>>()}),
        json!({"role": "user", "content": ids.iter().map(|id| json!({
            "type": "tool_result", "tool_use_id": id, "content": long(format!("result {id}"))
        })).collect::<Vec<_>>()}),
    ];
    for i in 0..12 {
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": long(format!("answer {i}"))}]}));
        messages.push(json!({"role": "user", "content": long(format!("question {i}"))}));
    }
    messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}));
    let path = dir.join("session.json");
    std::fs::write(&path, serde_json::to_string(&messages).unwrap()).unwrap();
    path
}

fn compare(args: &[&str], file: &Path) -> (bool, String, String) {
    let out = ctxlab()
        .arg("replay")
        .args(args)
        .args(["--set", "snip_max_messages=8", "--now", "1700000000"])
        .arg(file)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The cells of the table row whose label starts with `label`.
fn row<'a>(table: &'a str, label: &str) -> Vec<&'a str> {
    let line = table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no row {label}:\n{table}"));
    line[label.len()..]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn the_table_puts_the_strategies_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    let (ok, out, err) = compare(&["--compare", "s08,guarded,s06,s08-latest"], &file);
    assert!(ok, "{err}");
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["s08", "guarded", "s06", "s08-latest"]);
    assert_eq!(row(&out, "model calls"), ["14", "14", "14", "14"]);
    let lost = row(&out, "end lost chars (pieces)");
    assert_ne!(
        lost[0], "0 (0)",
        "s08 loses what micro and snip dropped:\n{out}"
    );
    assert_eq!(lost[1], "0 (0)", "guarded loses nothing:\n{out}");
    let unseen = row(&out, "unseen_replaced chars (results)");
    assert!(unseen[0].ends_with("(2)"), "{out}");
    assert_eq!(unseen[1], "0 (0)", "{out}");
    assert_eq!(row(&out, "orphans_sent (requests)"), ["0", "0", "0", "0"]);
    assert_ne!(row(&out, "fired snip_compact")[0], "0", "{out}");
}

#[test]
fn json_gives_each_call_then_the_totals_per_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    let (ok, out, err) = compare(&["--compare", "s08,guarded", "--json"], &file);
    assert!(ok, "{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 * (14 + 1));
    for (strategy, part) in ["s08", "guarded"].iter().zip(lines.chunks(15)) {
        for (i, call) in part[..14].iter().enumerate() {
            assert_eq!(call["strategy"], *strategy);
            assert_eq!(call["call"], i + 1);
            assert!(call["size"].as_u64().unwrap() > 0);
            assert!(call["reach"]["in_context"]["chars"].as_u64().unwrap() > 0);
        }
        let totals = &part[14]["totals"];
        assert_eq!(part[14]["strategy"], *strategy);
        assert_eq!(totals["calls"], 14);
        assert_eq!(totals["orphans_sent"], 0);
    }
    assert_eq!(lines[1]["unseen_replaced"], 2, "s08's second call");
    assert!(
        lines[14]["totals"]["reach_end"]["lost"]["chars"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(lines[29]["totals"]["reach_end"]["lost"]["chars"], 0);
    assert_eq!(lines[29]["totals"]["unseen_replaced"]["pieces"], 0);
}

#[test]
fn each_strategy_writes_into_its_own_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    let ws = dir.path().join("ws");
    let ws_arg = ws.to_str().unwrap();
    let (ok, _, err) = compare(&["--compare", "s08,guarded", "--workspace", ws_arg], &file);
    assert!(ok, "{err}");
    assert!(ws.join("guarded/.transcripts/archive.jsonl").is_file());
    assert!(!ws.join("s08/.transcripts/archive.jsonl").exists());
    // A second run into the same folders would start from the first run's files.
    let (ok, _, err) = compare(&["--compare", "guarded", "--workspace", ws_arg], &file);
    assert!(!ok);
    assert!(err.contains("not empty"), "{err}");
}

#[test]
fn a_claude_code_session_is_compared_through_the_one_loader() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/claude_code.jsonl");
    let (ok, out, err) = compare(&["--compare", "s06,s08"], &file);
    assert!(ok, "{err}");
    let calls = row(&out, "model calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0], calls[1]);
    assert_ne!(calls[0], "0", "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    for args in [
        &["--compare", "s08,s08"][..],
        &["--compare", "s08,nope"],
        &["--compare", "s08", "--strategy", "s06"],
    ] {
        let out = ctxlab()
            .arg("replay")
            .args(args)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    // Without --compare a workspace is still required.
    let out = ctxlab().arg("replay").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
