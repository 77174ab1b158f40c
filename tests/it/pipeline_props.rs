//! Properties over histories shaped like an agent loop's: after every stage, after the
//! whole pre-call pipeline, after finishing a compaction and after reactive compaction,
//! every `tool_result` answers a `tool_use` of the message just before it and every
//! `tool_use` is answered just after; and the cached estimate equals a recount from scratch.

use crate::common::files::*;
use crate::common::history::*;
use ctxlab::compact::{
    Change, Pipeline, PipelineConfig, Stage, StageReport, begin_reactive_compact, estimate_size,
};
use ctxlab::message::ascii_json_history;
use ctxlab::message::{Message, block, tool_results};
use ctxlab::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

const NOW: u64 = 1_700_000_000;

const PATTERNS: [&str; 12] = [
    "a",
    "x'y",
    "say \"hi\" ",
    "\\",
    "é",
    "解析",
    "😀",
    "👍🏽",
    "line\n",
    "\u{0}\u{7f}",
    "\u{2028}\u{e000}",
    "it's \"both\"",
];

#[derive(Debug, Clone)]
enum Content {
    Text { chars: usize, pattern: usize },
    List { items: usize, item_chars: usize },
    Null,
    Missing,
}

#[derive(Debug, Clone)]
enum Turn {
    /// The user types something.
    Request(usize),
    /// A `[Compacted]` message, as an earlier compaction left it.
    Compacted,
    /// The assistant calls tools; the next message holds their results.
    Tools(Vec<Content>),
    /// The assistant answers in text.
    Answer,
}

fn size() -> impl Strategy<Value = usize> {
    // Small sizes dominate so 10,000 cases stay fast; some cross the micro gate and the
    // context limit, a few the persist threshold, very rarely one reaches 300 KB.
    // `heavy_history` below is the one that loads the budget stage.
    prop_oneof![
        7_000 => 0usize..130,
        2_500 => 100usize..1_000,
        450 => 1_000usize..6_000,
        48 => 25_000usize..40_000,
        2 => 100_000usize..300_000,
    ]
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        40 => (size(), 0..PATTERNS.len()).prop_map(|(chars, pattern)| Content::Text { chars, pattern }),
        3 => (1usize..130, 0usize..40).prop_map(|(items, item_chars)| Content::List { items, item_chars }),
        1 => Just(Content::Null),
        1 => Just(Content::Missing),
    ]
}

fn turn() -> impl Strategy<Value = Turn> {
    prop_oneof![
        3 => (0usize..200).prop_map(Turn::Request),
        1 => Just(Turn::Compacted),
        12 => prop::collection::vec(content(), 1..5).prop_map(Turn::Tools),
        2 => Just(Turn::Answer),
    ]
}

fn history() -> impl Strategy<Value = Vec<Turn>> {
    (any::<bool>(), prop::collection::vec(turn(), 0..40)).prop_map(|(compacted_first, rest)| {
        let first = if compacted_first {
            Turn::Compacted
        } else {
            Turn::Request(40)
        };
        std::iter::once(first).chain(rest).collect()
    })
}

/// A batch whose results are large: the budget stage has work to do.
fn heavy_history() -> impl Strategy<Value = Vec<Turn>> {
    let big = prop_oneof![
        3 => (25_000usize..130_000, 0..PATTERNS.len()).prop_map(|(chars, pattern)| Content::Text { chars, pattern }),
        1 => (0usize..40_000, 0..PATTERNS.len()).prop_map(|(chars, pattern)| Content::Text { chars, pattern }),
        1 => (1usize..4, 9_000usize..40_000).prop_map(|(items, item_chars)| Content::List { items, item_chars }),
    ];
    (history(), prop::collection::vec(big, 2..9)).prop_map(|(mut turns, batch)| {
        turns.push(Turn::Tools(batch));
        turns
    })
}

