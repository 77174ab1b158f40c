//! The breakdown from measured messages (`sized`, read by `session::sized_read`) is the
//! breakdown of the whole session (`session::of_session`), call for call, on every
//! fixture and on a generated rollout of repeated compactions; and its read does work in
//! proportion to the file (issue 36).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use super::CallBreakdown;
use super::session::of_session;
use super::sized::{Collector, SizedCalls, Unsized};
use super::tokens::Family;
use crate::session::sized_read::{SizedRead, read_sized};
use crate::session::test_rollouts::{assert_work_follows_input, fixture_files, repeated_file};

/// The sized breakdown of `path` (with its counting's description) and the read's work;
/// None when the file is not read the sized way.
fn sized(path: &Path) -> Option<(String, Vec<CallBreakdown>, u64)> {
    let mut family = Some(Family::O200k);
    for _ in 0..3 {
        let collector = Rc::new(RefCell::new(Collector::new(family)));
        let SizedRead { session, work, .. } = read_sized(path, collector.clone()).unwrap()?;
        let c = collector.borrow();
        match SizedCalls::new(&session, &c) {
            Ok(calls) => {
                let mut all = Vec::new();
                calls
                    .each(&mut |b| {
                        all.push(b);
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                return Some((calls.counting().describe(), all, work));
            }
            Err(Unsized::Tokenizer(f)) => family = f,
            Err(Unsized::Mismatch) => return None,
        }
    }
    panic!("{}: the tokenizer asked for changed", path.display());
}

/// Asserts the sized breakdown of `path` is the whole one; whether it was sized.
fn assert_same(path: &Path) -> bool {
    let whole = of_session(&crate::session::load_session(path).unwrap());
    let Some((counting, calls, _)) = sized(path) else {
        return false;
    };
    assert_eq!(counting, whole.counting.describe(), "{}", path.display());
    assert_eq!(calls.len(), whole.calls.len(), "{}", path.display());
    for (a, b) in calls.iter().zip(&whole.calls) {
        assert_eq!(a, b, "{}", path.display());
    }
    true
}

#[test]
fn every_fixture_breaks_down_sized_as_whole() {
    let mut files = Vec::new();
    for dir in ["sessions", "fork", "forgot", "captures"] {
        files.extend(fixture_files(dir, &["jsonl"]));
    }
    let mut sized_files = Vec::new();
    for f in &files {
        if std::fs::metadata(f).unwrap().len() == 0 {
            continue;
        }
        if assert_same(f) {
            sized_files.push(f.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    // The real agents' files (and the other Claude Code and Codex fixtures) take the
    // sized path; captures do not.
    for name in [
        "codex_0171.jsonl",
        "codex_ws_0171.jsonl",
        "claude_code_2_1_332.jsonl",
        "claude_code.jsonl",
        "codex_rollout.jsonl",
        "codex_legacy.jsonl",
    ] {
        assert!(
            sized_files.iter().any(|f| f == name),
            "{name}: {sized_files:?}"
        );
    }
    assert!(sized_files.len() >= 20, "{}", sized_files.len());
}

#[test]
fn a_rollout_of_repeated_compactions_breaks_down_sized_as_whole() {
    let (_dir, path) = repeated_file(4);
    assert!(assert_same(&path));
    // An item a later compaction repeats is known by its key, not converted again.
    let c = Rc::new(RefCell::new(Collector::new(Some(Family::O200k))));
    let read = read_sized(&path, c).unwrap().unwrap();
    assert!(read.items_read > 0);
    assert!(
        read.items_converted < read.items_read,
        "{} of {}",
        read.items_converted,
        read.items_read
    );
}

/// Doubling the rollout doubles the read's work (lines, history items hashed, items
/// converted), however many compactions repeat the history.
#[test]
fn a_rollout_twice_as_long_takes_about_twice_the_work() {
    assert_work_follows_input("file", |path, text| {
        let (_, calls, work) = sized(path).unwrap();
        assert!(!calls.is_empty());
        (text.len() as f64, work as f64)
    });
}
