//! Stage 1: tool_result_budget.

use super::*;

#[test]
fn budget_total_exactly_200000_is_left_alone() {
    let ws = workspace();
    let mut h = batch(&[("a", "x".repeat(100_000)), ("b", "y".repeat(100_000))]);
    let before = h.clone();
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert!(!r.changed);
    assert!(r.changes.is_empty() && r.files_written.is_empty());
    assert_eq!(h, before);
    check_sizes(&r, &before, &h);
    assert!(!ws.path().join(".task_outputs").exists());
}

#[test]
fn budget_total_200001_persists_the_largest_with_exact_marker_and_file() {
    let ws = workspace();
    let big = text_of("0123456789", 100_001);
    let mut h = batch(&[
        ("a", "s".repeat(99_999)),
        ("b", big.clone()),
        ("c", "z".to_string()),
    ]);
    let before = h.clone();
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert!(r.changed);
    let path = result_path("b");
    let m = marker(&path, &big[..2000]);
    // 19 + 13 + 10 + 20 template chars, 32 for the path, 2,000 of preview.
    assert_eq!(m.chars().count(), 2094);
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!("s".repeat(99_999))),
            Some(json!(m)),
            Some(json!("z"))
        ]
    );
    assert_eq!(read(&ws, &path), big);
    assert_eq!(
        r.changes,
        vec![Change::Persisted {
            message: 2,
            // Block indices count every block: the assistant's text comes first only in
            // the call message, the results message holds results only.
            block: 1,
            tool_use_id: Some("b".into()),
            chars: 100_001,
            marker_chars: 2094,
            path: path.clone(),
        }]
    );
    assert_eq!(
        r.files_written,
        vec![FileWritten {
            path,
            status: WriteStatus::Created,
            chars: 100_001,
            bytes: 100_001,
        }]
    );
    check_sizes(&r, &before, &h);
}

#[test]
fn budget_looks_only_at_the_last_message() {
    let ws = workspace();
    // A huge batch that is not the last message.
    let mut h = batch(&[("a", "x".repeat(300_000))]);
    h.push(said("done"));
    let before = h.clone();
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);
    // A huge user message with string content.
    let mut h = vec![user(&"x".repeat(300_000))];
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    // Text blocks of the last message do not count, only tool_result blocks.
    let mut h = vec![
        user("go"),
        calls(&["a"]),
        Message::user_blocks(vec![
            block::text("y".repeat(300_000)),
            block::tool_result("a", "small"),
        ]),
    ];
    let before = h.clone();
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);
    // An empty history.
    let mut h = Vec::new();
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    assert!(!ws.path().join(".task_outputs").exists());
}

#[test]
fn budget_sizes_are_code_points_not_bytes() {
    let ws = workspace();
    // 200,000 CJK chars are 600,000 bytes but exactly the budget.
    let mut h = batch(&[("a", "解".repeat(200_000))]);
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    // One more char crosses it; the preview is 2,000 chars, not 2,000 bytes.
    let mut h = batch(&[("a", "解".repeat(200_001))]);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert!(r.changed);
    assert_eq!(
        last_contents(&h),
        vec![Some(json!(marker(&result_path("a"), &"解".repeat(2000))))]
    );
    assert_eq!(read(&ws, &result_path("a")), "解".repeat(200_001));
    assert_eq!(r.files_written[0].chars, 200_001);
    assert_eq!(r.files_written[0].bytes, 600_003);
}

