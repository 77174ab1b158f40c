//! Integration tests of the tools through `run_tool`, the way the agent calls them: path
//! confinement, bash process-group handling, output caps, file edits and glob.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::process::{read_pid, wait_for_file, wait_until_dead};
use ctxlab::tools::{ToolLimits, ToolOutcome, Workspace, run_tool, tool_specs};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A workspace dir next to an `outside` dir, both in one temp dir, so escapes have a
/// concrete place to land that the test can inspect.
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: Workspace,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    fs::create_dir(&root).unwrap();
    fs::create_dir(&outside).unwrap();
    let ws = Workspace::new(&root).unwrap();
    let outside = outside.canonicalize().unwrap();
    Fixture {
        _tmp: tmp,
        ws,
        outside,
    }
}

impl Fixture {
    fn root(&self) -> &Path {
        self.ws.root()
    }

    async fn call(&self, name: &str, input: Value) -> (String, bool) {
        self.call_with(name, input, &ToolLimits::default()).await
    }

    async fn call_with(&self, name: &str, input: Value, limits: &ToolLimits) -> (String, bool) {
        let cancel = CancellationToken::new();
        match run_tool(&self.ws, name, &input, limits, &cancel).await {
            ToolOutcome::Output { content, is_error } => (content, is_error),
            other => panic!("expected output, got {other:?}"),
        }
    }

    async fn bash(&self, command: &str) -> (String, bool) {
        self.bash_with(command, &ToolLimits::default()).await
    }

    async fn bash_with(&self, command: &str, limits: &ToolLimits) -> (String, bool) {
        self.call_with("bash", json!({ "command": command }), limits)
            .await
    }
}

/// The default limits with bash's timeout at `ms` milliseconds.
fn bash_timeout_ms(ms: u64) -> ToolLimits {
    ToolLimits {
        bash_timeout: Duration::from_millis(ms),
        ..ToolLimits::default()
    }
}

fn assert_escape(result: &(String, bool), path: &str) {
    assert!(result.1, "should be an error: {result:?}");
    assert_eq!(result.0, format!("Path escapes the workspace: {path}"));
}

// ---------------------------------------------------------------- confinement

#[tokio::test]
async fn dotdot_escape_is_refused_and_nothing_is_written() {
    let f = fixture();
    let r = f
        .call(
            "write_file",
            json!({"path": "../outside/x.txt", "content": "pwned"}),
        )
        .await;
    assert_escape(&r, "../outside/x.txt");
    assert!(!f.outside.join("x.txt").exists());

    let r = f
        .call(
            "write_file",
            json!({"path": "a/../../y.txt", "content": "x"}),
        )
        .await;
    assert_escape(&r, "a/../../y.txt");
    assert!(!f.root().parent().unwrap().join("y.txt").exists());
    assert!(!f.root().join("a").exists(), "no dirs created on refusal");

    let r = f.call("read_file", json!({"path": "../outside"})).await;
    assert_escape(&r, "../outside");

    // `..` that stays inside is fine.
    let r = f
        .call(
            "write_file",
            json!({"path": "a/../in.txt", "content": "ok"}),
        )
        .await;
    assert!(!r.1, "{r:?}");
    assert_eq!(fs::read_to_string(f.root().join("in.txt")).unwrap(), "ok");
}

#[tokio::test]
async fn absolute_path_outside_is_refused_inside_is_allowed() {
    let f = fixture();
    let target = f.outside.join("abs.txt");
    let target_str = target.to_str().unwrap();
    let r = f
        .call("write_file", json!({"path": target_str, "content": "x"}))
        .await;
    assert_escape(&r, target_str);
    assert!(!target.exists());

    fs::write(&target, "secret").unwrap();
    let r = f.call("read_file", json!({"path": target_str})).await;
    assert_escape(&r, target_str);
    let r = f
        .call(
            "edit_file",
            json!({"path": target_str, "old": "secret", "new": "x"}),
        )
        .await;
    assert_escape(&r, target_str);
    assert_eq!(fs::read_to_string(&target).unwrap(), "secret");

    let inside = f.root().join("abs_in.txt");
    let r = f
        .call(
            "write_file",
            json!({"path": inside.to_str().unwrap(), "content": "ok"}),
        )
        .await;
    assert!(!r.1, "{r:?}");
    assert_eq!(fs::read_to_string(&inside).unwrap(), "ok");
}

