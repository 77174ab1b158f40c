//! The memo analyses each distinct message once (issue 36): on a rollout whose every
//! compaction keeps every prompt so far, the messages handed to the analysis grow as the
//! square of the turns, the messages analysed as the turns; and the reports are the ones
//! `analyze` gives without it.

use std::collections::HashSet;

use super::*;
use crate::forgot::CompactionInput;
use crate::forgot::from_session::each_input_with_kept;
use crate::forgot::test_rollouts::rollout;
use crate::forgot::{analyze, analyze_with};
use crate::session::model::Session;
use crate::session::parse_session_text;

/// Walks every compaction of `s` with one memo, handing `each` the compaction's number,
/// its input and the memo; the memo after the walk.
fn walk_with_memo(s: &Session, mut each: impl FnMut(usize, &CompactionInput, &mut Memo)) -> Memo {
    let mut memo = Memo::default();
    let mut count = 0;
    each_input_with_kept(
        s,
        |_, c| c.kept.clone(),
        |input| {
            count += 1;
            each(count, input, &mut memo);
        },
    );
    memo
}

/// (messages handed to the analysis, distinct ones among them, messages the memo analysed)
fn work(turns: usize) -> (usize, usize, u64) {
    let s = parse_session_text(&rollout(turns, true)).unwrap();
    assert_eq!(s.compactions.len(), turns);
    let (mut handed, mut distinct) = (0, HashSet::new());
    let memo = walk_with_memo(&s, |count, input, memo| {
        let seen = input
            .before
            .iter()
            .map(|n| (&n.message, n.injected))
            .chain(input.kept.messages.iter().map(|m| (m, false)));
        for (m, injected) in seen {
            handed += 1;
            distinct.insert((m.fingerprint(), injected));
        }
        let report = analyze_with(count, input, memo);
        assert_eq!(report, analyze(count, input), "compaction {count}");
    });
    (handed, distinct.len(), memo.analysed())
}

#[test]
fn each_distinct_message_is_analysed_once() {
    let (h1, d1, a1) = work(60);
    let (h2, d2, a2) = work(120);
    // The history grows with the turns: twice the turns hand about four times the messages.
    assert!(h2 as f64 / h1 as f64 > 3.5, "{h1} then {h2}");
    assert_eq!(
        a1, d1 as u64,
        "analysed {a1} of {d1} distinct ({h1} handed)"
    );
    assert_eq!(
        a2, d2 as u64,
        "analysed {a2} of {d2} distinct ({h2} handed)"
    );
    let grew = a2 as f64 / a1 as f64;
    assert!(
        grew <= 2.1,
        "twice the turns analysed x{grew:.2} the messages"
    );
}

/// A message the compactions stop keeping is let go at the next sweep; one still kept is
/// not analysed again.
#[test]
fn a_sweep_lets_go_of_what_the_last_compaction_did_not_use() {
    let (a, b) = (Message::user_text("a"), Message::user_text("b"));
    let mut memo = Memo::default();
    memo.id(&a, false);
    memo.id(&b, false);
    memo.sweep();
    memo.id(&a, false);
    memo.sweep();
    assert_eq!(memo.analysed(), 2);
    memo.id(&a, false);
    memo.id(&b, false);
    assert_eq!(memo.analysed(), 3, "b was let go and analysed again");
    // Injected or not, the same text is two parts of different kinds.
    memo.id(&a, true);
    assert_eq!(memo.analysed(), 4);
}

/// The facts check's reference (the summary and every kept message, joined) is built only
/// for a compaction that dropped a fact (issue 36: a Codex compaction keeps thousands of
/// prompts, and most compactions of a long rollout drop none). Here every compaction keeps
/// every prompt so far and drops only an answer that states no fact; one whose dropped
/// answer states a decision has its reference built.
#[test]
fn a_reference_is_built_only_for_a_compaction_with_facts() {
    let referenced = |text: &str| {
        let rollout = rollout(40, true).replace("is gone.", text);
        let s = parse_session_text(&rollout).unwrap();
        walk_with_memo(&s, |count, input, memo| {
            analyze_with(count, input, memo);
        })
        .referenced()
    };
    assert_eq!(referenced("is gone."), 0);
    // Each compaction drops the answer before it: its kept prompts are joined.
    assert!(referenced("is gone; we decided to keep the cache rather than drop it.") > 40);
}

/// A place a sweep let go is given to the next new message, and each id reads its own
/// message's entry, not the one that held the place before.
#[test]
fn a_place_let_go_is_reused_for_another_message() {
    let chars = |memo: &Memo, id| memo.sized(id).map(|(_, c)| c).collect::<Vec<_>>();
    let (a, b, c) = (
        Message::user_text("a"),
        Message::user_text("bb"),
        Message::user_text("cccc"),
    );
    let mut memo = Memo::default();
    let ia = memo.id(&a, false);
    let ib = memo.id(&b, false);
    memo.sweep();
    memo.id(&a, false);
    memo.sweep();
    let ic = memo.id(&c, false);
    assert_eq!(ic, ib, "c takes the place b left");
    assert_eq!(chars(&memo, ic), vec![4]);
    assert_eq!(memo.id(&a, false), ia);
    assert_eq!(chars(&memo, ia), vec![1]);
    // b comes back: analysed again, in a new place.
    let ib2 = memo.id(&b, false);
    assert_ne!(ib2, ic);
    assert_eq!(chars(&memo, ib2), vec![2]);
    assert_eq!(memo.analysed(), 4);
}
