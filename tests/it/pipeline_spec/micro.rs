//! Stage 3: micro_compact.

use super::*;

#[test]
fn micro_with_exactly_three_results_does_nothing() {
    let ws = workspace();
    let long = "x".repeat(5000);
    let mut h = vec![
        user("go"),
        calls(&["a", "b"]),
        results(&[("a", &long), ("b", &long)]),
        calls(&["c"]),
        results(&[("c", &long)]),
    ];
    let before = h.clone();
    let r = run(Stage::MicroCompact, &mut h, &store_in(&ws));
    assert!(!r.changed);
    assert_eq!(h, before);
    check_sizes(&r, &before, &h);
}

#[test]
fn micro_replaces_older_results_over_120_chars() {
    let ws = workspace();
    let c121 = "x".repeat(121);
    let c120 = "y".repeat(120);
    let long = "z".repeat(500);
    let mut h = vec![
        user("go"),
        calls(&["a", "b"]),
        results(&[("a", &c121), ("b", &c120)]),
        calls(&["c"]),
        results(&[("c", &long)]),
        calls(&["d", "e"]),
        results(&[("d", &long), ("e", "5")]),
    ];
    let before = h.clone();
    let r = run(Stage::MicroCompact, &mut h, &store_in(&ws));
    // Results in document order: a b c d e; the last three (c d e) are kept as they are.
    assert_eq!(
        result_contents(&h[2]),
        vec![Some(json!(PLACEHOLDER)), Some(json!(c120))]
    );
    assert_eq!(h[3..], before[3..]);
    assert_eq!(
        r.changes,
        vec![Change::Placeholder {
            message: 2,
            block: 0,
            tool_use_id: Some("a".into()),
            chars: 121
        }]
    );
    check_sizes(&r, &before, &h);
    assert_eq!(PLACEHOLDER.chars().count(), 50);
}

#[test]
fn micro_measures_code_points() {
    let ws = workspace();
    // 121 and 120 chars of 4-byte, 3-byte and 1-byte text: only the char count decides.
    let texts = [
        "😀".repeat(121),
        "😀".repeat(120),
        "解".repeat(121),
        "解".repeat(120),
        "é".repeat(121),
        "é".repeat(61),
    ];
    let ids = ["a", "b", "c", "d", "e", "f", "r1", "r2", "r3"];
    let mut pairs: Vec<(&str, &str)> = ids
        .iter()
        .zip(&texts)
        .map(|(i, t)| (*i, t.as_str()))
        .collect();
    pairs.extend([("r1", "1"), ("r2", "2"), ("r3", "3")]);
    let mut h = vec![user("go"), calls(&ids), results(&pairs)];
    run(Stage::MicroCompact, &mut h, &store_in(&ws));
    let p = Some(json!(PLACEHOLDER));
    let got = last_contents(&h);
    assert_eq!(
        got[..6],
        [
            p.clone(),
            Some(json!(texts[1])),
            p.clone(),
            Some(json!(texts[3])),
            p,
            Some(json!(texts[5])),
        ]
    );
}

#[test]
fn micro_counts_list_items_and_survives_null_and_missing_content() {
    let ws = workspace();
    let items = |n: usize| {
        Value::Array(
            (0..n)
                .map(|_| json!({"type": "text", "text": "t"}))
                .collect(),
        )
    };
    let one_big = json!([{"type": "text", "text": "w".repeat(10_000)}]);
    let mut h = vec![
        user("go"),
        calls(&["l121", "l120", "big", "nul", "mis", "r1", "r2", "r3"]),
        Message::user_blocks(vec![
            result_block("l121", items(121)),
            result_block("l120", items(120)),
            result_block("big", one_big.clone()),
            result_block("nul", Value::Null),
            json!({"type": "tool_result", "tool_use_id": "mis"}),
            block::tool_result("r1", "x".repeat(500)),
            block::tool_result("r2", "x".repeat(500)),
            block::tool_result("r3", "x".repeat(500)),
        ]),
    ];
    let r = run(Stage::MicroCompact, &mut h, &store_in(&ws));
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!(PLACEHOLDER)),
            Some(items(120)),
            Some(one_big),
            Some(Value::Null),
            None,
            Some(json!("x".repeat(500))),
            Some(json!("x".repeat(500))),
            Some(json!("x".repeat(500))),
        ]
    );
    assert_eq!(
        r.changes,
        vec![Change::Placeholder {
            message: 2,
            block: 0,
            tool_use_id: Some("l121".into()),
            chars: 121
        }]
    );
}

#[test]
fn micro_only_counts_results_in_user_list_messages() {
    let ws = workspace();
    let long = "x".repeat(500);
    // A tool_result block inside an assistant message is not a tool result (docs/pipeline.md "Messages"):
    // with it there would be four results and it would be replaced.
    let mut h = vec![
        Message::assistant_blocks(vec![block::tool_result("z", long.clone())]),
        user("tool_result"),
        calls(&["a", "b", "c"]),
        results(&[("a", &long), ("b", &long), ("c", &long)]),
    ];
    let before = h.clone();
    assert!(!run(Stage::MicroCompact, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);
}