#[tokio::test]
async fn symlinked_file_pointing_outside_is_refused() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    fs::write(&secret, "secret").unwrap();
    symlink(&secret, f.root().join("link.txt")).unwrap();

    assert_escape(
        &f.call("read_file", json!({"path": "link.txt"})).await,
        "link.txt",
    );
    assert_escape(
        &f.call("write_file", json!({"path": "link.txt", "content": "x"}))
            .await,
        "link.txt",
    );
    assert_escape(
        &f.call(
            "edit_file",
            json!({"path": "link.txt", "old": "secret", "new": "x"}),
        )
        .await,
        "link.txt",
    );
    assert_eq!(fs::read_to_string(&secret).unwrap(), "secret");
}

#[tokio::test]
async fn symlinked_dir_pointing_outside_is_refused_even_for_new_files() {
    let f = fixture();
    symlink(&f.outside, f.root().join("ldir")).unwrap();

    for path in ["ldir/new.txt", "ldir/sub/deeper/new.txt"] {
        let r = f
            .call("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert_escape(&r, path);
    }
    assert_eq!(
        fs::read_dir(&f.outside).unwrap().count(),
        0,
        "nothing written outside"
    );
    fs::write(f.outside.join("there.txt"), "x").unwrap();
    assert_escape(
        &f.call("read_file", json!({"path": "ldir/there.txt"})).await,
        "ldir/there.txt",
    );
}

#[tokio::test]
async fn dangling_symlink_to_outside_is_refused() {
    let f = fixture();
    let target = f.outside.join("not_yet.txt");
    symlink(&target, f.root().join("dangling")).unwrap();
    let r = f
        .call("write_file", json!({"path": "dangling", "content": "x"}))
        .await;
    assert_escape(&r, "dangling");
    assert!(!target.exists());
}

#[tokio::test]
async fn symlink_inside_the_workspace_is_followed() {
    let f = fixture();
    fs::create_dir(f.root().join("real")).unwrap();
    fs::write(f.root().join("real/a.txt"), "hello").unwrap();
    symlink(f.root().join("real"), f.root().join("alias")).unwrap();
    let r = f.call("read_file", json!({"path": "alias/a.txt"})).await;
    assert_eq!(r, ("hello".to_string(), false));
}

#[tokio::test]
async fn glob_pattern_leaving_the_root_is_refused() {
    let f = fixture();
    assert_escape(
        &f.call("glob", json!({"pattern": "../outside/*"})).await,
        "../outside/*",
    );
    assert_escape(
        &f.call("glob", json!({"pattern": "/etc/*"})).await,
        "/etc/*",
    );
}

// ---------------------------------------------------------------- bash: processes

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let f = fixture();
    let limits = bash_timeout_ms(300);
    let start = Instant::now();
    let (content, is_error) = f
        .bash_with("sleep 30 & echo $! > bg.pid; sleep 30", &limits)
        .await;
    assert!(is_error);
    assert_eq!(
        content,
        "Command timed out after 300 ms and was killed (with its whole process group)"
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let bg = read_pid(&f.root().join("bg.pid"));
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn timeout_kills_pipeline_members() {
    let f = fixture();
    let limits = bash_timeout_ms(300);
    let start = Instant::now();
    let (content, is_error) = f
        .bash_with("(echo $BASHPID > left.pid; exec sleep 1000) | cat", &limits)
        .await;
    assert!(is_error, "{content}");
    assert!(content.starts_with("Command timed out"), "{content}");
    assert!(start.elapsed() < Duration::from_secs(3));
    let left = read_pid(&f.root().join("left.pid"));
    assert!(
        wait_until_dead(left).await,
        "pipeline sleep {left} survived"
    );
}

#[tokio::test]
async fn cancel_kills_the_group_and_returns_quickly() {
    let f = fixture();
    let ws = f.ws.clone();
    let cancel = CancellationToken::new();
    let task = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            run_tool(
                &ws,
                "bash",
                &json!({"command": "sleep 30 & echo $! > bg.pid; sleep 30"}),
                &ToolLimits::default(),
                &cancel,
            )
            .await
        })
    };
    let pid_file = f.root().join("bg.pid");
    wait_for_file(&pid_file).await;
    let bg = read_pid(&pid_file);
    let start = Instant::now();
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("run_tool did not return promptly after cancel")
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(
        outcome,
        ToolOutcome::Output {
            content: "Cancelled by user".into(),
            is_error: true
        }
    );
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn cancelled_before_start_runs_nothing() {
    let f = fixture();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = run_tool(
        &f.ws,
        "bash",
        &json!({"command": "touch ran"}),
        &ToolLimits::default(),
        &cancel,
    )
    .await;
    assert_eq!(
        outcome,
        ToolOutcome::Output {
            content: "Cancelled by user".into(),
            is_error: true
        }
    );
    assert!(!f.root().join("ran").exists());
}

