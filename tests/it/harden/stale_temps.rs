//! Item 7: temp files are recognisably ctxlab's (`.ctxlab-tmp-<pid>-<n>`, and
//! `.NAME.ctxlab-tmp-<pid>-<n>` next to workspace files), and those of processes that are no
//! longer running are removed at the next start, by the store (its folders) and by the
//! workspace scan; temp files of live processes and ordinary files are left alone.

use std::path::Path;

use ctxlab::safe_fs::{TEMP_MARK, temp_name};
use ctxlab::store::Store;

use crate::common::scratch::Scratch;

/// The pid of a process that has already exited.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "partial").unwrap();
}

#[test]
fn temp_names_say_whose_they_are() {
    let name = temp_name("");
    assert!(
        name.starts_with(TEMP_MARK) && name.contains(&format!("-{}-", std::process::id())),
        "{name}"
    );
    assert!(temp_name("notes.md").starts_with(".notes.md.ctxlab-tmp-"));
}

#[test]
fn the_store_removes_temp_files_of_dead_processes_only() {
    let s = Scratch::new();
    let ws = s.ws();
    let dead = dead_pid();
    let results = ws.join(".task_outputs/tool-results");
    let transcripts = ws.join(".transcripts");
    let stale = [
        results.join(format!(".ctxlab-tmp-{dead}-0")),
        transcripts.join(format!(".ctxlab-tmp-{dead}-7")),
    ];
    let kept = [
        // pid 1 always runs; our own temp files may be mid-write.
        results.join(".ctxlab-tmp-1-0"),
        results.join(format!(".ctxlab-tmp-{}-3", std::process::id())),
        // A real result whose id looks like a temp name.
        results.join(format!(".ctxlab-tmp-{dead}-0.txt")),
        transcripts.join("transcript_1700000000.jsonl"),
    ];
    for p in stale.iter().chain(&kept) {
        touch(p);
    }
    // Earlier versions' unnamed temp files: removed once old enough that no write can still
    // be going on.
    let legacy_old = transcripts.join(".tmp-Ab12Cd");
    let legacy_fresh = transcripts.join(".tmp-Xy34Zw");
    touch(&legacy_old);
    touch(&legacy_fresh);
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&legacy_old)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    assert_eq!(Store::new(&ws).remove_stale_temp_files(), 3);
    assert!(!legacy_old.exists());
    assert!(legacy_fresh.exists());
    for p in &stale {
        assert!(!p.exists(), "{p:?} stayed");
    }
    for p in &kept {
        assert!(p.exists(), "{p:?} was removed");
    }
}

#[test]
fn the_workspace_scan_removes_file_tool_temps_of_dead_processes() {
    let s = Scratch::new();
    let ws = s.ws();
    let dead = dead_pid();
    let stale = [
        ws.join(format!(".NOTES.md.ctxlab-tmp-{dead}-0")),
        ws.join(format!("src/deep/.parser.rs.ctxlab-tmp-{dead}-12")),
    ];
    let kept = [
        ws.join("NOTES.md"),
        ws.join(format!(
            "src/.parser.rs.ctxlab-tmp-{}-1",
            std::process::id()
        )),
        ws.join(format!("notes.ctxlab-tmp-{dead}-1")), // not hidden: not ours
    ];
    for p in stale.iter().chain(&kept) {
        touch(p);
    }
    // A linked folder is never entered.
    let outside = s.path().join("outside");
    touch(&outside.join(format!(".x.ctxlab-tmp-{dead}-0")));
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    assert_eq!(ctxlab::tools::remove_stale_temp_files(&ws), 2);
    for p in &stale {
        assert!(!p.exists(), "{p:?} stayed");
    }
    for p in &kept {
        assert!(p.exists(), "{p:?} was removed");
    }
    assert!(outside.join(format!(".x.ctxlab-tmp-{dead}-0")).exists());
}

/// The binary cleans up at start: `ctxlab run` in the workspace and the store folders,
/// `ctxlab pipeline` in the store folders.
#[test]
fn the_next_start_removes_stale_temp_files() {
    let s = Scratch::new();
    let ws = s.ws();
    std::fs::create_dir_all(&ws).unwrap();
    crate::common::scratch::write_demo(&ws);
    let dead = dead_pid();
    let stale = [
        ws.join(format!(".NOTES.md.ctxlab-tmp-{dead}-0")),
        ws.join(format!(".task_outputs/tool-results/.ctxlab-tmp-{dead}-1")),
        ws.join(format!(".transcripts/.ctxlab-tmp-{dead}-2")),
    ];
    for p in &stale {
        touch(p);
    }
    let out = s.scripted_run(&ws).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for p in &stale {
        assert!(!p.exists(), "{p:?} stayed");
    }
    let stale = ws.join(format!(".task_outputs/tool-results/.ctxlab-tmp-{dead}-9"));
    touch(&stale);
    let out = s.pipeline_on_example(&ws).output().unwrap();
    assert!(out.status.success());
    assert!(!stale.exists());
}
