//! What a listing does with files that are not sessions of their own: a `.jsonl` file
//! that is not a session (empty, not JSON, JSON of no format ctxlab reads) is named as
//! skipped with the reason, never dropped in silence (issue 22, "Listing").

use std::path::Path;

use crate::common::cli::{homeless as ctxlab, json_out};
use crate::common::files::session_fixture as fixture;

pub(crate) fn listed_names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            Path::new(e["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn files_that_are_not_sessions_are_listed_as_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-home-dev-site");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        fixture("claude_project/s-main.jsonl"),
        project.join("s-main.jsonl"),
    )
    .unwrap();
    std::fs::write(project.join("empty.jsonl"), "").unwrap();
    std::fs::write(project.join("notes.jsonl"), "todo: not json\n").unwrap();
    std::fs::write(project.join("config.jsonl"), "{\"theme\": \"dark\"}\n").unwrap();

    let out = ctxlab()
        .args(["sessions", "--json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed_names(&v), ["s-main.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let said = |name: &str, reason: &str| {
        let line = format!(
            "ctxlab: {}: skipped: {reason}\n",
            project.join(name).display()
        );
        assert!(err.contains(&line), "{line:?} in {err}");
    };
    said("empty.jsonl", "no messages (the file is empty)");
    said("notes.jsonl", "not a session: no line of it is JSON");
    said(
        "config.jsonl",
        "not a session: no line is in a format ctxlab reads",
    );
    // The human listing says the same on stderr, and the session is still listed.
    let out = ctxlab().arg("sessions").arg(dir.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("s-main.jsonl"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty.jsonl: skipped"));
    // A listing of a folder of sessions only skips nothing.
    let out = ctxlab()
        .arg("sessions")
        .arg(fixture("-home-dev-blog"))
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_out(
        ctxlab()
            .args(["sessions", "--json"])
            .arg(fixture("-home-dev-blog")),
    );
    assert_eq!(listed_names(&v), ["s-rewind.jsonl"]);
}

mod cache;
mod first_screen;
mod small;