#[test]
fn budget_preview_cut_keeps_whole_code_points_and_may_split_a_modifier() {
    let ws = workspace();
    // Char 2,000 is an emoji: it is in the preview, whole.
    let emoji = format!("{}😀{}", "a".repeat(1999), "b".repeat(198_001));
    // Char 2,000 is 👍 and char 2,001 its skin-tone modifier: the preview splits them.
    let thumbs = format!("{}👍🏽{}", "c".repeat(1999), "d".repeat(198_000));
    assert_eq!(emoji.chars().count(), 200_001);
    assert_eq!(thumbs.chars().count(), 200_001);
    let mut h = batch(&[("e", emoji.clone()), ("t", thumbs.clone())]);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    // Equal sizes: the first in document order goes first; after it the total is
    // 2,094 + 200,001 > 200,000, so the second goes too.
    assert_eq!(r.changes.len(), 2);
    let e_preview = format!("{}😀", "a".repeat(1999));
    let t_preview = format!("{}\u{1F44D}", "c".repeat(1999));
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!(marker(&result_path("e"), &e_preview))),
            Some(json!(marker(&result_path("t"), &t_preview))),
        ]
    );
    assert_eq!(read(&ws, &result_path("e")), emoji);
    assert_eq!(read(&ws, &result_path("t")), thumbs);
}

#[test]
fn budget_walks_largest_first_not_document_order() {
    let ws = workspace();
    let mut h = batch(&[("a", "a".repeat(40_000)), ("b", "b".repeat(170_000))]);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    // Persisting b leaves 40,000 + 2,094: done, a stays although it is over 30,000.
    assert_eq!(r.changes.len(), 1);
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!("a".repeat(40_000))),
            Some(json!(marker(&result_path("b"), &"b".repeat(2000))))
        ]
    );
}

#[test]
fn budget_equal_sizes_keep_document_order() {
    let ws = workspace();
    let mut h = batch(&[
        ("a", "a".repeat(80_000)),
        ("b", "b".repeat(80_000)),
        ("c", "c".repeat(80_000)),
    ]);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    // 240,000 -> a persisted -> 2,094 + 160,000 <= 200,000: stop.
    let ids: Vec<_> = r
        .changes
        .iter()
        .map(|c| match c {
            Change::Persisted { tool_use_id, .. } => tool_use_id.clone().unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, vec!["a"]);
    assert!(!ws.path().join(result_path("b")).exists());
}

#[test]
fn budget_recomputes_with_the_marker_and_stops_as_soon_as_within() {
    let ws = workspace();
    // 120,000 + 110,000 + 100,000 = 330,000.
    // a -> 2,094 + 210,000 = 212,094 > 200,000 -> b -> 2,094 + 2,094 + 100,000: stop; c stays.
    let mut h = batch(&[
        ("a", "a".repeat(120_000)),
        ("b", "b".repeat(110_000)),
        ("c", "c".repeat(100_000)),
    ]);
    let before = h.clone();
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!(marker(&result_path("a"), &"a".repeat(2000)))),
            Some(json!(marker(&result_path("b"), &"b".repeat(2000)))),
            Some(json!("c".repeat(100_000))),
        ]
    );
    assert_eq!(r.files_written.len(), 2);
    check_sizes(&r, &before, &h);

    // The marker's own chars count: without a (40,000) the rest is 199,000, but with its
    // 2,094-char marker the total is 201,094, so b (35,000) goes too.
    let ws = workspace();
    let mut contents = vec![("a", "a".repeat(40_000)), ("b", "b".repeat(35_000))];
    for id in ["c1", "c2", "c3", "c4", "c5"] {
        contents.push((id, "c".repeat(30_000)));
    }
    contents.push(("d", "d".repeat(14_000)));
    let mut h = batch(&contents);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    let persisted: Vec<_> = r.files_written.iter().map(|f| f.path.clone()).collect();
    assert_eq!(persisted, vec![result_path("a"), result_path("b")]);
}