#[tokio::test]
async fn background_jobs_are_killed_when_the_command_finishes() {
    let f = fixture();
    let start = Instant::now();
    let r = f.bash("sleep 30 & echo $! > bg.pid; echo done").await;
    assert_eq!(r, ("done\n".to_string(), false));
    // Without the group kill, the background sleep would hold stdout open until the timeout.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let bg = read_pid(&f.root().join("bg.pid"));
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn bash_runs_in_the_workspace_root_with_empty_stdin() {
    let f = fixture();
    let r = f.bash("pwd").await;
    assert_eq!(r.0.trim_end(), f.root().to_str().unwrap());
    // `cat` would block forever on an inherited stdin.
    let r = f.bash("cat").await;
    assert_eq!(r, ("(no output)".to_string(), false));
}

// ---------------------------------------------------------------- bash: deny-list

#[tokio::test]
async fn deny_list_refuses_without_running() {
    let f = fixture();
    for command in [
        "sudo touch ran",
        "touch ran; shutdown now",
        "touch ran && reboot",
        "mkfs.ext4 img; touch ran",
        "dd if=/dev/zero of=img count=1; touch ran",
        "touch ran; rm -rf /",
        "touch ran; rm -fr /",
        "touch ran; rm -rf /*",
    ] {
        let (content, is_error) = f.bash(command).await;
        assert!(is_error, "{command}");
        assert!(
            content.starts_with("Permission denied: "),
            "{command}: {content}"
        );
        assert!(!content.contains('\n'));
        assert!(!f.root().join("ran").exists(), "{command} ran");
    }
}

#[tokio::test]
async fn deny_list_allows_look_alikes() {
    let f = fixture();
    let r = f
        .bash("echo solved > sudoku.txt && cat sudoku.txt && mkdir -p d && rm -rf d && echo ok")
        .await;
    assert_eq!(r, ("solved\nok\n".to_string(), false));
    assert!(f.root().join("sudoku.txt").exists());
}

// ---------------------------------------------------------------- bash: output

#[tokio::test]
async fn huge_output_is_capped_exactly_and_quickly() {
    let f = fixture();
    let cap = ToolLimits::default().output_cap_chars;
    let start = Instant::now();
    let (content, is_error) = f.bash("seq 1 2000000").await;
    let elapsed = start.elapsed();
    assert!(!is_error);
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    let full: String = (1..=2_000_000).map(|i| format!("{i}\n")).collect();
    let kept: String = full.chars().take(cap).collect();
    let note = format!("\n[output truncated: {} chars cut]", full.len() - cap);
    assert_eq!(content.chars().count(), cap + note.chars().count());
    assert_eq!(content, format!("{kept}{note}"));
}

#[tokio::test]
async fn small_cap_counts_stdout_and_stderr() {
    let f = fixture();
    let limits = ToolLimits {
        output_cap_chars: 5,
        ..ToolLimits::default()
    };
    let (content, is_error) = f
        .bash_with("printf 'abcdefgh'; printf 'XYZ' >&2; exit 4", &limits)
        .await;
    assert!(is_error);
    // stdout (8) + separator newline (1) + stderr (3) = 12 chars, 5 kept.
    assert_eq!(
        content,
        "abcde\n[output truncated: 7 chars cut]\n[exit code: 4]"
    );
}

#[tokio::test]
async fn stderr_is_captured_after_stdout() {
    let f = fixture();
    assert_eq!(
        f.bash("echo out; echo err >&2").await,
        ("out\nerr\n".to_string(), false)
    );
    assert_eq!(
        f.bash("printf out; printf err >&2").await,
        ("out\nerr".to_string(), false)
    );
    assert_eq!(
        f.bash("echo only-err >&2").await,
        ("only-err\n".to_string(), false)
    );
}

#[tokio::test]
async fn nonzero_exit_code_is_reported() {
    let f = fixture();
    assert_eq!(
        f.bash("echo hi; exit 3").await,
        ("hi\n[exit code: 3]".to_string(), true)
    );
    assert_eq!(
        f.bash("printf hi; exit 1").await,
        ("hi\n[exit code: 1]".to_string(), true)
    );
    assert_eq!(f.bash("exit 2").await, ("[exit code: 2]".to_string(), true));
    assert_eq!(
        f.bash("kill -9 $$").await,
        ("[killed by signal 9]".to_string(), true)
    );
}

#[tokio::test]
async fn invalid_utf8_is_replaced() {
    let f = fixture();
    assert_eq!(
        f.bash(r"printf 'a\377b\303'").await,
        ("a\u{FFFD}b\u{FFFD}".to_string(), false)
    );
}

// ---------------------------------------------------------------- file tools

#[tokio::test]
async fn read_file_whole_limited_and_capped() {
    let f = fixture();
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    fs::write(f.root().join("ten.txt"), &lines).unwrap();

    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt"})).await,
        (lines.clone(), false)
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 3}))
            .await,
        (
            "line 1\nline 2\nline 3\n[7 more lines not shown]".to_string(),
            false
        )
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 9}))
            .await,
        (
            format!("{}[1 more line not shown]", &lines[..lines.len() - 8]),
            false
        )
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 10}))
            .await,
        (lines.clone(), false)
    );

    fs::write(f.root().join("open.txt"), "a\nb\nc").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "open.txt", "limit": 1}))
            .await,
        ("a\n[2 more lines not shown]".to_string(), false)
    );

    let limits = ToolLimits {
        output_cap_chars: 4,
        ..ToolLimits::default()
    };
    assert_eq!(
        f.call_with("read_file", json!({"path": "ten.txt"}), &limits)
            .await,
        (
            format!("line\n[output truncated: {} chars cut]", lines.len() - 4),
            false
        )
    );
}

