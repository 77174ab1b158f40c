//! Stage 4: compact_history, via pre_call.

use super::*;

#[test]
fn pre_call_compacts_only_over_50000() {
    // [{'role': 'user', 'content': '...'}] is 33 chars around the text.
    let ws = workspace();
    let store = store_in(&ws);
    let mut h = vec![user(&"x".repeat(49_967))];
    assert_eq!(estimate_size(&h), 50_000);
    let pre = pipeline().pre_call(&mut h, &store, NOW).unwrap();
    assert!(pre.pending.is_none());
    assert_eq!(pre.reports.len(), 3);
    assert!(pre.reports.iter().all(|r| !r.changed));
    assert!(!ws.path().join(".transcripts").exists());

    let mut h = vec![user(&"x".repeat(49_968))];
    let pre = pipeline().pre_call(&mut h, &store, NOW).unwrap();
    let pending = pre.pending.expect("50,001 is over the limit");
    assert_eq!(pending.stage(), Stage::CompactHistory);
    assert_eq!(pending.trigger(), &CompactTrigger::OverLimit);
    assert_eq!(
        pending.transcript().path,
        ".transcripts/transcript_1700000000.jsonl"
    );
    assert_eq!(
        read(&ws, ".transcripts/transcript_1700000000.jsonl"),
        format!(
            "{{\"role\": \"user\", \"content\": \"{}\"}}\n",
            "x".repeat(49_968)
        )
    );
}

#[test]
fn pre_call_decides_on_the_size_after_micro() {
    let ws = workspace();
    let c = "x".repeat(15_000);
    // 60,000 chars of results before; micro replaces a, leaving about 45,000.
    let mut h = vec![
        user("go"),
        calls(&["a", "b", "c", "d"]),
        results(&[("a", &c), ("b", &c), ("c", &c), ("d", &c)]),
    ];
    assert!(estimate_size(&h) > 60_000);
    let pre = pipeline().pre_call(&mut h, &store_in(&ws), NOW).unwrap();
    assert!(pre.pending.is_none());
    assert!(pre.reports[2].changed);
    assert_eq!(
        pre.reports.iter().map(|r| r.stage).collect::<Vec<_>>(),
        vec![
            Stage::ToolResultBudget,
            Stage::SnipCompact,
            Stage::MicroCompact
        ]
    );
    assert!(estimate_size(&h) <= 50_000);
}

#[test]
fn compact_history_transcript_request_and_summary_message() {
    let ws = workspace();
    let store = store_in(&ws);
    // A transcript name already taken: the new one is -2 and the old file keeps its bytes.
    std::fs::create_dir_all(ws.path().join(".transcripts")).unwrap();
    std::fs::write(
        ws.path().join(".transcripts/transcript_1700000000.jsonl"),
        "old",
    )
    .unwrap();
    let h = vec![
        user("h\u{e9}llo \"q\" \\ 😀\n\u{7f}/\u{8}\u{c}\u{1}"),
        Message::assistant_blocks(vec![
            block::text("ok"),
            block::tool_use("t1", "read_file", json!({"path": "a/b.rs", "n": 1.5})),
        ]),
        results(&[("t1", "fn main() {}")]),
    ];
    let cfg = PipelineConfig::default();
    let pending =
        begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, NOW).unwrap();
    // Lesson JSON: `"` and `\` escaped, \n \b \f short, 0x7f and non-ASCII as \uxxxx, the
    // emoji as a surrogate pair, `/` as is, Python's separators.
    let lines = [
        r#"{"role": "user", "content": "h\u00e9llo \"q\" \\ \ud83d\ude00\n\u007f/\b\f\u0001"}"#,
        r#"{"role": "assistant", "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a/b.rs", "n": 1.5}}]}"#,
        r#"{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}"}]}"#,
    ];
    let transcript = ".transcripts/transcript_1700000000-2.jsonl";
    assert_eq!(pending.transcript().path, transcript);
    assert_eq!(read(&ws, transcript), format!("{}\n", lines.join("\n")));
    assert_eq!(read(&ws, ".transcripts/transcript_1700000000.jsonl"), "old");
    let req = pending.request();
    assert_eq!(req.system, SYSTEM_TEXT);
    assert_eq!(SUMMARY_SYSTEM, SYSTEM_TEXT);
    assert_eq!(req.user_text, format!("[{}]", lines.join(", ")));
    assert_eq!(req.max_tokens, 2000);

    let (after, report) = pending.finish(&["  Goal: fix \"it\"\n"], "Fix the bug");
    assert_eq!(
        after,
        vec![user(&summary_message(
            "[Compacted]",
            "Fix the bug",
            "\"Goal: fix \\\"it\\\"\""
        ))]
    );
    assert_eq!(report.stage, Stage::CompactHistory);
    assert!(report.changed);
    check_sizes(&report, &h, &after);
    assert_eq!(report.files_written.len(), 1);
    assert_eq!(report.files_written[0].path, transcript);
    assert!(matches!(
        &report.changes[..],
        [Change::Summarized {
            replaced: 3,
            kept_tail: 0,
            trigger: CompactTrigger::OverLimit,
            focus: None,
            ..
        }]
    ));
}

