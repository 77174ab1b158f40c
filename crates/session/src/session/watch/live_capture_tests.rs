//! What a capture's follower holds (issue 39, item 5): a window of the conversation, not
//! every message of it (a 220 MB capture took `watch` to 147 MB), and forgetting what it
//! reported changes no item it reports.

use crate::session::capture::test_captures::thread_capture;

use super::*;

/// A capture of `calls` calls that starts again from a summary every 40 messages, with a
/// micro compaction now and then.
fn capture_lines(calls: u64) -> Vec<String> {
    thread_capture(calls, 40, 7)
}

fn follow(lines: &[String], keep_all: bool) -> (Vec<LiveItem>, usize) {
    let mut live = LiveSession::new();
    live.keep_all = keep_all;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        live.push_line(i + 1, l, &mut out);
    }
    (out, live.held_items())
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
    // and calls the same: bounded whatever the length of the capture.
    let bound = 2 * (64 + 256) + 16 + 256 + 32;
    assert!(
        held_short <= bound && held_long <= bound,
        "{held_short} items held after 1500 calls, {held_long} after 3000"
    );
    assert!(all > 4 * bound, "{all}: there was something to forget");
}
