//! The real binary, end to end: `ctxlab pipeline` and `ctxlab replay` on files.

use crate::common::cli::{ctxlab, example, pipeline, replay};
use serde_json::Value;

#[test]
fn pipeline_on_the_example_fires_every_stage_and_writes_the_files() {
    let ws = tempfile::tempdir().unwrap();
    let out = pipeline(example(), ws.path())
        .args(["--now", "1700000000", "--summary-text", "facts"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["strategy"], "s08");
    for stage in ["budget", "snip", "micro"] {
        assert_eq!(v["stages"][stage]["changed"], true, "{stage}");
    }
    assert_eq!(v["auto_compact_triggered"], true);
    let persisted = v["stages"]["budget"]["files_written"].as_array().unwrap();
    assert_eq!(persisted.len(), 2);
    for f in persisted {
        let path = f["path"].as_str().unwrap();
        assert!(path.starts_with(".task_outputs/tool-results/"));
        let on_disk = std::fs::read_to_string(ws.path().join(path)).unwrap();
        assert_eq!(on_disk, f["content"].as_str().unwrap());
    }
    // The probes report the transcript they would write but leave the workspace as micro left it.
    assert_eq!(
        v["compact_history"]["files_written"][0]["path"],
        ".transcripts/transcript_1700000000.jsonl"
    );
    assert!(!ws.path().join(".transcripts").exists());
    let summary = v["compact_history"]["messages"][0]["content"]
        .as_str()
        .unwrap();
    assert!(summary.starts_with("[Compacted]\n\nAuthoritative request:\nFind why the nightly"));
    assert!(summary.ends_with("\n\"facts\""));
}

#[test]
fn pipeline_without_summary_text_omits_the_probes() {
    let ws = tempfile::tempdir().unwrap();
    let out = pipeline(example(), ws.path()).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("compact_history").is_none());
    assert!(v.get("reactive_compact").is_none());
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_file_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let cases = [
        (
            "broken.json",
            "{\"messages\": [\n  {\"role\": \"user\", \"content\": \"x\"},\n",
            "line 3 column 0",
        ),
        (
            "shape.json",
            "{\"messages\": [{\"role\": \"user\", \"content\": 3}]}",
            "messages[0]",
        ),
        ("scalar.json", "42", "found a number"),
    ];
    for (name, text, position) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let out = pipeline(&input, &ws).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains(name) && err.contains(position),
            "{name}: {err}"
        );
        assert!(out.stdout.is_empty());
        assert!(!ws.exists(), "{name}: the workspace was created");
    }
    let out = ctxlab()
        .args(["pipeline", "--input"])
        .arg(dir.path().join("missing.json"))
        .arg("--workspace")
        .arg(&ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
}

