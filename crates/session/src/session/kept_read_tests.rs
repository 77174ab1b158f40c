//! `load_session_kept` gives `forgot` what the full read gives: the same session but for
//! the histories it does not hold, and for each compaction the kept messages (with the
//! message each copies) the full read holds in `Compaction::kept`; on every fixture and on
//! a generated rollout of repeated compactions, whose work doubles with the file.

use std::path::Path;

use super::*;
use crate::session::load_session;
use crate::session::model::Compaction;
use crate::session::test_rollouts::{assert_work_follows_input, fixture_files, repeated_file};

/// A compaction without what only a full read holds.
fn outline(c: &Compaction) -> Compaction {
    Compaction {
        kept: None,
        replacement: None,
        counted: None,
        ..c.clone()
    }
}

/// Asserts the kept read of `path` is the full read; how many kept lists were built from
/// held items.
fn assert_same(path: &Path) -> usize {
    let full = load_session(path).unwrap();
    let read = load_session_kept(path).unwrap();
    let s = &read.session;
    let name = path.display();
    assert_eq!(s.messages, full.messages, "{name}");
    assert_eq!(s.warnings, full.warnings, "{name}");
    assert_eq!(s.compactions.len(), full.compactions.len(), "{name}");
    let mut lists = read.kept_lists();
    let mut built = 0;
    for (k, (a, b)) in s.compactions.iter().zip(&full.compactions).enumerate() {
        assert_eq!(outline(a), outline(b), "{name}: compaction {k}");
        built += usize::from(a.kept.is_none() && b.kept.is_some());
        assert_eq!(lists.kept(k), b.kept, "{name}: compaction {k}");
    }
    built
}

#[test]
fn every_fixture_keeps_what_the_full_read_keeps() {
    let files = fixture_files("", &["jsonl"]);
    let mut built = 0;
    for path in &files {
        if load_session(path).is_ok_and(|s| !s.compactions.is_empty()) {
            built += assert_same(path);
        }
    }
    // The Codex fixtures' histories came from the items held once.
    assert!(built >= 5, "{built}");
}

/// An item each compaction repeats is converted once; the kept lists are the full read's.
#[test]
fn a_rollout_of_repeated_compactions_converts_each_item_once() {
    let (_dir, path) = repeated_file(4);
    assert!(assert_same(&path) >= 4);
    let read = load_session_kept(&path).unwrap();
    assert!(
        read.items_converted < read.items_read,
        "{} of {}",
        read.items_converted,
        read.items_read
    );
    // Each kept item's prompt key is hashed the first time a compaction keeps it.
    let mut lists = read.kept_lists();
    let built: usize = (0..read.session.compactions.len())
        .map(|k| lists.kept(k).map_or(0, |v| v.len()))
        .sum();
    assert!(
        lists.keyed <= read.items_converted && (lists.keyed as usize) < built,
        "{} keys hashed for {} items, {built} kept messages built",
        lists.keyed,
        read.items_converted
    );
}

/// Twice the compactions, about twice the work: items read and converted, and the kept
/// messages built when asked for.
#[test]
fn twice_the_compactions_take_about_twice_the_work() {
    assert_work_follows_input("compactions", |path, _| {
        let read = load_session_kept(path).unwrap();
        let compactions = read.session.compactions.len();
        let mut lists = read.kept_lists();
        let built: usize = (0..compactions)
            .map(|k| lists.kept(k).map_or(0, |v| v.len()))
            .sum();
        let work = read.items_read + read.items_converted + built as u64;
        (compactions as f64, work as f64)
    });
}
