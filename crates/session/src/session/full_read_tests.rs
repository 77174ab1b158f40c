//! The full read of a Codex rollout from items converted once (`full_read`) is the read
//! that builds every history item where it appears (`load_session_chunked`): the same
//! session, compared whole, on every fixture, on a generated rollout of repeated
//! compactions and on histories of every odd shape; and what compactions keep again is
//! held once.

use std::path::Path;

use super::*;
use crate::message::Message;
use crate::session::test_rollouts::{
    assert_work_follows_input, fixture_files, odd_histories, repeated_file,
};
use crate::session::{load_session_chunked, load_session_with};

fn quiet(path: &Path) -> Result<Option<Session>, SessionError> {
    read_codex_full(path, &|_| {}, &|| false)
}

/// Asserts both reads of `path` give the same session (or the same error); whether the
/// full read took the new path.
fn assert_same(path: &Path) -> bool {
    let name = path.display();
    let new = load_session_with(path, &|_| {}, &|| false);
    let old = load_session_chunked(path, &|_| {}, &|| false);
    match (&new, &old) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
        (a, b) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}"),
    }
    quiet(path).is_ok_and(|s| s.is_some())
}

#[test]
fn every_fixture_reads_the_same_from_items_converted_once() {
    let files = fixture_files("", &["jsonl", "json", "zst"]);
    let mut codex = 0;
    for path in &files {
        codex += usize::from(assert_same(path));
    }
    // Every Codex fixture (the ones the real Codex wrote among them) took the new path.
    assert!(codex >= 6, "{codex} of {}", files.len());
    // Any other file is left to the chunked read.
    let claude = fixture_files("sessions", &["jsonl"])
        .into_iter()
        .find(|p| p.ends_with("claude_code.jsonl"))
        .unwrap();
    assert!(quiet(&claude).unwrap().is_none());
}

#[test]
fn a_rollout_of_repeated_compactions_reads_the_same_and_holds_each_item_once() {
    let (_dir, path) = repeated_file(6);
    assert!(assert_same(&path));
    let s = quiet(&path).unwrap().unwrap();
    let old = load_session_chunked(&path, &|_| {}, &|| false).unwrap();
    let (new, old) = (allocations(&s), allocations(&old));
    // The chunked read holds a copy of the fields for every kept message; this read, one
    // per item, however many compactions keep it again.
    assert_eq!(old.1, new.1);
    assert_eq!(old.0, old.1, "{old:?}");
    assert!(new.0 < old.0, "{new:?}");
}

/// How many allocations the kept messages of `s`'s compactions hold, and how many kept
/// messages there are.
fn allocations(s: &Session) -> (usize, usize) {
    let kept: Vec<&Message> = s
        .compactions
        .iter()
        .filter_map(|c| c.kept.as_ref())
        .flatten()
        .map(|k| &k.message)
        .collect();
    let mut distinct: Vec<&Message> = Vec::new();
    for m in &kept {
        if !distinct.iter().any(|d| d.shares_fields(m)) {
            distinct.push(m);
        }
    }
    (distinct.len(), kept.len())
}

#[test]
fn histories_of_every_shape_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (what, text, listed)) in odd_histories().into_iter().enumerate() {
        let path = dir.path().join(format!("odd{i}.jsonl"));
        std::fs::write(&path, &text).unwrap();
        let took = assert_same(&path);
        if listed {
            assert!(took, "{what}");
            let s = quiet(&path).unwrap().unwrap();
            let c = &s.compactions[0];
            assert!(c.replacement.is_some() && c.counted.is_none(), "{what}");
        }
    }
}

/// A cancel asked between reads ends the read with `Cancelled`, and the bytes read are
/// reported as they go.
#[test]
fn the_read_reports_progress_and_stops_when_cancelled() {
    let (_dir, path) = repeated_file(3);
    let len = std::fs::metadata(&path).unwrap().len();
    let seen = std::cell::Cell::new(0);
    read_codex_full(&path, &|n| seen.set(n), &|| false)
        .unwrap()
        .unwrap();
    assert_eq!(seen.get(), len);
    let cancelled = read_codex_full(&path, &|_| {}, &|| true);
    assert!(
        matches!(cancelled, Err(SessionError::Cancelled)),
        "{cancelled:?}"
    );
}

/// Twice the compactions, about twice the work: items read and converted, the kept
/// messages' keys hashed, and the messages of every new history built.
#[test]
fn twice_the_compactions_take_about_twice_the_work() {
    assert_work_follows_input("compactions", |path, _| {
        let (s, work) = read_counting(path, &|_| {}, &|| false).unwrap().unwrap();
        (s.compactions.len() as f64, work as f64)
    });
}
