//! Issue 19 §4 and §7 in the workbench's sessions browser: a FIFO among the sessions is a
//! skipped row (the listing never opens it, so it cannot hang), and a file name holding
//! control characters is sanitized before its width is measured, so its row lines up with
//! the others.

use std::ffi::CString;

use crate::common::files::session_fixture;
use crate::support::{Driver, screen, settle};
use ctxlab::tui::sessions::BrowserRow;

#[test]
fn a_fifo_is_a_skipped_row_and_a_hostile_name_keeps_its_row_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-home-dev-app");
    std::fs::create_dir_all(&project).unwrap();
    let hostile = "a\u{1b}[2J\u{7}\u{202e}b.jsonl";
    for name in [hostile, "plain.jsonl"] {
        std::fs::copy(session_fixture("claude_code.jsonl"), project.join(name)).unwrap();
    }
    let fifo = CString::new(project.join("live.jsonl").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut d = Driver::new(&ws, true);
    let fx = crate::support::open_sessions(&mut d.app, vec![dir.path().join("projects")]);
    settle(&mut d.app, fx);
    let rows = d.app.sessions().rows();
    assert!(
        rows.iter()
            .any(|r| matches!(r, BrowserRow::Error { path, message }
            if path.ends_with("live.jsonl") && message.contains("a FIFO"))),
        "{rows:?}"
    );
    let text = screen(&mut d.app, 120, 40);
    let line_of = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no row with {needle}:\n{text}"))
            .to_string()
    };
    let bad = line_of("a\\e[2J\\a\\u");
    let good = line_of("plain.jsonl");
    // Same size, same counts: the columns right of the name must start at the same place.
    let size_col = |l: &str| {
        let at = l.find(" KB").unwrap_or_else(|| panic!("no size in {l}"));
        l[..at].chars().count()
    };
    assert_eq!(size_col(&bad), size_col(&good), "\n{bad}\n{good}");
}
