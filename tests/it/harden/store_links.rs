//! Item 3: the store never writes outside the workspace. `.task_outputs`,
//! `.task_outputs/tool-results` or `.transcripts` as a symlink to a folder outside (a cloned
//! repository can commit one) is refused with an error naming the link, in the store itself,
//! in a dry run, in the agent, in `ctxlab pipeline` and in `ctxlab replay`; nothing lands
//! outside.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ctxlab::agent::{AgentEvent, AgentSetup, ErrorKind, UserCommand, spawn};
use ctxlab::compact::PipelineConfig;
use ctxlab::store::Store;
use ctxlab::tools::Workspace;

use crate::common::agent::until_done;
use crate::common::cli::example;
use crate::common::models::{TextModel, arc};
use crate::common::scratch::Scratch;

const LINKS: [&str; 3] = [
    ".task_outputs",
    ".task_outputs/tool-results",
    ".transcripts",
];

/// A workspace whose `link` is a symlink to an empty folder outside; returns the outside.
fn linked(ws: &Path, link: &str) -> PathBuf {
    let outside = ws
        .parent()
        .unwrap()
        .join(format!("outside-{}", link.replace('/', "_")));
    std::fs::create_dir_all(&outside).unwrap();
    let at = ws.join(link);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    symlink(&outside, &at).unwrap();
    outside
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn the_store_refuses_every_symlinked_folder_and_names_it() {
    for link in LINKS {
        let s = Scratch::new();
        let ws = s.ws();
        std::fs::create_dir_all(&ws).unwrap();
        let outside = linked(&ws, link);
        let store = Store::new(&ws);
        let err = if link == ".transcripts" {
            store.write_transcript(1_700_000_000, "{}\n").unwrap_err()
        } else {
            store.persist_tool_result(Some("t1"), "text").unwrap_err()
        };
        let message = err.to_string();
        assert!(
            message.contains(&ws.join(link).display().to_string())
                && message.contains("symbolic link"),
            "{link}: {message}"
        );
        // A dry run (a step-mode preview, a probe) refuses the same way.
        let dry = store.dry_run();
        let dry_err = if link == ".transcripts" {
            dry.write_transcript(1_700_000_000, "{}\n").is_err()
        } else {
            dry.persist_tool_result(Some("t1"), "text").is_err()
        };
        assert!(dry_err, "{link}: the dry run followed the link");
        assert!(is_empty(&outside), "{link}: something was written outside");
        assert!(store.list_tool_results().is_empty() && store.list_transcripts().is_empty());
    }
}

#[test]
fn ctxlab_pipeline_refuses_a_symlinked_results_folder() {
    for link in [".task_outputs", ".task_outputs/tool-results"] {
        let s = Scratch::new();
        std::fs::create_dir_all(s.ws()).unwrap();
        let outside = linked(&s.ws(), link);
        let out = s.pipeline_on_example(s.ws()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{link}: {stderr}");
        assert!(
            stderr.contains(&s.ws().join(link).display().to_string())
                && stderr.contains("symbolic link"),
            "{link}: {stderr}"
        );
        assert!(is_empty(&outside), "{link}: written outside");
    }
}

#[test]
fn ctxlab_replay_refuses_a_symlinked_transcripts_folder() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let outside = linked(&s.ws(), ".transcripts");
    // A low limit makes the replay compact, which writes a transcript first.
    let out = s
        .ctxlab()
        .arg("replay")
        .arg(example())
        .args(["--set", "context_limit=5000", "--workspace"])
        .arg(s.ws())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(".transcripts") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert!(is_empty(&outside), "a transcript was written outside");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_reports_a_symlinked_transcripts_folder_as_an_error() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let outside = linked(&s.ws(), ".transcripts");
    let setup = AgentSetup::new(
        arc(TextModel("hello")),
        Workspace::new(s.ws()).unwrap(),
        PipelineConfig::default(),
    );
    let (commands, mut events, _handle) = spawn(setup);
    commands.send(UserCommand::Submit("hi".into())).unwrap();
    until_done(&mut events, Duration::from_secs(10)).await;
    commands.send(UserCommand::Compact { focus: None }).unwrap();
    let seen = until_done(&mut events, Duration::from_secs(10)).await;
    let error = seen.iter().find_map(|e| match e {
        AgentEvent::Error { kind, message } => Some((*kind, message.clone())),
        _ => None,
    });
    let (kind, message) = error.expect("an error event");
    assert_eq!(kind, ErrorKind::Store);
    assert!(
        message.contains(".transcripts") && message.contains("symbolic link"),
        "{message}"
    );
    assert!(is_empty(&outside));
}

/// `ctxlab run`'s stderr carries the cause when the run fails (item 10), here the link.
#[test]
fn ctxlab_run_fails_with_the_cause_on_stderr() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    crate::common::scratch::write_demo(&s.ws());
    let outside = linked(&s.ws(), ".task_outputs");
    let out = s.scripted_run(s.ws()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the run ended with an error") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert!(is_empty(&outside));
}
