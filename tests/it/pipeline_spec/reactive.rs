//! reactive_compact.

use super::*;

fn json_line(i: usize) -> String {
    format!("{{\"role\": \"user\", \"content\": \"m{i}\"}}")
}

#[test]
fn reactive_keeps_the_last_five_and_summarizes_the_rest() {
    let ws = workspace();
    let cfg = PipelineConfig::default();
    let h = numbered(12);
    let p = begin_reactive_compact(&h, &store_in(&ws), &cfg, NOW).unwrap();
    assert_eq!(p.stage(), Stage::ReactiveCompact);
    let head: Vec<String> = (0..7).map(json_line).collect();
    assert_eq!(p.request().user_text, format!("[{}]", head.join(", ")));
    assert_eq!(p.request().system, SYSTEM_TEXT);
    assert_eq!(p.request().max_tokens, 2000);
    // The transcript holds the whole history.
    let all: Vec<String> = (0..12).map(json_line).collect();
    assert_eq!(
        read(&ws, ".transcripts/transcript_1700000000.jsonl"),
        format!("{}\n", all.join("\n"))
    );
    let (after, report) = p.finish(&["S"], "req");
    let mut expected = vec![user(&summary_message("[Reactive compact]", "req", "\"S\""))];
    expected.extend_from_slice(&h[7..]);
    assert_eq!(after, expected);
    check_sizes(&report, &h, &after);
    assert!(matches!(
        &report.changes[..],
        [Change::Summarized {
            replaced: 7,
            kept_tail: 5,
            trigger: CompactTrigger::PromptTooLong,
            ..
        }]
    ));
}

#[test]
fn reactive_tail_steps_back_over_a_tool_pair() {
    let ws = workspace();
    let cfg = PipelineConfig::default();
    // len 10: tail_start 5 is a results message after a call at 4 -> 4.
    let h = vec![
        user("m0"),
        said("a"),
        user("m2"),
        said("b"),
        calls(&["x"]),
        results(&[("x", "1")]),
        calls(&["y"]),
        results(&[("y", "2")]),
        said("c"),
        user("m9"),
    ];
    assert_eq!(reactive_tail_start(&h, &cfg), 4);
    let p = begin_reactive_compact(&h, &store_in(&ws), &cfg, NOW).unwrap();
    let head: Vec<String> = h[..4]
        .iter()
        .map(ctxlab::message::ascii_json_message)
        .collect();
    assert_eq!(p.request().user_text, format!("[{}]", head.join(", ")));
    let (after, _) = p.finish(&["S"], "req");
    assert_eq!(after.len(), 7);
    assert_eq!(after[1..], h[4..]);
    assert_eq!(pairing_violation(&after), None);
}

#[test]
fn reactive_with_fewer_than_five_messages_summarizes_nothing() {
    let cfg = PipelineConfig::default();
    for n in [0usize, 3, 5] {
        let ws = workspace();
        let h = numbered(n);
        let p = begin_reactive_compact(&h, &store_in(&ws), &cfg, NOW).unwrap();
        assert_eq!(p.request().user_text, "[]", "n = {n}");
        assert!(ws.path().join(p.transcript().path.as_str()).is_file());
        let (after, _) = p.finish(&["S"], "req");
        assert_eq!(after.len(), n + 1);
        assert_eq!(after[1..], h[..]);
    }
    // 6 messages: tail_start 1 is a results message after a call at 0 -> 0.
    let ws = workspace();
    let mut h = vec![calls(&["a"]), results(&[("a", "1")])];
    h.extend(numbered(4));
    let p = begin_reactive_compact(&h, &store_in(&ws), &cfg, NOW).unwrap();
    assert_eq!(p.request().user_text, "[]");
    let (after, _) = p.finish(&["S"], "req");
    assert_eq!(after[1..], h[..]);
}