#[test]
fn budget_skips_blocks_at_the_threshold_and_may_stay_over() {
    let ws = workspace();
    // Seven blocks of exactly 30,000: 210,000 > budget, none is over the threshold.
    let ids = ["a", "b", "c", "d", "e", "f", "g"];
    let contents: Vec<_> = ids.iter().map(|id| (*id, "q".repeat(30_000))).collect();
    let mut h = batch(&contents);
    let before = h.clone();
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert!(!r.changed);
    assert_eq!(h, before);
    assert!(!ws.path().join(".task_outputs").exists());

    // One of them at 30,001: it goes; 180,000 + 2,094 is within.
    let mut contents = contents;
    contents[3].1.push('q');
    let mut h = batch(&contents);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert_eq!(r.files_written.len(), 1);
    assert_eq!(r.files_written[0].path, result_path("d"));

    // 40,000 + 8 x 25,000: after persisting the 40,000 the total is 202,096, still over,
    // and nothing else is over 30,000: the budget stays exceeded.
    let ws = workspace();
    let mut contents = vec![("big", "b".repeat(40_000))];
    let small: Vec<String> = (0..8).map(|i| format!("s{i}")).collect();
    for id in &small {
        contents.push((id.as_str(), "s".repeat(25_000)));
    }
    let mut h = batch(&contents);
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert_eq!(r.changes.len(), 1);
    let total: usize = last_contents(&h)
        .iter()
        .map(|c| c.as_ref().unwrap().as_str().unwrap().chars().count())
        .sum();
    // The marker for `big.txt` is 62 + 34 + 2,000 = 2,096 chars.
    assert_eq!(total, 2_096 + 200_000);
}

#[test]
fn budget_list_content_is_sized_and_persisted_as_python_str() {
    let ws = workspace();
    // str([{'type': 'text', 'text': 'xxx'}]): 27 chars before the text, 3 after.
    let list = |n: usize| json!([{"type": "text", "text": "x".repeat(n)}]);
    let mut h = vec![
        user("go"),
        calls(&["a"]),
        Message::user_blocks(vec![result_block("a", list(199_970))]),
    ];
    let before = h.clone();
    assert!(!run(Stage::ToolResultBudget, &mut h, &store_in(&ws)).changed);
    assert_eq!(h, before);

    let mut h = vec![
        user("go"),
        calls(&["a"]),
        Message::user_blocks(vec![result_block("a", list(199_971))]),
    ];
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    let full = format!("[{{'type': 'text', 'text': '{}'}}]", "x".repeat(199_971));
    assert_eq!(read(&ws, &result_path("a")), full);
    let preview: String = full.chars().take(2000).collect();
    assert_eq!(
        last_contents(&h),
        vec![Some(json!(marker(&result_path("a"), &preview)))]
    );
    assert!(matches!(
        r.changes[0],
        Change::Persisted { chars: 200_001, .. }
    ));

    // An apostrophe switches Python to double quotes; the newline is written `\n`.
    // 27 + len("it's") + 2 + N + 3 = N + 36.
    let ws = workspace();
    let text = format!("it's\n{}", "x".repeat(199_965));
    let mut h = vec![
        user("go"),
        calls(&["a"]),
        Message::user_blocks(vec![result_block(
            "a",
            json!([{"type": "text", "text": text}]),
        )]),
    ];
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert!(r.changed);
    assert_eq!(
        read(&ws, &result_path("a")),
        format!(
            "[{{'type': 'text', 'text': \"it's\\n{}\"}}]",
            "x".repeat(199_965)
        )
    );
}

#[test]
fn budget_counts_null_and_missing_content_as_empty() {
    let ws = workspace();
    let mut h = vec![
        user("go"),
        calls(&["a", "n", "m"]),
        Message::user_blocks(vec![
            block::tool_result("a", "x".repeat(200_001)),
            result_block("n", Value::Null),
            json!({"type": "tool_result", "tool_use_id": "m"}),
        ]),
    ];
    let r = run(Stage::ToolResultBudget, &mut h, &store_in(&ws));
    assert_eq!(r.changes.len(), 1);
    assert_eq!(
        last_contents(&h),
        vec![
            Some(json!(marker(&result_path("a"), &"x".repeat(2000)))),
            Some(Value::Null),
            None
        ]
    );
}

#[test]
fn preview_stage_decides_the_same_and_writes_nothing() {
    let ws = workspace();
    let h = batch(&[("a", "x".repeat(200_001))]);
    let before = h.clone();
    let r = pipeline()
        .preview_stage(Stage::ToolResultBudget, &h, &store_in(&ws))
        .unwrap();
    assert!(r.changed);
    assert_eq!(r.files_written[0].path, result_path("a"));
    assert_eq!(h, before);
    assert!(!ws.path().join(".task_outputs").exists());
}
