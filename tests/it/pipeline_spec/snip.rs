//! Stage 2: snip_compact.

use super::*;

#[test]
fn snip_50_messages_is_left_alone() {
    let ws = workspace();
    let mut h = numbered(50);
    let before = h.clone();
    let r = run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert!(!r.changed);
    assert_eq!(h, before);
    check_sizes(&r, &before, &h);
}

#[test]
fn snip_51_messages_stays_51_with_one_removed() {
    let ws = workspace();
    let mut h = numbered(51);
    let before = h.clone();
    let r = run(Stage::SnipCompact, &mut h, &store_in(&ws));
    // head_end = 3, tail_start = 51 - 47 = 4: message 3 goes, the marker comes in.
    let mut expected = before[..3].to_vec();
    expected.push(user("[snipped 1 messages]"));
    expected.extend_from_slice(&before[4..]);
    assert_eq!(h, expected);
    assert_eq!(h.len(), 51);
    assert!(r.changed);
    assert_eq!(
        r.changes,
        vec![Change::Snipped {
            head_end: 3,
            tail_start: 4,
            removed: 1
        }]
    );
    check_sizes(&r, &before, &h);
    // The marker is a plain user message with string content, role first.
    assert_eq!(
        h[3].to_value(),
        json!({"role": "user", "content": "[snipped 1 messages]"})
    );
}

#[test]
fn snip_head_extends_over_consecutive_tool_result_messages() {
    let ws = workspace();
    // Message 2 calls tools; 3 and 4 are tool_result messages; 5 is plain.
    let mut h = vec![user("go"), said("ok"), calls(&["a"])];
    h.push(results(&[("a", "1")]));
    h.push(Message::user_blocks(vec![
        block::text("note"),
        block::tool_result("a", "again"),
    ]));
    h.extend(numbered(55));
    let len = h.len(); // 60
    let before = h.clone();
    let r = run(Stage::SnipCompact, &mut h, &store_in(&ws));
    // head_end 3 -> 5; tail_start = 60 - 47 = 13; 8 removed.
    let mut expected = before[..5].to_vec();
    expected.push(user("[snipped 8 messages]"));
    expected.extend_from_slice(&before[13..]);
    assert_eq!(h, expected);
    assert_eq!(
        r.changes,
        vec![Change::Snipped {
            head_end: 5,
            tail_start: 13,
            removed: 8
        }]
    );
    assert_eq!(h.len(), len - 8 + 1);

    // A user message with only text blocks, or string content, stops the extension.
    let mut h = vec![user("go"), said("ok"), calls(&["a"])];
    h.push(results(&[("a", "1")]));
    h.push(Message::user_blocks(vec![block::text("only text")]));
    h.push(results(&[("a", "late")]));
    h.extend(numbered(54));
    let before = h.clone();
    run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert_eq!(h[..4], before[..4]);
    assert_eq!(h[4], user("[snipped 9 messages]"));

    // Message 2 without a tool_use: no extension even if 3 is a tool_result message.
    let mut h = vec![user("go"), said("ok"), said("no tools")];
    h.push(results(&[("a", "1")]));
    h.extend(numbered(56));
    let before = h.clone();
    run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert_eq!(h[..3], before[..3]);
    assert_eq!(h[3], user("[snipped 10 messages]"));
}

#[test]
fn snip_tail_steps_back_once_over_a_tool_pair() {
    let ws = workspace();
    // 60 messages; tail_start = 13: message 13 is a tool_result message, 12 calls.
    let mut h = numbered(12);
    h.push(calls(&["t"]));
    h.push(results(&[("t", "out")]));
    h.extend(numbered(46));
    assert_eq!(h.len(), 60);
    let before = h.clone();
    let r = run(Stage::SnipCompact, &mut h, &store_in(&ws));
    let mut expected = before[..3].to_vec();
    expected.push(user("[snipped 9 messages]"));
    expected.extend_from_slice(&before[12..]);
    assert_eq!(h, expected);
    assert_eq!(
        r.changes,
        vec![Change::Snipped {
            head_end: 3,
            tail_start: 12,
            removed: 9
        }]
    );

    // No step back when message 13 is a tool_result message but 12 has no tool_use.
    let mut h = numbered(13);
    h.push(results(&[("t", "out")]));
    h.extend(numbered(46));
    let before = h.clone();
    run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert_eq!(h[4..], before[13..]);
    assert_eq!(h[3], user("[snipped 10 messages]"));

    // Nor when 12 calls tools but 13 is plain.
    let mut h = numbered(12);
    h.push(calls(&["t"]));
    h.extend(numbered(47));
    let before = h.clone();
    run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert_eq!(h[4..], before[13..]);
}

#[test]
fn snip_does_nothing_when_head_reaches_the_tail() {
    let ws = workspace();
    // 51 messages, head extends from 3 to 5 > tail_start 4.
    let mut h = vec![user("go"), said("ok"), calls(&["a"])];
    h.push(results(&[("a", "1")]));
    h.push(results(&[("a", "2")]));
    h.extend(numbered(46));
    assert_eq!(h.len(), 51);
    let before = h.clone();
    let r = run(Stage::SnipCompact, &mut h, &store_in(&ws));
    assert!(!r.changed);
    assert_eq!(h, before);

    // head_end == tail_start == 4.
    let mut h = vec![user("go"), said("ok"), calls(&["a"])];
    h.push(results(&[("a", "1")]));
    h.extend(numbered(47));
    let before = h.clone();
    assert!(!run(Stage::SnipCompact, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);

    // The tail stepping back onto the head: tail 4 -> 3 == head_end.
    let mut h = numbered(3);
    h.push(calls(&["a"]));
    h.push(results(&[("a", "1")]));
    h.extend(numbered(46));
    assert_eq!(h.len(), 51);
    let before = h.clone();
    assert!(!run(Stage::SnipCompact, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);
}

#[test]
fn snip_keeps_a_compacted_message_at_the_start() {
    let ws = workspace();
    let compacted = summary_message("[Compacted]", "Fix it", "\"done\"");
    let mut h = vec![user(&compacted)];
    for i in 0..30 {
        let id = format!("t{i}");
        h.push(calls(&[&id]));
        h.push(results(&[(&id, "ok")]));
    }
    assert_eq!(h.len(), 61);
    let before = h.clone();
    run(Stage::SnipCompact, &mut h, &store_in(&ws));
    // Message 2 is a results message (no tool_use): head stays 3. tail_start = 14 is a
    // tool_result message after a call at 13: steps back to 13. Removed 3..13 = 10.
    assert_eq!(h[..3], before[..3]);
    assert_eq!(h[3], user("[snipped 10 messages]"));
    assert_eq!(h[4..], before[13..]);
    assert_eq!(pairing_violation(&h), None);
}
