//! Item 10: exit codes and messages. An empty session for `replay` is bad input (2, like
//! `pipeline`); the pipeline's input refuses unknown roles and warns about tool results that
//! answer nothing; a failure of the system at start is not a usage error (1, not 2); an OS
//! error is printed once.

use std::path::PathBuf;

use serde_json::json;

use crate::common::scratch::Scratch;

#[test]
fn replay_of_an_empty_file_exits_2() {
    let s = Scratch::new();
    for (name, text) in [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n\n"),
        ("list.json", "[]"),
    ] {
        let file = s.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = s
            .ctxlab()
            .arg("replay")
            .arg(&file)
            .arg("--workspace")
            .arg(s.ws())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains("no messages"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

fn pipeline_on(s: &Scratch, input: serde_json::Value) -> std::process::Output {
    let file = s.path().join("input.json");
    std::fs::write(&file, input.to_string()).unwrap();
    s.ctxlab()
        .args(["pipeline", "--input"])
        .arg(&file)
        .arg("--workspace")
        .arg(s.ws())
        .output()
        .unwrap()
}

#[test]
fn pipeline_input_refuses_unknown_roles() {
    let s = Scratch::new();
    let out = pipeline_on(
        &s,
        json!([
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": "result"}
        ]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("input.json")
            && stderr.contains("messages[1]")
            && stderr.contains("\"tool\""),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(!s.ws().exists(), "nothing is written for bad input");
}

#[test]
fn pipeline_input_warns_about_tool_results_that_answer_nothing() {
    let s = Scratch::new();
    let out = pipeline_on(
        &s,
        json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "fine"},
                {"type": "tool_result", "tool_use_id": "toolu_orphan", "content": "lost"}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": "lost too"}]}
        ]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning, not an error: {stderr}"
    );
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(warnings[0].contains("messages[2]") && warnings[0].contains("toolu_orphan"));
    assert!(warnings[1].contains("messages[3]") && warnings[1].contains("toolu_b"));
    assert!(
        !stderr.contains("toolu_a\""),
        "a paired result is no warning: {stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["strategy"], "s08");
}

#[test]
fn a_failure_of_the_system_at_start_exits_1_not_2() {
    let s = Scratch::new();
    let file = s.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    // The workspace cannot be created: its parent is a file.
    let inside_a_file = file.join("ws");
    let out = s.scripted_run(&inside_a_file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("afile/ws"), "{stderr}");
    let out = s.pipeline_on_example(&inside_a_file).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_os_error_is_printed_once() {
    let s = Scratch::new();
    // `.task_outputs` is a file, and /proc/self refuses new folders: both fail with an OS
    // error inside the store.
    std::fs::create_dir_all(s.ws()).unwrap();
    std::fs::write(s.ws().join(".task_outputs"), "x").unwrap();
    for ws in [s.ws(), PathBuf::from("/proc/self")] {
        let out = s.pipeline_on_example(&ws).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{ws:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.matches("(os error").count() <= 1, "{stderr}");
        let first_clause = stderr.trim_end().rsplit(": ").next().unwrap();
        assert_eq!(
            stderr.matches(first_clause).count(),
            1,
            "a cause is printed twice: {stderr}"
        );
    }
}

/// A session path that exists but cannot be read as a file (a folder) is the same failure
/// for every command that reads one: one line naming it. Like a path that does not exist it
/// is the user's mistake: exit 2, the same way for every command (issue 22 made the folder
/// exit 2; it was 1).
#[test]
fn every_session_reader_exits_alike_on_a_folder_and_a_missing_file() {
    let s = Scratch::new();
    let folder = s.path().join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let missing = s.path().join("missing.jsonl");
    let out_html = s.path().join("page.html");
    for (path, code) in [(&folder, 2), (&missing, 2)] {
        let runs = [
            vec!["inspect".into(), path.clone()],
            vec!["replay".into(), path.clone(), "--workspace".into(), s.ws()],
            vec![
                "export".into(),
                path.clone(),
                "--out".into(),
                out_html.clone(),
            ],
        ];
        for args in runs {
            let out = s.ctxlab().args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(stderr.contains(&path.display().to_string()), "{stderr}");
        }
    }
}