#[tokio::test]
async fn read_file_replaces_invalid_utf8_and_reports_missing_files() {
    let f = fixture();
    fs::write(f.root().join("bin"), b"x\xffy").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "bin"})).await,
        ("x\u{FFFD}y".to_string(), false)
    );
    let (content, is_error) = f.call("read_file", json!({"path": "nope.txt"})).await;
    assert!(is_error);
    assert!(content.starts_with("Cannot read nope.txt: "), "{content}");
    assert!(!content.contains('\n'));
}

#[tokio::test]
async fn write_file_creates_parents_and_reports_bytes() {
    let f = fixture();
    let r = f
        .call(
            "write_file",
            json!({"path": "a/b/c.txt", "content": "héllo"}),
        )
        .await;
    assert_eq!(r, ("Wrote 6 bytes to a/b/c.txt".to_string(), false));
    assert_eq!(
        fs::read_to_string(f.root().join("a/b/c.txt")).unwrap(),
        "héllo"
    );
    // Overwrite leaves no temp files behind.
    f.call("write_file", json!({"path": "a/b/c.txt", "content": "new"}))
        .await;
    let names: Vec<_> = fs::read_dir(f.root().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["c.txt"]);
    assert_eq!(
        fs::read_to_string(f.root().join("a/b/c.txt")).unwrap(),
        "new"
    );
}

#[tokio::test]
async fn edit_file_once_missing_and_multiple() {
    let f = fixture();
    let path = f.root().join("e.txt");
    fs::write(&path, "alpha beta beta\n").unwrap();

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "alpha", "new": "gamma"}),
        )
        .await;
    assert!(!is_error, "{content}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "gamma beta beta\n");

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "delta", "new": "x"}),
        )
        .await;
    assert!(is_error);
    assert_eq!(content, "Text to replace was not found in e.txt");

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "beta", "new": "x"}),
        )
        .await;
    assert!(is_error);
    assert!(content.contains("occurs 2 times"), "{content}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "gamma beta beta\n");
}

