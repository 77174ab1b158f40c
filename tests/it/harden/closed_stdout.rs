//! Item 6: a closed stdout. `ctxlab run ... | head -1` exits promptly once nobody reads,
//! cancels the agent and kills its tools, even while a tool runs and nothing is being
//! written; `ctxlab pipeline ... | head -c 300` exits quietly instead of panicking.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::cli::example;
use crate::common::process::{process_gone, wait_for_pid, wait_until};
use crate::common::scratch::{Scratch, binary};
use crate::common::stub_server::{bash_once, start};

#[test]
fn ctxlab_run_exits_when_its_reader_goes_away_and_kills_the_tool() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let stub = start(bash_once("sleep 300 & echo $! > sleep.pid; wait"));
    let mut child = s
        .ctxlab_anthropic(&stub.url, "sk-ant-stub-closed-stdout")
        .args(["run", "--workspace"])
        .arg(s.ws())
        .arg("start the tool")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("ctxlab: "), "{first}");
    // The tool runs and nothing more is written: only the closed pipe says to stop.
    let sleep = wait_for_pid(&s.ws().join("sleep.pid"));
    drop(stdout);
    let closed_at = Instant::now();
    let mut status = None;
    wait_until(Duration::from_secs(10), "ctxlab run exits", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert!(
        closed_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        closed_at.elapsed()
    );
    assert_eq!(
        status.unwrap().code(),
        Some(0),
        "a reader that had enough is no failure"
    );
    wait_until(Duration::from_secs(5), "the tool dies", || {
        process_gone(sleep)
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn ctxlab_pipeline_into_a_closed_pipe_exits_quietly() {
    let s = Scratch::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = s
        .pipeline_on_example(s.ws())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "not quiet: {stderr}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn ctxlab_pipeline_piped_into_head_exits_quietly() {
    let s = Scratch::new();
    let script = format!(
        "set -o pipefail; '{}' pipeline --input '{}' --workspace '{}' 2> err.txt | head -c 300 > head.txt",
        binary().display(),
        example().display(),
        s.ws().display()
    );
    let status = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(s.path())
        .status()
        .unwrap();
    let err = std::fs::read_to_string(s.path().join("err.txt")).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(s.path().join("head.txt")).unwrap().len(), 300);
}
