//! The JSON follower against a writer in timed steps.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::Value;

use super::fixtures::*;

/// How long a test waits for one event before failing.
const EVENT_WAIT: Duration = Duration::from_secs(10);
/// The pause between two writes: long enough that each is read on its own.
const STEP: Duration = Duration::from_millis(150);

pub(super) struct Watch {
    child: Child,
    lines: Receiver<Value>,
    pub(super) seen: Vec<Value>,
}

impl Watch {
    pub(super) fn start(args: &[&str], cwd: &Path, env: &[(&str, &Path)]) -> Watch {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ctxlab"));
        cmd.arg("watch")
            .args(args)
            .current_dir(cwd)
            .env("HOME", "/nonexistent-ctxlab-home")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let (tx, rx) = channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not one JSON object per line: {e}: {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Watch {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits for the next event that `want` accepts; the events before it are kept.
    pub(super) fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        loop {
            let v = self.lines.recv_timeout(EVENT_WAIT).unwrap_or_else(|_| {
                panic!("no {what} within {EVENT_WAIT:?}; saw {:#?}", self.seen)
            });
            self.seen.push(v.clone());
            if want(&v) {
                return v;
            }
        }
    }

    /// What arrived without being waited for, within `wait`.
    pub(super) fn drain(&mut self, wait: Duration) {
        while let Ok(v) = self.lines.recv_timeout(wait) {
            self.seen.push(v);
        }
    }

    pub(super) fn interrupt(mut self) -> Vec<Value> {
        let pid = self.child.id() as i32;
        // SAFETY: a plain kill(2) on our own child.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "Ctrl-C ends a follow with 0");
        self.drain(Duration::from_millis(50));
        self.seen
    }
}

pub(super) fn event(v: &Value) -> &str {
    v["event"].as_str().unwrap_or("")
}

pub(super) fn is(name: &'static str) -> impl Fn(&Value) -> bool {
    move |v| event(v) == name
}

pub(super) fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.flush().unwrap();
}

pub(super) fn line(path: &Path, text: &str) {
    append(path, &format!("{text}\n"));
    std::thread::sleep(STEP);
}

/// The events that name a call, a compaction or a file change, in arrival order, as
/// short labels: what a test compares whole.
fn labels(seen: &[Value]) -> Vec<String> {
    seen.iter()
        .filter_map(|v| match event(v) {
            "call" => Some(format!(
                "call {} {}{}",
                v["line"],
                v["context_tokens"],
                if v["summary_call"] == true {
                    " summary"
                } else {
                    ""
                }
            )),
            "compaction" | "compaction_update" => Some(format!(
                "{} {} {} {}",
                event(v),
                v["kind"].as_str().unwrap(),
                v["tokens_before"],
                v["summary"].as_str().unwrap()
            )),
            "file" => Some(format!("file {}", v["change"].as_str().unwrap())),
            "summary" | "caught_up" => Some(format!("{} {}", event(v), v["calls"])),
            _ => None,
        })
        .collect()
}

fn project(dir: &Path) -> PathBuf {
    let p = dir.join("work").join("my.app");
    std::fs::create_dir_all(&p).unwrap();
    p.canonicalize().unwrap()
}

fn claude_folder_name(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[test]
fn a_claude_code_session_is_followed_line_by_line_through_a_compaction_a_truncation_and_a_new_file()
{
    let dir = tempfile::tempdir().unwrap();
    let cwd = project(dir.path());
    let config = dir.path().join("claude");
    let folder = config.join("projects").join(claude_folder_name(&cwd));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("s1.jsonl");
    // What is already there: one exchange, folded into the summary.
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{}\n",
            claude_user(1, "Fix it"),
            claude_call(2, 1000),
            claude_result(2)
        ),
    )
    .unwrap();
    let codex = dir.path().join("codex");
    let mut w = Watch::start(
        &["--json", "--poll-ms", "200"],
        &cwd,
        &[("CLAUDE_CONFIG_DIR", &config), ("CODEX_HOME", &codex)],
    );
    let summary = w.until("the summary", is("summary"));
    assert_eq!(summary["calls"], 1);
    assert_eq!(summary["format"], "claude-code");
    // A call, its half-written result, the rest of the line.
    line(&file, &claude_call(4, 5000));
    w.until("the call of line 4", is("call"));
    let result = claude_result(4);
    let (head, tail) = result.split_at(result.len() / 2);
    append(&file, head);
    std::thread::sleep(STEP * 2);
    w.drain(Duration::from_millis(100));
    assert!(
        !w.seen.iter().any(|v| event(v) == "warning"),
        "half a line is never read: {:#?}",
        w.seen
    );
    append(&file, &format!("{tail}\n"));
    line(&file, &claude_call(6, 9000));
    w.until("the call of line 6", is("call"));
    // A compaction: its boundary, then its summary line.
    line(&file, &claude_boundary(167_012));
    w.until("the compaction", is("compaction"));
    line(&file, &claude_summary());
    w.until("the compaction's summary", is("compaction_update"));
    line(&file, &claude_micro(&["t2", "t4"]));
    let micro = w.until("the micro compaction", is("compaction"));
    assert_eq!(micro["cleared_tool_ids"], serde_json::json!(["t2", "t4"]));
    line(&file, &claude_call(10, 20000));
    let call = w.until("the call after the compaction", is("call"));
    // Claude Code's own threshold (window less 33,000): the compaction at 167,012 is
    // above it, so it confirms the rule rather than moving it.
    assert_eq!(
        call["headroom"]["limit"], "auto-compacts at 167,000",
        "{call}"
    );
    assert!(
        call["headroom"]["limit_source"]
            .as_str()
            .is_some_and(|s| s.starts_with("Claude Code's rule")),
        "{call}"
    );
    // Truncated and written again: read from the start.
    std::fs::write(&file, format!("{}\n", claude_call(1, 300))).unwrap();
    w.until("the truncation", is("file"));
    w.until("the call of the rewritten file", is("call"));
    // The agent goes on in a new file of the project (after /clear).
    std::thread::sleep(STEP);
    let second = folder.join("s2.jsonl");
    line(&second, &claude_user(1, "Next task"));
    w.until("the switch", |v| {
        event(v) == "file" && v["change"] == "switched"
    });
    line(&second, &claude_call(2, 700));
    w.until("the call in the new file", is("call"));
    let seen = w.interrupt();
    assert_eq!(
        labels(&seen),
        [
            "summary 1",
            "call 4 5110",
            "call 6 9110",
            "compaction full 167012 not_recorded",
            "compaction_update full 167012 text",
            "compaction micro 9000 none",
            "call 10 20110",
            "file truncated",
            "call 1 410",
            "file switched",
            "caught_up 0",
            "call 2 810",
        ],
        "{seen:#?}"
    );
    // Each tool call once, in order.
    let tools: Vec<&str> = seen
        .iter()
        .filter(|v| event(v) == "tool_call")
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["t4", "t6", "t10", "t1", "t2"]);
}