#[test]
fn unknown_set_keys_and_non_numbers_exit_2_listing_the_keys() {
    for bad in [
        "nope=1",
        "context_limit=abc",
        "context_limit=1.5",
        "context_limit",
    ] {
        let out = ctxlab()
            .args(["pipeline", "--input"])
            .arg(example())
            .args(["--workspace", "/nonexistent-ctxlab-test", "--set", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("summary_max_tokens") && err.contains("budget_chars"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn set_changes_the_thresholds() {
    let ws = tempfile::tempdir().unwrap();
    let out = pipeline(example(), ws.path())
        .args([
            "--set",
            "snip_max_messages=1000",
            "--set",
            "context_limit=10000000",
            "--set",
            "budget_chars=1000000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stages"]["budget"]["changed"], false);
    assert_eq!(v["stages"]["snip"]["changed"], false);
    assert_eq!(v["auto_compact_triggered"], false);
}

#[test]
fn replay_reports_each_call_and_the_totals() {
    let ws = tempfile::tempdir().unwrap();
    let out = replay(example(), ws.path())
        .args(["--json", "--now", "1700000000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // 28 assistant messages in the example: 28 calls, then the totals object.
    assert_eq!(lines.len(), 29);
    assert_eq!(lines[0]["call"], 1);
    let totals = lines.last().unwrap();
    assert_eq!(totals["calls"], 28);
    // 55 messages are live before the last call: snip fires on calls 26..=28 (over 50).
    assert!(totals["fired"]["snip_compact"].as_u64().unwrap() >= 1);
    assert!(totals["fired"]["micro_compact"].as_u64().unwrap() >= 1);
    assert_eq!(
        totals["fired"]["tool_result_budget"], 0,
        "the big batch is never followed by a call"
    );
    assert_eq!(
        totals["final_messages"].as_u64().unwrap() as usize,
        lines[27]["messages"].as_u64().unwrap() as usize + 2
    );

    let text = replay(example(), ws.path()).output().unwrap();
    assert!(text.status.success());
    let s = String::from_utf8(text.stdout).unwrap();
    assert!(
        s.lines()
            .any(|l| l.starts_with("call ") && l.contains("micro_compact")),
        "{s}"
    );
    assert!(
        s.lines()
            .last()
            .unwrap()
            .starts_with("28 model calls; fired: "),
        "{s}"
    );
}

#[test]
fn replay_reads_transcripts_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    std::fs::write(
        &t,
        "{\"role\": \"user\", \"content\": \"go\"}\n{\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"ok\"}]}\n",
    )
    .unwrap();
    let out = replay(&t, dir.path()).arg("--json").output().unwrap();
    assert!(out.status.success());
    let last: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["calls"], 1);
    assert_eq!(last["final_messages"], 2);
    std::fs::write(&t, "{\"role\": \"user\", \"content\": \"go\"}\nnot json\n").unwrap();
    let out = replay(&t, dir.path()).output().unwrap();
    // A line that is not a message is skipped and named, as in every format ctxlab reads
    // (one rule for transcripts: `session::load_transcript`, the workbench's view too).
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
    // A file with no message line at all is not a transcript.
    std::fs::write(&t, "not json\n").unwrap();
    let out = replay(&t, dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

/// A message array is replayed as it is read: a broken element stops the replay there
/// with the position a whole-file load would name, and no totals are printed.
#[test]
fn replay_of_an_array_stops_at_a_broken_element_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("broken.json");
    let turns: Vec<String> = (0..40)
        .map(|i| {
            format!(
                r#"{{"role": "user", "content": "turn {i}"}},
{{"role": "assistant", "content": [{{"type": "text", "text": "ok"}}]}}"#
            )
        })
        .collect();
    let text = format!("[{}]", turns.join(",\n")).replacen("turn 30\"", "turn 30", 1);
    std::fs::write(&session, &text).unwrap();
    let out = replay(&session, dir.path().join("ws"))
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // `ctxlab pipeline` reads the file whole; both name the same position.
    let whole = pipeline(&session, dir.path().join("ws2")).output().unwrap();
    let whole = String::from_utf8_lossy(&whole.stderr);
    let reason = whole.lines().next().unwrap();
    assert!(
        reason.contains("not valid JSON") && reason.contains(" line 6"),
        "{whole}"
    );
    assert_eq!(stderr.lines().next(), Some(reason));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("\"final_messages\""), "{stdout}");
    // The calls before the broken element were replayed: one record per call.
    assert_eq!(stdout.lines().count(), 30, "{stdout}");
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command as StdCommand, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("long.json");
    // 3,000 calls of `--json` output is far more than a pipe buffer holds.
    let messages: Vec<Value> = (0..3000)
        .flat_map(|i| {
            [
                serde_json::json!({"role": "user", "content": format!("turn {i}")}),
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}),
            ]
        })
        .collect();
    std::fs::write(&session, serde_json::to_string(&messages).unwrap()).unwrap();
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_ctxlab"))
        .arg("replay")
        .arg(&session)
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("{\"call\":1"), "{first}");
    // The reader is dropped here: the rest of the output hits a closed pipe.
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ctxlab replay --json` carries every report's reason; a session that ends before a call
/// (the example ends with a 226,000-char batch) says what that call would do, in a dry run.
#[test]
fn replay_carries_reasons_and_the_call_after_the_session() {
    let ws = tempfile::tempdir().unwrap();
    let out = replay(example(), ws.path())
        .args(["--json", "--now", "1700000000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reports: Vec<&Value> = lines
        .iter()
        .filter_map(|l| l["reports"].as_array())
        .flatten()
        .collect();
    assert!(!reports.is_empty());
    for r in &reports {
        assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    }
    let snip = reports
        .iter()
        .find(|r| r["stage"] == "snip_compact")
        .unwrap();
    assert!(
        snip["reason"]
            .as_str()
            .unwrap()
            .contains(" messages > 50 (head 3, kept "),
        "{snip}"
    );
    let totals = lines.last().unwrap();
    let next = &totals["next_call"];
    assert_eq!(next["call"], 29);
    let budget = next["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["stage"] == "tool_result_budget")
        .expect("the batch would be persisted before the next call");
    assert!(
        budget["reason"].as_str().unwrap().starts_with("batch "),
        "{budget}"
    );
    // Not counted, and not written: it is a dry run of a call that never happened.
    assert_eq!(totals["fired"]["tool_result_budget"], 0);
    assert!(!ws.path().join(".task_outputs").exists());

    let text = replay(example(), ws.path()).output().unwrap();
    let s = String::from_utf8(text.stdout).unwrap();
    assert!(
        s.lines().any(|l| l
            .starts_with("next call 29 (after the session's end, dry run): tool_result_budget")),
        "{s}"
    );
    assert!(
        s.lines()
            .last()
            .unwrap()
            .starts_with("28 model calls; fired: ")
    );
}