#[test]
fn compact_focus_is_appended_to_the_system_text() {
    let ws = workspace();
    let h = vec![user("go")];
    let cfg = PipelineConfig::default();
    let p = begin_compact_history(
        &h,
        &store_in(&ws),
        &cfg,
        Some("the parser"),
        CompactTrigger::Requested,
        NOW,
    )
    .unwrap();
    assert_eq!(
        p.request().system,
        format!("{SYSTEM_TEXT} Pay special attention to preserving details about: the parser.")
    );
    let (_, report) = p.finish(&["s"], "go");
    assert!(matches!(
        &report.changes[..],
        [Change::Summarized { focus: Some(f), trigger: CompactTrigger::Requested, .. }] if f == "the parser"
    ));
}

#[test]
fn summarizer_input_is_cut_at_80000_chars() {
    let ws = workspace();
    let cfg = PipelineConfig::default();
    let store = store_in(&ws);
    // [{"role": "user", "content": "..."}] is 33 chars around the text.
    let h = vec![user(&"y".repeat(79_967))];
    let p = begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, NOW).unwrap();
    let full = format!(
        "[{{\"role\": \"user\", \"content\": \"{}\"}}]",
        "y".repeat(79_967)
    );
    assert_eq!(full.len(), 80_000);
    assert_eq!(p.request().user_text, full);

    let h = vec![user(&"y".repeat(79_968))];
    let p = begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, NOW).unwrap();
    let cut = format!(
        "[{{\"role\": \"user\", \"content\": \"{}\"}}",
        "y".repeat(79_968)
    );
    assert_eq!(p.request().user_text, cut);

    // The cut is on the JSON text, so it may split an escape: 30 chars of prefix, then
    // 13,328 six-char \u00e9 escapes (79,968 chars) and the first 2 chars of the next.
    let h = vec![user(&"é".repeat(20_000))];
    let p = begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, NOW).unwrap();
    assert_eq!(
        p.request().user_text,
        format!(
            "[{{\"role\": \"user\", \"content\": \"{}\\u",
            "\\u00e9".repeat(13_328)
        )
    );
}

#[test]
fn summary_text_is_joined_stripped_and_written_as_a_literal() {
    let cfg = PipelineConfig::default();
    let finish = |texts: &[&str]| {
        let ws = workspace();
        let p = begin_compact_history(
            &[user("go")],
            &store_in(&ws),
            &cfg,
            None,
            CompactTrigger::OverLimit,
            NOW,
        )
        .unwrap();
        let (h, _) = p.finish(texts, "req");
        h[0].text().unwrap().to_string()
    };
    let with = |literal: &str| summary_message("[Compacted]", "req", literal);
    // Only `"`, `\` and chars below 0x20 are escaped; DEL and non-ASCII stay; the trailing
    // tab is stripped.
    assert_eq!(
        finish(&["a\"b\\c\nd\u{1}\u{1f}\u{7f}é😀\t"]),
        with("\"a\\\"b\\\\c\\nd\\u0001\\u001f\u{7f}é😀\"")
    );
    // Blocks are joined by \n; U+001C..U+001F, U+3000 and U+0085 are Python whitespace.
    assert_eq!(
        finish(&["\u{1c}\u{3000} x ", " y\u{1f}\u{85}"]),
        with("\"x \\n y\"")
    );
    assert_eq!(
        finish(&["  ", "\u{1d}\u{2029}"]),
        with("\"(empty summary)\"")
    );
    assert_eq!(finish(&[]), with("\"(empty summary)\""));
    // U+200B is not whitespace for Python: it stays.
    assert_eq!(finish(&["\u{200b}x"]), with("\"\u{200b}x\""));
    // \b and \f in short form.
    assert_eq!(finish(&["a\u{8}\u{c}b"]), with("\"a\\b\\fb\""));
}
