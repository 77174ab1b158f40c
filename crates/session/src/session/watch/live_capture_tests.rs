//! What a capture's follower holds (issue 39, item 5): a window of the conversation, not
//! every message of it (a 220 MB capture took `watch` to 147 MB), and forgetting what it
//! reported changes no item it reports.

use crate::session::capture::test_captures::thread_capture;

use super::held_tests::follow;
use super::*;

/// A capture of `calls` calls that starts again from a summary every 40 messages, with a
/// micro compaction now and then.
fn capture_lines(calls: u64) -> Vec<String> {
    thread_capture(calls, 40, 7)
}

#[test]
fn a_capture_follower_holds_a_window_and_reports_what_a_whole_follower_reports() {
    let short = capture_lines(1_500);
    let long = capture_lines(3_000);
    let (kept, all) = follow(&long, true);
    let (forgot, held_long) = follow(&long, false);
    let (_, held_short) = follow(&short, false);
    assert_eq!(kept, forgot);
    let count = |f: fn(&LiveItem) -> bool| kept.iter().filter(|i| f(i)).count();
    assert_eq!(count(|i| matches!(i, LiveItem::Call(_))), 3_000);
    assert!(count(|i| matches!(i, LiveItem::Compaction { .. })) >= 100);
    assert!(
        count(|i| matches!(i, LiveItem::Compaction { compaction, .. }
        if compaction.kind == crate::session::model::CompactionKind::Micro))
            > 0
    );
    // Messages and their origins behind the last reported, forgotten a batch at a time,
    // and calls the same: bounded whatever the length of the capture (the tool ids a
    // capture's follower remembers are its own, not counted here).
    let bound = 2 * (WHOLE_TAIL + FORGET_BATCH) + CALLS_TAIL + FORGET_BATCH + 32;
    assert!(
        held_short <= bound && held_long <= bound,
        "{held_short} items held after 1500 calls, {held_long} after 3000"
    );
    assert!(all > 4 * bound, "{all}: there was something to forget");
}