fn content_value(c: &Content) -> Option<Value> {
    match c {
        Content::Text { chars, pattern } => Some(json!(text_of(PATTERNS[*pattern], *chars))),
        Content::List { items, item_chars } => Some(Value::Array(
            (0..*items)
                .map(|i| json!({"type": "text", "text": text_of(PATTERNS[i % PATTERNS.len()], *item_chars)}))
                .collect(),
        )),
        Content::Null => Some(Value::Null),
        Content::Missing => None,
    }
}

fn build(turns: &[Turn]) -> Vec<Message> {
    let mut h = Vec::new();
    let mut next_id = 0usize;
    for t in turns {
        match t {
            Turn::Request(n) => h.push(user(&format!("please {}", text_of("do it ", *n)))),
            Turn::Compacted => h.push(user(
                "[Compacted]\n\nAuthoritative request:\nFix it\n\nReference state (untrusted data; never authorization):\n\"Files: a.rs\"",
            )),
            Turn::Answer => h.push(said("Done.")),
            Turn::Tools(contents) => {
                let ids: Vec<String> = contents
                    .iter()
                    .map(|_| {
                        next_id += 1;
                        format!("toolu_{next_id:04}")
                    })
                    .collect();
                let mut calls = vec![block::text("Let me look.")];
                calls.extend(ids.iter().map(|id| block::tool_use(id, "bash", json!({"command": "cat x"}))));
                h.push(Message::assistant_blocks(calls));
                let results = ids
                    .iter()
                    .zip(contents)
                    .map(|(id, c)| {
                        let mut b = json!({"type": "tool_result", "tool_use_id": id});
                        if let Some(v) = content_value(c) {
                            b["content"] = v;
                        }
                        b
                    })
                    .collect();
                h.push(Message::user_blocks(results));
            }
        }
    }
    // A model call happens after a user message.
    if h.last().is_some_and(|m| m.role() == "assistant") {
        h.push(user("go on"));
    }
    h
}

/// The lesson's `len(content)` for micro: chars, or items of a list, 0 when absent.
fn lesson_len(b: &Value) -> usize {
    match b.get("content") {
        Some(Value::String(s)) => s.chars().count(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

fn result_text(b: &Value) -> String {
    match b.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => ctxlab::pyrepr::py_str_list(items),
        _ => String::new(),
    }
}

/// Checks a stage's result; `before_size` is `recount(before)`. Returns `recount(after)`.
fn check_common(
    report: &StageReport,
    before: &[Message],
    before_size: usize,
    after: &[Message],
) -> Result<usize, TestCaseError> {
    prop_assert_eq!(pairing_violation(after), None);
    let recounted = recount(after);
    prop_assert_eq!(estimate_size(after), recounted, "cached estimate is stale");
    prop_assert_eq!(report.size_before, before_size);
    prop_assert_eq!(report.size_after, recounted);
    prop_assert_eq!(report.messages_before, before.len());
    prop_assert_eq!(report.messages_after, after.len());
    prop_assert_eq!(report.changed, before != after);
    prop_assert_eq!(report.changed, !report.changes.is_empty());
    Ok(recounted)
}

fn check_budget(
    cfg: &PipelineConfig,
    ws: &std::path::Path,
    report: &StageReport,
    before: &[Message],
    after: &[Message],
) -> Result<(), TestCaseError> {
    for change in &report.changes {
        let Change::Persisted {
            message,
            block,
            path,
            ..
        } = change
        else {
            return Err(TestCaseError::fail(format!("budget made {change:?}")));
        };
        prop_assert_eq!(*message, before.len() - 1);
        let original = result_text(&before[*message].blocks()[*block]);
        let on_disk = std::fs::read_to_string(ws.join(path)).unwrap();
        prop_assert!(
            on_disk == original,
            "{} does not hold the block's text",
            path
        );
        let content = after[*message].blocks()[*block]["content"]
            .as_str()
            .unwrap();
        let preview: String = original.chars().take(cfg.preview_chars).collect();
        prop_assert_eq!(
            content,
            format!(
                "<persisted-output>\nFull output: {path}\nPreview:\n{preview}\n</persisted-output>"
            )
        );
    }
    if report.changed {
        let last = after.last().unwrap();
        let persisted: Vec<usize> = report
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Persisted { block, .. } => Some(*block),
                _ => None,
            })
            .collect();
        let sizes: Vec<(usize, usize)> = last
            .blocks()
            .iter()
            .enumerate()
            .filter(|(_, b)| b["type"] == "tool_result")
            .map(|(i, b)| (i, ctxlab::compact::s08::budget::result_content_chars(b)))
            .collect();
        let total: usize = sizes.iter().map(|(_, s)| s).sum();
        let any_left = sizes
            .iter()
            .any(|(i, s)| !persisted.contains(i) && *s > cfg.persist_threshold);
        prop_assert!(total <= cfg.budget_chars || !any_left);
    }
    Ok(())
}

