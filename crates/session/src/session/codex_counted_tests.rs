//! A numbers-only read that counts each replacement history while parsing
//! (`codex_counted`) gives the session the full parse gives (issue 36): on every Codex
//! fixture, on a generated rollout of repeated compactions, and on histories of every odd
//! shape a hostile or future file may hold.

use super::codex::read_codex;
use super::codex_counted::parse_codex_counting_here;
use super::detail::Detail;
use super::lines::parse_json_lines_here;
use super::model::{Session, SessionFormat};
use super::numbers::SessionNumbers;
use super::test_rollouts::odd_histories;

/// The session a numbers-only read makes of `text`, its lines parsed by `counting` or
/// whole.
fn numbers_read(text: &str, counting: bool) -> Session {
    let lines = if counting {
        parse_codex_counting_here(text, 1)
    } else {
        parse_json_lines_here(text, 1)
    };
    let format = super::detect_text(text).unwrap_or(SessionFormat::Codex);
    read_codex(lines, format, Detail::Numbers)
}

fn assert_same(text: &str, what: &str) -> Session {
    let counted = numbers_read(text, true);
    let full = numbers_read(text, false);
    assert_eq!(format!("{counted:?}"), format!("{full:?}"), "{what}");
    counted
}

#[test]
fn every_codex_fixture_reads_the_same_counted_as_parsed_whole() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sessions");
    let mut with_histories = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("codex") || !name.ends_with(".jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let s = assert_same(&text, &name);
        if s.compactions.iter().any(|c| c.counted.is_some()) {
            with_histories += 1;
        }
    }
    // The fixtures the real Codex wrote do hold counted histories (the path is taken).
    assert!(with_histories >= 2, "{with_histories}");
}

/// Codex 0.171's rollout repeated with growing histories (as scripts/gen_codex_session.py
/// does): the counts of every compaction, its numbers and warnings are the full parse's.
#[test]
fn a_rollout_of_repeated_compactions_counts_as_parsed_whole() {
    let rollout = include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl");
    let mut text = String::new();
    for rep in 0..4 {
        for line in rollout.lines().skip(usize::from(rep > 0)) {
            text.push_str(&line.replace("msg_", &format!("msg_r{rep}_")));
            text.push('\n');
        }
    }
    let s = assert_same(&text, "repeated");
    assert!(s.compactions.len() >= 8, "{}", s.compactions.len());
    assert!(s.compactions.iter().all(|c| c.counted.is_some()));
    assert!(SessionNumbers::of(&s).calls > 0);
}

#[test]
fn histories_of_every_shape_count_as_parsed_whole() {
    for (what, text, listed) in odd_histories() {
        let s = assert_same(&text, &what);
        if listed {
            assert!(s.compactions[0].counted.is_some(), "{what}");
        }
    }
}
