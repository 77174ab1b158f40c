//! The accounting on small hand-made histories whose answer is known: each replays a
//! session under a strategy on a scratch store and checks the classes it reports.

use serde_json::json;

use super::*;
use crate::compact::{PipelineConfig, Strategy};
use crate::message::{Message, block};
use crate::store::Store;

fn run(
    strategy: Strategy,
    tweak: impl Fn(&mut PipelineConfig),
    session: Vec<Message>,
) -> StrategyRun {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let mut config = PipelineConfig::for_strategy(strategy);
    tweak(&mut config);
    let options = RunOptions {
        detail: true,
        ..RunOptions::default()
    };
    run_strategy(session, config, &store, &options, |_| {}).unwrap()
}

fn text(t: &str) -> String {
    format!("{t} {}", "x".repeat(200))
}

/// One assistant message asks for five results at once; the next call is the first to
/// send them.
fn batch_of_five() -> Vec<Message> {
    let ids = ["a", "b", "c", "d", "e"];
    vec![
        Message::user_text("look at five files"),
        Message::assistant_blocks(
            ids.iter()
                .map(|id| block::tool_use(*id, "bash", json!({"command": format!("cat {id}")})))
                .collect(),
        ),
        Message::user_blocks(
            ids.iter()
                .map(|id| block::tool_result(*id, text(&format!("result {id}"))))
                .collect(),
        ),
        Message::assistant_blocks(vec![block::text("read them all")]),
    ]
}

fn state_of(run: &StrategyRun, tool_use_id: &str, call: usize) -> PieceState {
    let d = run.detail.as_ref().unwrap();
    let id = d
        .pieces
        .iter()
        .position(|p| p.tool_use_id.as_deref() == Some(tool_use_id))
        .unwrap();
    d.states[call - 1][id]
}

#[test]
fn s08_micro_replacing_results_never_sent_is_unseen_and_lost() {
    let r = run(Strategy::S08, |_| {}, batch_of_five());
    let result_chars = text("result a").chars().count();
    assert_eq!(r.calls.len(), 2);
    assert_eq!(r.calls[1].unseen_replaced, 2);
    assert_eq!(r.totals.unseen_replaced.pieces, 2);
    assert_eq!(r.totals.unseen_replaced.chars, 2 * result_chars);
    assert_eq!(r.totals.unseen_unreachable.pieces, 2);
    for id in ["a", "b"] {
        let s = state_of(&r, id, 2);
        assert_eq!((s.reach, s.kept), (Reach::Lost, Kept::Placeholder), "{id}");
    }
    for id in ["c", "d", "e"] {
        assert_eq!(state_of(&r, id, 2).reach, Reach::InContext, "{id}");
    }
    assert_eq!(r.calls[1].reach.lost.chars, 2 * result_chars);
    assert_eq!(r.totals.reach_end.lost.pieces, 2);
    assert_eq!(r.totals.orphans_sent, 0);
}

#[test]
fn guarded_sends_every_result_whole_the_first_time() {
    let r = run(Strategy::Guarded, |_| {}, batch_of_five());
    assert_eq!(r.totals.unseen_replaced.pieces, 0);
    for id in ["a", "b", "c", "d", "e"] {
        assert_eq!(state_of(&r, id, 2).reach, Reach::InContext, "{id}");
    }
    assert_eq!(r.totals.reach_end.lost, Amount::default());
}

/// Twelve exchanges of plain text: with `snip_max_messages = 8` the middle is cut.
fn chatter() -> Vec<Message> {
    let mut out = Vec::new();
    for i in 0..12 {
        out.push(Message::user_text(text(&format!("question {i}"))));
        out.push(Message::assistant_blocks(vec![block::text(text(
            &format!("answer {i}"),
        ))]));
    }
    out
}