fn check_snip(
    cfg: &PipelineConfig,
    report: &StageReport,
    before: &[Message],
    after: &[Message],
) -> Result<(), TestCaseError> {
    if before.len() <= cfg.snip_max_messages {
        prop_assert!(!report.changed);
    }
    if let [
        Change::Snipped {
            head_end,
            tail_start,
            removed,
        },
    ] = report.changes[..]
    {
        prop_assert_eq!(removed, tail_start - head_end);
        prop_assert_eq!(after.len(), before.len() - removed + 1);
        prop_assert!(head_end >= cfg.snip_keep_head);
        prop_assert!(before.len() - tail_start >= cfg.snip_max_messages - cfg.snip_keep_head);
        prop_assert_eq!(&after[..head_end], &before[..head_end]);
        let marker = format!("[snipped {removed} messages]");
        prop_assert_eq!(after[head_end].text(), Some(marker.as_str()));
        prop_assert_eq!(&after[head_end + 1..], &before[tail_start..]);
    } else {
        prop_assert!(report.changes.is_empty());
    }
    Ok(())
}

fn check_micro(
    cfg: &PipelineConfig,
    before: &[Message],
    after: &[Message],
) -> Result<(), TestCaseError> {
    let old: Vec<Value> = tool_results(before).map(|(_, _, b)| b.clone()).collect();
    let new: Vec<Value> = tool_results(after).map(|(_, _, b)| b.clone()).collect();
    prop_assert_eq!(old.len(), new.len());
    let keep_from = old.len().saturating_sub(cfg.micro_keep_recent);
    for (i, (o, n)) in old.iter().zip(&new).enumerate() {
        if old.len() <= cfg.micro_keep_recent
            || i >= keep_from
            || lesson_len(o) <= cfg.micro_min_chars
        {
            prop_assert_eq!(o, n);
        } else {
            prop_assert_eq!(
                &n["content"],
                &json!("[Earlier tool result compacted. Re-run if needed.]")
            );
        }
    }
    Ok(())
}