// ---------------------------------------------------------------- glob

fn touch(root: &Path, rel: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "").unwrap();
}

#[tokio::test]
async fn glob_matches_sorts_and_skips() {
    let f = fixture();
    for rel in [
        "src/main.rs",
        "src/a/b.rs",
        "src/a/c.txt",
        "x.log",
        "logs/y.log",
        "target/debug/z.rs",
        ".git/hooks/h.rs",
        ".task_outputs/t.rs",
        ".transcripts/u.rs",
        "B.rs",
        "a1.rs",
        "a22.rs",
    ] {
        touch(f.root(), rel);
    }
    let glob = |pattern: &'static str| f.call("glob", json!({ "pattern": pattern }));
    assert_eq!(
        glob("src/**/*.rs").await,
        ("src/a/b.rs\nsrc/main.rs".to_string(), false)
    );
    assert_eq!(glob("*.log").await, ("x.log".to_string(), false));
    assert_eq!(
        glob("**/*.log").await,
        ("logs/y.log\nx.log".to_string(), false)
    );
    assert_eq!(
        glob("**/*.rs").await,
        (
            "B.rs\na1.rs\na22.rs\nsrc/a/b.rs\nsrc/main.rs".to_string(),
            false
        )
    );
    assert_eq!(glob("a?.rs").await, ("a1.rs".to_string(), false));
    assert_eq!(
        glob("*.md").await,
        ("No files match *.md".to_string(), false)
    );
}

#[tokio::test]
async fn glob_result_is_capped_with_a_note() {
    let f = fixture();
    for i in 0..15 {
        touch(f.root(), &format!("f{i:02}.txt"));
    }
    let limits = ToolLimits {
        glob_cap: 10,
        ..ToolLimits::default()
    };
    let (content, is_error) = f
        .call_with("glob", json!({"pattern": "*.txt"}), &limits)
        .await;
    assert!(!is_error);
    let expected: Vec<String> = (0..10).map(|i| format!("f{i:02}.txt")).collect();
    assert_eq!(
        content,
        format!(
            "{}\n[5 more matches not shown; narrow the pattern]",
            expected.join("\n")
        )
    );
}

// ---------------------------------------------------------------- dispatch

#[tokio::test]
async fn compact_requests_compaction_and_runs_nothing() {
    let f = fixture();
    let cancel = CancellationToken::new();
    let limits = ToolLimits::default();
    assert_eq!(
        run_tool(
            &f.ws,
            "compact",
            &json!({"focus": "the parser"}),
            &limits,
            &cancel
        )
        .await,
        ToolOutcome::CompactRequested {
            focus: Some("the parser".into())
        }
    );
    assert_eq!(
        run_tool(&f.ws, "compact", &json!({}), &limits, &cancel).await,
        ToolOutcome::CompactRequested { focus: None }
    );
}

#[tokio::test]
async fn bad_calls_become_one_line_errors() {
    let f = fixture();
    let cases = [
        ("nope", json!({}), "Unknown tool: nope"),
        (
            "bash",
            json!({}),
            "Invalid input: missing required field `command`",
        ),
        (
            "bash",
            json!({"command": 5}),
            "Invalid input: `command` must be a string",
        ),
        (
            "read_file",
            json!("x"),
            "Invalid input: the tool input must be a JSON object",
        ),
        (
            "write_file",
            json!({"path": "x"}),
            "Invalid input: missing required field `content`",
        ),
        (
            "read_file",
            json!({"path": "x", "limit": -1}),
            "Invalid input: `limit` must be a non-negative integer",
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(
            f.call(name, input).await,
            (expected.to_string(), true),
            "{name}"
        );
    }
}

#[test]
fn tool_specs_are_complete() {
    let specs = tool_specs();
    assert_eq!(specs.len(), 6);
    for spec in &specs {
        assert!(spec.description.len() > 40, "{}", spec.name);
        assert_eq!(spec.input_schema["type"], "object");
    }
}