#[test]
fn s08_snip_loses_the_text_it_cuts_and_guarded_archives_it() {
    let snip = |c: &mut PipelineConfig| c.snip_max_messages = 8;
    let s08 = run(Strategy::S08, snip, chatter());
    assert!(s08.totals.fired.get("snip_compact").copied().unwrap_or(0) > 0);
    let lost = s08.totals.reach_end.lost;
    assert!(lost.pieces > 0);
    assert_eq!(s08.totals.reach_end.referenced.pieces, 0);
    assert_eq!(s08.totals.reach_end.on_disk.pieces, 0);
    // Every piece is counted once, in one class.
    assert_eq!(s08.totals.reach_end.total().pieces, 24);
    let d = s08.detail.as_ref().unwrap();
    assert!(
        d.end
            .iter()
            .any(|s| (s.reach, s.kept) == (Reach::Lost, Kept::Nothing))
    );

    let guarded = run(Strategy::Guarded, snip, chatter());
    assert_eq!(guarded.totals.reach_end.lost, Amount::default());
    // What guarded cut is still one read away: the marker names the archive.
    assert_eq!(guarded.totals.reach_end.referenced.pieces, lost.pieces);
    let d = guarded.detail.as_ref().unwrap();
    assert!(
        d.end
            .iter()
            .any(|s| (s.reach, s.kept) == (Reach::Referenced, Kept::Path))
    );
    assert_eq!(guarded.totals.orphans_sent, 0);
}

#[test]
fn a_summary_leaves_s08_pieces_on_disk_and_guarded_pieces_referenced() {
    let limit = |c: &mut PipelineConfig| c.context_limit = 2_000;
    let s08 = run(Strategy::S08, limit, chatter());
    assert!(s08.totals.summary_calls > 0);
    assert!(s08.totals.summary_input_chars > 0);
    // s08's summary names no transcript: what it replaced is on disk, out of reach.
    assert!(s08.totals.reach_end.on_disk.pieces > 0);
    let d = s08.detail.as_ref().unwrap();
    assert!(
        d.end
            .iter()
            .any(|s| (s.reach, s.kept) == (Reach::OnDisk, Kept::Summary))
    );

    let guarded = run(Strategy::Guarded, limit, chatter());
    assert!(guarded.totals.summary_calls > 0);
    assert_eq!(guarded.totals.reach_end.lost, Amount::default());
    assert_eq!(guarded.totals.reach_end.on_disk, Amount::default());
    assert!(guarded.totals.reach_end.referenced.pieces > 0);
}

#[test]
fn a_result_persisted_before_it_was_sent_is_unseen_but_referenced() {
    let big = "y".repeat(40_000);
    let session = vec![
        Message::user_text("read the log"),
        Message::assistant_blocks(vec![block::tool_use(
            "big",
            "bash",
            json!({"command": "cat log"}),
        )]),
        Message::user_blocks(vec![block::tool_result("big", big.clone())]),
        Message::assistant_blocks(vec![block::text("it is long")]),
    ];
    for strategy in [Strategy::S08, Strategy::Guarded] {
        let r = run(strategy, |c| c.budget_chars = 10_000, session.clone());
        let s = state_of(&r, "big", 2);
        assert_eq!(
            (s.reach, s.kept),
            (Reach::Referenced, Kept::Preview),
            "{strategy:?}"
        );
        assert_eq!(r.totals.unseen_replaced.chars, 40_000, "{strategy:?}");
        assert_eq!(
            r.totals.unseen_unreachable,
            Amount::default(),
            "{strategy:?}"
        );
        assert_eq!(r.totals.reach_end.lost, Amount::default(), "{strategy:?}");
    }
}

#[test]
fn a_request_with_a_broken_pair_is_counted() {
    // The session itself answers a call that was never made: every request after it is
    // broken, whatever the strategy does.
    let session = vec![
        Message::user_text("start"),
        Message::assistant_blocks(vec![block::text("ok")]),
        Message::user_blocks(vec![block::tool_result("ghost", "orphan")]),
        Message::assistant_blocks(vec![block::text("hm")]),
    ];
    let r = run(Strategy::S08, |_| {}, session);
    assert_eq!(r.totals.orphans_sent, 1);
    assert!(r.calls[1].orphan.is_some());
    assert!(r.calls[0].orphan.is_none());
}