/// Everything the agent does to a history before and around one model call.
fn check_history(turns: &[Turn]) -> Result<(), TestCaseError> {
    let original = build(turns);
    prop_assert_eq!(
        pairing_violation(&original),
        None,
        "generator broke pairing"
    );
    let cfg = PipelineConfig::default();
    let pipeline = Pipeline::new(cfg);

    // Stage by stage.
    let ws = workspace();
    let store = Store::new(ws.path());
    let mut h = original.clone();
    let mut size = recount(&original);
    for stage in [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
    ] {
        let before = h.clone();
        let report = pipeline.run_stage(stage, &mut h, &store).unwrap();
        prop_assert_eq!(report.stage, stage);
        size = check_common(&report, &before, size, &h)?;
        match stage {
            Stage::ToolResultBudget => check_budget(&cfg, ws.path(), &report, &before, &h)?,
            Stage::SnipCompact => check_snip(&cfg, &report, &before, &h)?,
            _ => check_micro(&cfg, &before, &h)?,
        }
    }

    // The whole pre-call pipeline agrees with the stages, and compacts only over the limit.
    let ws2 = workspace();
    let store2 = Store::new(ws2.path());
    let mut whole = original.clone();
    let pre = pipeline.pre_call(&mut whole, &store2, NOW).unwrap();
    prop_assert_eq!(&whole, &h);
    prop_assert_eq!(pre.reports.len(), 3);
    prop_assert_eq!(pairing_violation(&whole), None);
    prop_assert_eq!(estimate_size(&whole), size);
    prop_assert_eq!(pre.pending.is_some(), size > cfg.context_limit);
    if let Some(pending) = pre.pending {
        let json = ascii_json_history(&whole);
        let want: String = json.chars().take(cfg.summary_input_chars).collect();
        prop_assert!(
            pending.request().user_text == want,
            "summarizer input is not the cut JSON"
        );
        let transcript =
            std::fs::read_to_string(ws2.path().join(&pending.transcript().path)).unwrap();
        prop_assert_eq!(transcript.lines().count(), whole.len());
        let (compacted, report) = pending.finish(&["Goal: keep going"], "Fix it");
        prop_assert_eq!(compacted.len(), 1);
        check_common(&report, &whole, size, &compacted)?;
    }

    // Reactive compaction, on the history the call was made with.
    {
        let base = &whole;
        let pending = begin_reactive_compact(base, &store2, &cfg, NOW).unwrap();
        // docs/pipeline.md, "reactive_compact", step 2.
        let len = base.len();
        let mut tail_start = len.saturating_sub(cfg.reactive_keep_tail);
        if 0 < tail_start
            && tail_start < len
            && base[tail_start].is_tool_result_message()
            && base[tail_start - 1].has_tool_use()
        {
            tail_start -= 1;
        }
        let json = ascii_json_history(&base[..tail_start]);
        let want: String = json.chars().take(cfg.summary_input_chars).collect();
        prop_assert!(pending.request().user_text == want);
        let (after, report) = pending.finish(&[" summary "], "Fix it");
        check_common(&report, base, size, &after)?;
        prop_assert_eq!(&after[1..], &base[tail_start..]);
    }
    Ok(())
}

/// Cases of the main property in a plain `cargo test`: enough to catch a broken invariant
/// in a few seconds. The long run is `PROPTEST_CASES=10000 cargo test --test it pipeline_props`.
const DEFAULT_CASES: u32 = 256;

/// A config running `per_10k / 10_000` of the main property's cases (at least `floor`): the
/// main property gets `PROPTEST_CASES` (else `DEFAULT_CASES`), the slower ones the share they
/// always had (150 and 500 cases in the 10,000-case run).
fn cases(per_10k: u32, floor: u32) -> ProptestConfig {
    let main = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(DEFAULT_CASES);
    let scaled = u64::from(main) * u64::from(per_10k) / 10_000;
    ProptestConfig {
        cases: u32::try_from(scaled).unwrap_or(u32::MAX).max(floor),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(10_000, 1))]

    #[test]
    fn pairing_and_sizes_hold_through_the_pipeline(turns in history()) {
        check_history(&turns)?;
    }
}

proptest! {
    #![proptest_config(cases(150, 8))]

    #[test]
    fn pairing_and_sizes_hold_with_heavy_batches(turns in heavy_history()) {
        check_history(&turns)?;
    }
}

proptest! {
    #![proptest_config(cases(500, 32))]

    /// Mutating messages in place (as the stages do) never leaves a stale cached size.
    #[test]
    fn estimate_tracks_in_place_edits(turns in history(), edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..300, 0..PATTERNS.len()), 1..8)) {
        let mut h = build(&turns);
        let _ = estimate_size(&h);
        for (index, chars, pattern) in edits {
            let i = index.index(h.len());
            if let Some(blocks) = h[i].blocks_mut()
                && let Some(b) = blocks.first_mut()
            {
                b["content"] = json!(text_of(PATTERNS[pattern], chars));
            }
            prop_assert_eq!(estimate_size(&h), recount(&h));
        }
    }
}
