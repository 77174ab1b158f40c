//! Issue 22's small points on the command line's listing side: `inspect` of a folder is bad
//! input (exit 2, saying what to run instead), counts read "1 call", one wording for a
//! session without a project, and one order (newest first) in the CLI and the browser.

use crate::common::cli::homeless as ctxlab;

#[test]
fn inspect_of_a_folder_is_bad_input_with_exit_2_and_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctxlab().arg("inspect").arg(dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("it is a folder"), "{err}");
    assert!(err.contains("ctxlab sessions"), "{err}");
    // A missing file was already exit 2: the same class of mistake.
    let out = ctxlab()
        .arg("inspect")
        .arg(dir.path().join("missing.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// One Claude Code line of a user or an assistant message (written from the format).
fn claude_line(
    session: &str,
    cwd: Option<&str>,
    uuid: &str,
    parent: Option<&str>,
    at: &str,
    assistant: bool,
) -> String {
    let mut v = serde_json::json!({
        "parentUuid": parent,
        "isSidechain": false,
        "sessionId": session,
        "type": if assistant { "assistant" } else { "user" },
        "uuid": uuid,
        "timestamp": at,
        "message": if assistant {
            serde_json::json!({"id": format!("msg_{uuid}"), "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 100, "output_tokens": 5}})
        } else {
            serde_json::json!({"role": "user", "content": "hello"})
        },
    });
    if let Some(cwd) = cwd {
        v["cwd"] = cwd.into();
    }
    v.to_string()
}

/// A one-call session started at `at` (an ISO time with `Z`).
fn one_call_session(path: &std::path::Path, cwd: Option<&str>, at: &str) {
    let id = path.file_stem().unwrap().to_str().unwrap();
    let text = [
        claude_line(id, cwd, "u1", None, at, false),
        claude_line(id, cwd, "a1", Some("u1"), at, true),
    ]
    .join("\n");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text + "\n").unwrap();
}

#[test]
fn counts_of_one_read_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    one_call_session(
        &dir.path().join("p/one.jsonl"),
        Some("/home/dev/one"),
        "2025-03-01T10:00:00.000Z",
    );
    let out = ctxlab().arg("sessions").arg(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" 1 call "), "{text}");
    assert!(!text.contains("1 calls"), "{text}");
    let summary_only = crate::common::files::session_fixture("claude_code_summary_only.jsonl");
    let out = ctxlab().arg("sessions").arg(summary_only).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" 1 compaction "), "{text}");
    assert!(!text.contains("1 compactions"), "{text}");
}

/// Three sessions in two projects: `a` has the oldest and the newest, `b` the middle one.
fn three_sessions(dir: &std::path::Path) {
    one_call_session(
        &dir.join("a/a-old.jsonl"),
        Some("/home/dev/a"),
        "2025-01-01T10:00:00.000Z",
    );
    one_call_session(
        &dir.join("a/a-new.jsonl"),
        Some("/home/dev/a"),
        "2025-03-01T10:00:00.000Z",
    );
    one_call_session(
        &dir.join("b/b-mid.jsonl"),
        Some("/home/dev/b"),
        "2025-02-01T10:00:00.000Z",
    );
    one_call_session(
        &dir.join("c/c-none.jsonl"),
        None,
        "2025-02-15T10:00:00.000Z",
    );
}

#[test]
fn the_cli_and_the_browser_list_in_one_order_newest_first_with_one_project_wording() {
    use ctxlab::tui::sessions::{BrowserRow, SessionWork};
    let dir = tempfile::tempdir().unwrap();
    three_sessions(dir.path());
    let v = crate::common::cli::json_out(ctxlab().args(["sessions", "--json"]).arg(dir.path()));
    let cli: Vec<String> = super::listed_names(&v);
    assert_eq!(
        cli,
        ["a-new.jsonl", "a-old.jsonl", "c-none.jsonl", "b-mid.jsonl"]
    );
    let ctxlab::tui::sessions::SessionDone::Discovered { rows, .. } = SessionWork::Discover {
        paths: vec![dir.path().to_path_buf()],
        data_dir: None,
    }
    .run() else {
        panic!("a listing");
    };
    let browser: Vec<String> = rows
        .iter()
        .filter_map(|r| match r {
            BrowserRow::Session(s) => {
                Some(s.entry().path.file_name()?.to_string_lossy().into_owned())
            }
            _ => None,
        })
        .collect();
    assert_eq!(browser, cli, "one order");
    // A session that records no project: the same words in both.
    let heading = rows
        .iter()
        .find_map(|r| match r {
            BrowserRow::Project { name, .. } if !name.starts_with('/') => Some(name.clone()),
            _ => None,
        })
        .expect("a heading for the session without a project");
    let out = ctxlab().arg("sessions").arg(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l == heading), "{heading:?} in {text}");
    assert_eq!(heading, ctxlab::session::numbers::project_label(None));
}

/// One subagent line (`isSidechain`) of session `parent`.
fn agent_file(path: &std::path::Path, parent: &str) {
    let line = serde_json::json!({
        "parentUuid": null, "isSidechain": true, "cwd": "/home/dev/a", "sessionId": parent,
        "type": "user", "uuid": "g1", "timestamp": "2025-03-02T10:00:00.000Z",
        "message": {"role": "user", "content": "check the links"}, "agentId": "g",
    });
    std::fs::write(path, format!("{line}\n")).unwrap();
}

#[test]
fn an_agent_file_whose_session_is_gone_is_listed_and_one_with_its_session_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-home-dev-a");
    one_call_session(
        &project.join("s-here.jsonl"),
        Some("/home/dev/a"),
        "2025-03-01T10:00:00.000Z",
    );
    agent_file(&project.join("agent-with.jsonl"), "s-here");
    agent_file(&project.join("agent-orphan.jsonl"), "s-deleted");
    // A session id that is no plain name never looks outside the folder.
    agent_file(&project.join("agent-odd.jsonl"), "../-home-dev-a/s-here");
    let v = crate::common::cli::json_out(ctxlab().args(["sessions", "--json"]).arg(dir.path()));
    let mut names = super::listed_names(&v);
    names.sort();
    assert_eq!(
        names,
        ["agent-odd.jsonl", "agent-orphan.jsonl", "s-here.jsonl"]
    );
}
