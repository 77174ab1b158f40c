//! Item 4: special files never hang anything. A FIFO or a folder at a result's name makes
//! the store take the next free name (without opening it); `read_file`, `write_file` and
//! `edit_file` on a FIFO answer with an error at once; `ctxlab pipeline` with a FIFO where a
//! result would go finishes; and tools honour a cancel promptly.

use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

use ctxlab::store::{Store, WriteStatus};
use ctxlab::tools::{ToolLimits, ToolOutcome, Workspace, run_tool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::common::cli::example;
use crate::common::scratch::Scratch;

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string; mkfifo only creates the node.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

/// Runs `f` on a thread and fails if it takes longer than `limit` (a hang would otherwise
/// block the whole suite).
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

#[test]
fn a_fifo_or_a_folder_at_a_result_name_means_the_next_free_name() {
    let s = Scratch::new();
    let results = s.ws().join(".task_outputs/tool-results");
    std::fs::create_dir_all(&results).unwrap();
    mkfifo(&results.join("t1.txt"));
    std::fs::create_dir(results.join("t2.txt")).unwrap();
    let transcripts = s.ws().join(".transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    mkfifo(&transcripts.join("transcript_1700000000.jsonl"));
    let ws = s.ws();
    let (a, b, t) = within(Duration::from_secs(10), "the store", move || {
        let store = Store::new(&ws);
        (
            store.persist_tool_result(Some("t1"), "one").unwrap(),
            store.persist_tool_result(Some("t2"), "two").unwrap(),
            store.write_transcript(1_700_000_000, "{}\n").unwrap(),
        )
    });
    assert_eq!(a.path, ".task_outputs/tool-results/t1-2.txt");
    assert_eq!(a.status, WriteStatus::Created);
    assert_eq!(b.path, ".task_outputs/tool-results/t2-2.txt");
    assert_eq!(t.path, ".transcripts/transcript_1700000000-2.jsonl");
    assert_eq!(
        std::fs::read_to_string(results.join("t1-2.txt")).unwrap(),
        "one"
    );
    // The special entries are untouched.
    assert!(
        std::fs::symlink_metadata(results.join("t1.txt"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(results.join("t2.txt").is_dir());
}

use std::os::unix::fs::FileTypeExt;

#[test]
fn ctxlab_pipeline_with_a_fifo_at_a_result_name_finishes() {
    let s = Scratch::new();
    // Where the example's large result is persisted first (ctxlab pipeline names it after
    // its tool id).
    let reference = Scratch::new();
    let out = reference
        .pipeline_on_example(reference.ws())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = v["stages"]["budget"]["files_written"][0]["path"]
        .as_str()
        .expect("the example persists a result")
        .to_string();
    std::fs::create_dir_all(s.ws().join(".task_outputs/tool-results")).unwrap();
    mkfifo(&s.ws().join(&first));
    let mut cmd = s.ctxlab();
    cmd.args(["pipeline", "--input"])
        .arg(example())
        .arg("--workspace")
        .arg(s.ws());
    let out = within(Duration::from_secs(60), "ctxlab pipeline", move || {
        cmd.output().unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = v["stages"]["budget"]["files_written"][0]["path"]
        .as_str()
        .unwrap();
    assert_eq!(got, first.replace(".txt", "-2.txt"));
}

async fn tool(ws: &Workspace, name: &str, input: serde_json::Value) -> (String, bool) {
    let cancel = CancellationToken::new();
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        run_tool(ws, name, &input, &ToolLimits::default(), &cancel),
    )
    .await
    .unwrap_or_else(|_| panic!("{name} on a FIFO hung"));
    match outcome {
        ToolOutcome::Output { content, is_error } => (content, is_error),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_on_a_fifo_answer_with_an_error_at_once() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    mkfifo(&s.ws().join("pipe"));
    let ws = Workspace::new(s.ws()).unwrap();
    for (name, input) in [
        ("read_file", json!({"path": "pipe"})),
        ("edit_file", json!({"path": "pipe", "old": "a", "new": "b"})),
        ("write_file", json!({"path": "pipe", "content": "x"})),
    ] {
        let (text, is_error) = tool(&ws, name, input).await;
        assert!(is_error, "{name}: {text}");
        assert!(text.contains("not a regular file"), "{name}: {text}");
    }
    // The FIFO is still a FIFO: write_file did not replace it.
    let meta = std::fs::symlink_metadata(s.ws().join("pipe")).unwrap();
    assert!(meta.file_type().is_fifo());
}

/// A cancel stops a tool promptly even while it works on something long (`bash`); read_file
/// on a 4 GB sparse file has nothing long left to stop: it reads only what it returns (issue
/// 19, section 6) and answers before the cancel comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_honour_a_cancel_promptly() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let big = std::fs::File::create(s.ws().join("big.bin")).unwrap();
    big.set_len(4 << 30).unwrap();
    let ws = Workspace::new(s.ws()).unwrap();
    let started = Instant::now();
    let read = run_tool(
        &ws,
        "read_file",
        &json!({"path": "big.bin"}),
        &ToolLimits::default(),
        &CancellationToken::new(),
    )
    .await;
    let ToolOutcome::Output { content, is_error } = read else {
        panic!("read_file: {read:?}")
    };
    assert!(!is_error);
    assert!(
        content.ends_with("the file is 4294967296 bytes; the rest was not read]"),
        "{}",
        &content[content.len().saturating_sub(200)..]
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "read_file: {:?}",
        started.elapsed()
    );
    for (name, input) in [("bash", json!({"command": "sleep 30"}))] {
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c.cancel();
        });
        let started = Instant::now();
        let outcome = tokio::time::timeout(
            Duration::from_secs(10),
            run_tool(&ws, name, &input, &ToolLimits::default(), &cancel),
        )
        .await
        .unwrap_or_else(|_| panic!("{name} ignored the cancel"));
        assert_eq!(
            outcome,
            ToolOutcome::Output {
                content: ctxlab::tools::CANCELLED_MESSAGE.into(),
                is_error: true
            },
            "{name}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: {:?}",
            started.elapsed()
        );
    }
}