#[test]
fn a_codex_rollout_is_followed_from_its_start_and_a_new_rollout_of_the_same_folder_taken_up() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = project(dir.path());
    let cwd_text = cwd.to_string_lossy().into_owned();
    let home = dir.path().join("codex");
    let day = home.join("sessions").join("2025").join("10").join("01");
    std::fs::create_dir_all(&day).unwrap();
    // Another folder's rollout, newer: never the one followed.
    let file = day.join("rollout-2025-10-01T10-00-00-a.jsonl");
    std::fs::write(&file, format!("{}\n", codex_meta(&cwd_text, "a"))).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(
        day.join("rollout-2025-10-01T09-00-00-other.jsonl"),
        format!("{}\n", codex_meta("/somewhere/else", "o")),
    )
    .unwrap();
    let claude = dir.path().join("claude");
    let mut w = Watch::start(
        &["--json", "--from-start", "--poll-ms", "200"],
        &cwd,
        &[("CLAUDE_CONFIG_DIR", &claude), ("CODEX_HOME", &home)],
    );
    w.until("caught up", is("caught_up"));
    line(&file, &codex_user("Fix it"));
    for l in codex_tool(1) {
        line(&file, &l);
    }
    line(&file, &codex_tokens(1200, 1200));
    w.until("the first call", is("call"));
    let [compacted, event_line] = codex_compacted();
    line(&file, &compacted);
    w.until("the compaction", is("compaction"));
    line(&file, &event_line);
    line(&file, &codex_tokens(2400, 1150));
    let summary_call = w.until("the compaction's own call", is("call"));
    assert_eq!(summary_call["summary_call"], true);
    for l in codex_tool(2) {
        line(&file, &l);
    }
    line(&file, &codex_tokens(2800, 400));
    let after = w.until("the call after", is("call"));
    assert_eq!(after["summary_call"], false);
    // A new rollout of the same folder: followed from its start.
    let next = day.join("rollout-2025-10-01T11-00-00-b.jsonl");
    line(&next, &codex_meta(&cwd_text, "b"));
    w.until("the switch", |v| {
        event(v) == "file" && v["change"] == "switched"
    });
    line(&next, &codex_user("More"));
    line(&next, &codex_tokens(500, 500));
    w.until("the new rollout's call", is("call"));
    let seen = w.interrupt();
    assert_eq!(
        labels(&seen),
        [
            "caught_up 0",
            "call 5 1200",
            "compaction full 1200 text",
            "call 8 1150 summary",
            // The whole-file reader's fill: the first call after it, its own summary call.
            // The call that line 11 wrote comes before what it adds to the compaction.
            "call 11 400",
            "compaction_update full 1200 text",
            "file switched",
            "caught_up 0",
            "call 3 500",
        ],
        "{seen:#?}"
    );
}

