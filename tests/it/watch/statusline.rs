//! `ctxlab statusline` as Claude Code runs it: JSON on stdin, one short line out, exit 0.

use std::io::Write;
use std::process::{Command, Stdio};

use super::fixtures::*;

/// `ctxlab statusline` with its index in `data` and no settings of the person running the
/// tests (HOME is `data` too), stdin and stdout piped.
fn spawn_statusline(data: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .arg("statusline")
        .env("CTXLAB_DATA_DIR", data)
        .env("HOME", data)
        .env_remove("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
        .env_remove("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
        .env_remove("DISABLE_AUTO_COMPACT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn statusline(input: &str) -> (Option<i32>, String) {
    let data = tempfile::tempdir().unwrap();
    let mut child = spawn_statusline(data.path());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_status_line_gives_context_window_percent_compactions_and_headroom() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let mut text = String::new();
    for l in [
        claude_user(1, "Fix it"),
        claude_call(2, 150_000),
        claude_result(2),
        claude_boundary(167_012),
        claude_summary(),
        claude_user(3, "go on"),
        claude_call(4, 84_000),
    ] {
        text.push_str(&l);
        text.push('\n');
    }
    std::fs::write(&file, &text).unwrap();
    let input = serde_json::json!({
        "transcript_path": file,
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "cwd": "/p",
        "context_window": {"context_window_size": 200000},
    });
    let (code, out) = statusline(&input.to_string());
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "Sonnet 4.5 · ctx 84,110/200,000 (42%) · 1 compaction · 82,890 to go (auto-compacts at 167,000)\n"
    );
    // Without the window in the input: the table's, for the model id.
    let input = serde_json::json!({"transcript_path": file, "model": {"id": "claude-opus-4-1"}});
    let (_, out) = statusline(&input.to_string());
    assert!(out.contains("ctx 84,110/200,000 (42%)"), "{out}");
}

#[test]
fn a_long_transcript_counts_every_compaction_of_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let mut text = String::new();
    text.push_str(&claude_boundary(100_000));
    text.push('\n');
    // Far more than the first read from the end.
    let filler = claude_user(9, &"x".repeat(1000));
    while text.len() < 2 << 20 {
        text.push_str(&filler);
        text.push('\n');
    }
    text.push_str(&claude_call(2, 5000));
    text.push('\n');
    std::fs::write(&file, &text).unwrap();
    let input = serde_json::json!({"transcript_path": file});
    let (code, out) = statusline(&input.to_string());
    assert_eq!(code, Some(0));
    // No window in the input: the table's for the model the calls name. The compaction 2 MB
    // before the end is counted (the old status line read the last 256 KB and said "no
    // compaction in the last 256 KB").
    assert_eq!(
        out,
        "ctx 5,110/200,000 (2%) · 1 compaction · 94,890 to go (auto-compacts at 100,000)\n"
    );
}

#[test]
fn bad_or_missing_input_is_one_line_and_exit_0() {
    for input in ["", "{"] {
        let (code, out) = statusline(input);
        assert_eq!(code, Some(0), "{input}");
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.starts_with("ctxlab: no status"), "{out}");
    }
    // Claude Code names the transcript before its first line is written.
    let (code, out) = statusline(r#"{"transcript_path": "/nonexistent/x.jsonl"}"#);
    assert_eq!((code, out.as_str()), (Some(0), "new session\n"));
}

#[test]
fn a_stdin_that_never_closes_does_not_hold_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, format!("{}\n", claude_call(2, 5000))).unwrap();
    let data = tempfile::tempdir().unwrap();
    // The whole JSON, stdin left open: the line comes without waiting for EOF.
    let mut child = spawn_statusline(data.path());
    let mut stdin = child.stdin.take().unwrap();
    let input = serde_json::json!({"transcript_path": file}).to_string();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ctx 5,110/200,000 (2%) · no compaction · 161,890 to go (auto-compacts at 167,000)\n"
    );
    // Half a JSON object and silence: given up at the deadline, still one line and exit 0.
    let mut child = spawn_statusline(data.path());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"transcript_path\": ").unwrap();
    stdin.flush().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ctxlab: no status (stdin gave no complete status JSON within 2 s)\n"
    );
}
