//! `ctxlab watch FILE` on a terminal: the workbench's live view, in a real pty, while the
//! test writes a Claude Code session line by line as the agent would (a compaction, its
//! summary line written in two halves, a truncation). Rows appear in file order, the
//! compaction once with one bell, the truncation is said, and `q` leaves the terminal as
//! it found it.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use super::fixtures::*;
use crate::common::pty::Pty;

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Positions of `needles` in `screen`, each found exactly once.
fn once_each(screen: &str, needles: &[&str]) -> Vec<usize> {
    needles
        .iter()
        .map(|n| {
            assert_eq!(
                screen.matches(n).count(),
                1,
                "{n:?} should be on screen once:\n{screen}"
            );
            screen.find(n).unwrap()
        })
        .collect()
}

#[test]
fn the_live_view_follows_a_session_as_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = dir.path().join("s1.jsonl");
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n",
            claude_user(1, "list the files"),
            claude_call(2, 1000)
        ),
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let mut pty = Pty::start(
        Path::new(env!("CARGO_BIN_EXE_ctxlab")),
        &["watch", file, "--poll-ms", "50"],
        dir.path(),
        &home,
        &[],
    );
    // What was there: read, then live.
    let first = pty.wait_for_all(&["Live · live", "call 1 ·", "s1.jsonl"]);
    // Following another agent's session needs no model: the idle agent's start-up notices
    // (no API key, the demo) are not shown.
    assert!(!first.contains("No API key"), "{first}");
    assert_eq!(pty.bells(), 0, "no bell for what was already there");
    let step = Duration::from_millis(120);
    for line in [
        claude_result(2),
        claude_call(3, 5000),
        claude_result(3),
        claude_boundary(160_000),
    ] {
        append(&path, &format!("{line}\n"));
        std::thread::sleep(step);
    }
    pty.wait_for("⟳ compaction #1 at message");
    // The summary line, half written: nothing of it shows until its newline.
    let summary = claude_summary();
    let (head, tail) = summary.split_at(summary.len() / 2);
    append(&path, head);
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        !pty.screen().contains("continued from a previous"),
        "a half-written line is not read:\n{}",
        pty.screen()
    );
    append(&path, &format!("{tail}\n"));
    append(&path, &format!("{}\n", claude_call(4, 2000)));
    let screen = pty.wait_for_all(&["call 3 ·", "continued from a previous"]);
    let at = once_each(
        &screen,
        &[
            "call 1 ·",
            "call 2 ·",
            "⟳ compaction #1 at message",
            "call 3 ·",
        ],
    );
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "in file order:\n{screen}"
    );
    assert!(screen.contains("auto-compacts at 160,000"), "{screen}");
    assert!(!screen.contains("malformed"), "{screen}");
    assert!(!screen.contains("No API key"), "{screen}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while pty.bells() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The summary line adds to the compaction: still one compaction, one bell.
    assert_eq!(pty.bells(), 1);
    // Truncated and written again: read from its start, and said.
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    append(
        &path,
        &format!("{}\n", claude_user(7, "after the truncation")),
    );
    let screen = pty.wait_for_all(&["file truncated", "after the truncation"]);
    assert!(
        !screen.contains("call 3 ·"),
        "the old rows are gone:\n{screen}"
    );
    pty.send(b"q");
    assert_eq!(pty.wait_exit(), 0);
    pty.assert_clean();
}

/// Watching and opening sessions call no model: a config.toml whose provider is wrong (or
/// one that names a provider without its key) does not stop `ctxlab watch` or `ctxlab
/// open` from opening, and watching makes no demo workspace in the data dir.
#[test]
fn a_broken_provider_setting_stops_neither_watch_nor_open() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let data = home.join("data/ctxlab");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("legend-seen"), "").unwrap();
    let config = home.join("config/ctxlab");
    std::fs::create_dir_all(&config).unwrap();
    let path = dir.path().join("s1.jsonl");
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n",
            claude_user(1, "list the files"),
            claude_call(2, 1000)
        ),
    )
    .unwrap();
    let codex =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/codex_rollout.jsonl");
    let bin = Path::new(env!("CARGO_BIN_EXE_ctxlab"));
    for setting in ["provider = \"nonsense\"\n", "provider = \"anthropic\"\n"] {
        std::fs::write(config.join("config.toml"), setting).unwrap();
        let mut pty = Pty::start(
            bin,
            &["watch", path.to_str().unwrap(), "--poll-ms", "50"],
            dir.path(),
            &home,
            &[],
        );
        pty.wait_for_all(&["Live · live", "call 1 ·"]);
        pty.send(b"q");
        assert_eq!(pty.wait_exit(), 0, "{setting}");
        pty.assert_clean();
        let mut pty = Pty::start(
            bin,
            &["open", codex.to_str().unwrap()],
            dir.path(),
            &home,
            &[],
        );
        pty.wait_for("compaction #1 at message");
        pty.send(b"q");
        assert_eq!(pty.wait_exit(), 0, "{setting}");
    }
    assert!(
        !data.join("workspaces").exists(),
        "no demo workspace in the data dir"
    );
}
