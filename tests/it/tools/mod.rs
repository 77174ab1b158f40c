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

mod bash_deny_list;
#[cfg(target_os = "linux")]
mod bash_escapees;
mod bash_output;
mod bash_processes;
mod confinement;
mod dispatch;
mod file_tools;
mod glob;

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
