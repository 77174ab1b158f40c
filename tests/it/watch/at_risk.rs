//! `ctxlab watch --json` near the threshold: on the real Claude Code session of the forgot
//! evaluation, one more call within `--at-risk-within` of the compaction threshold brings
//! an `at_risk` event with the facts since the compaction and a ready `/compact` focus; with
//! `--at-risk-within 0`, none.

use std::path::Path;
use std::time::Duration;

use super::follow_json::{Watch, event, is, line};

const FIXTURE: &str = "tests/fixtures/forgot/eval_claude.jsonl";

/// The fixture's first assistant line again, under a new uuid: one more call.
fn one_more_call() -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    text.lines()
        .find(|l| l.contains("\"type\":\"assistant\""))
        .unwrap()
        .replacen("\"uuid\":\"", "\"uuid\":\"x", 1)
}

fn follow(within: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &path).unwrap();
    let p = path.to_str().unwrap();
    let mut w = Watch::start(
        &["--json", "--poll-ms", "50", "--at-risk-within", within, p],
        dir.path(),
        &[],
    );
    w.until("the summary", is("summary"));
    line(&path, &one_more_call());
    w.until("the call", is("call"));
    w.drain(Duration::from_millis(500));
    w.interrupt()
}

#[test]
fn near_the_threshold_the_facts_at_risk_and_a_focus() {
    // The fixture compacted by hand, which says nothing of where Claude Code compacts by
    // itself (167,000 of its window): a distance that reaches from its calls to there.
    let seen = follow("200000");
    let risk = seen
        .iter()
        .find(|v| event(v) == "at_risk")
        .unwrap_or_else(|| panic!("no at_risk in {seen:#?}"));
    assert!(risk["total"].as_u64().unwrap() >= 1);
    let focus = risk["claude_compact"].as_str().unwrap();
    assert!(focus.starts_with("/compact Keep: "), "{focus}");
    assert!(focus.contains("E501"), "{focus}");
    assert_eq!(risk["facts"][0]["kind"], "constraint");
}

#[test]
fn at_risk_within_zero_says_nothing() {
    let seen = follow("0");
    assert!(!seen.iter().any(|v| event(v) == "at_risk"), "{seen:#?}");
}