/// Issue 38: `watch` exited (2) when the project had no session yet, so it could not be
/// started before the agent. It waits for the first, says so, and Ctrl-C ends the wait.
#[test]
fn with_no_session_yet_watch_waits_for_the_first_and_ctrl_c_ends_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = project(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(["watch", "--json", "--poll-ms", "200"])
        .current_dir(&cwd)
        .env("HOME", dir.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        child.try_wait().unwrap().is_none(),
        "watch ended with no session yet"
    );
    // SAFETY: a plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session of"), "{err}");
    assert!(
        err.contains("waiting for the first session of this folder (Ctrl-C quits)"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn watch_started_before_the_agent_follows_the_projects_first_session() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = project(dir.path());
    let config = dir.path().join("claude");
    let codex = dir.path().join("codex");
    let mut w = Watch::start(
        &["--json", "--poll-ms", "200"],
        &cwd,
        &[("CLAUDE_CONFIG_DIR", &config), ("CODEX_HOME", &codex)],
    );
    w.drain(Duration::from_millis(600));
    assert!(w.seen.is_empty(), "{:#?}", w.seen);
    // The agent starts: its project folder and first session appear.
    let folder = config.join("projects").join(claude_folder_name(&cwd));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("s1.jsonl"),
        format!("{}\n", claude_user(1, "hi")),
    )
    .unwrap();
    w.until("the summary of the first session", is("summary"));
    line(&folder.join("s1.jsonl"), &claude_call(2, 10));
    w.until("its first call", is("call"));
    w.interrupt();
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // `| head -1`: the reader goes away after the first object.
    let file = dir.path().join("s.jsonl");
    std::fs::write(
        &file,
        format!("{}\n{}\n", claude_user(1, "hi"), claude_call(2, 10)),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(["watch", "--json"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"summary\""), "{first}");
    // The pipe is closed here (the reader dropped).
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        !err.contains("error") && !err.contains("Broken pipe"),
        "{err}"
    );
}

#[test]
fn a_file_followed_while_empty_says_its_format_once_its_first_lines_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, "").unwrap();
    let mut w = Watch::start(
        &[file.to_str().unwrap(), "--json", "--poll-ms", "50"],
        dir.path(),
        &[],
    );
    let summary = w.until("the summary", is("summary"));
    assert_eq!(summary["format"], Value::Null, "{summary}");
    line(&file, &claude_user(1, "hi"));
    line(&file, &claude_call(2, 10));
    let told = w.until("the format", is("recognised"));
    assert_eq!(told["format"], "claude-code", "{told}");
    w.until("the call", is("call"));
    let seen = w.interrupt();
    let times = seen.iter().filter(|v| event(v) == "recognised").count();
    assert_eq!(times, 1, "said once: {seen:#?}");
}
