//! The compaction pipeline (docs/pipeline.md), one file per stage, and the four strategies
//! that arrange the stages (docs/strategies.md): the s08 stages live here, the others'
//! own stages in `s06/`, `s08_latest/` and `guarded/`, and `Pipeline` runs whichever the
//! config names.
//!
//! Pure and synchronous: it knows messages, sizes, the on-disk `Store` and summary requests
//! as data. It never performs a model call, never touches a terminal and never imports
//! tokio: the summarizing stages hand back a `SummaryRequest` and take the summary text in
//! a second step, so the caller decides how the call is made.

pub mod budget;
pub mod compact_history;
pub mod config;
pub mod guarded;
pub mod micro;
pub mod micro_save;
pub mod pipeline;
pub mod reactive_compact;
pub mod report;
pub mod request;
pub mod results;
pub mod s06;
pub mod s08_latest;
pub mod snip;
pub mod strategy;
pub mod summarize;
pub mod summary_refit;

pub use budget::tool_result_budget;
pub use compact_history::{begin_compact_history, compact_reason};
pub use config::{ConfigError, PipelineConfig};
pub use micro::micro_compact;
pub use pipeline::{Pipeline, PreCall, TranscriptIds};
pub use reactive_compact::{begin_reactive_compact, reactive_tail_start};
pub use report::{Change, CompactTrigger, Stage, StageDelta, StageReport};
pub use snip::snip_compact;
pub use strategy::{SizeUnit, Strategy, UnknownStrategy};
pub use summarize::{PendingCompaction, SummaryRequest, is_summary_request};

pub use crate::message::estimate_size;

/// The three stages s08 runs before every call whatever the size, in order. Other
/// strategies list theirs in `Pipeline::stages`.
pub const CHEAP_STAGES: [Stage; 3] = [
    Stage::ToolResultBudget,
    Stage::SnipCompact,
    Stage::MicroCompact,
];

#[cfg(test)]
mod reason_tests {
    //! Every stage says why it acted or did not, in numbers.
    use super::*;
    use crate::message::{Message, block};
    use crate::store::Store;
    use serde_json::json;

    fn turn(i: usize, result: &str) -> [Message; 2] {
        [
            Message::assistant_blocks(vec![block::tool_use(
                format!("t{i}"),
                "bash",
                json!({"command": "ls"}),
            )]),
            Message::user_blocks(vec![block::tool_result(format!("t{i}"), result)]),
        ]
    }

    #[test]
    fn snip_reason_names_the_count_the_head_and_the_kept_tail() {
        let cfg = PipelineConfig::default();
        let mut h: Vec<Message> = (0..53)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect();
        let r = snip_compact(&mut h, &cfg);
        assert_eq!(r.reason, "53 messages > 50 (head 3, kept 47)");
        let mut short: Vec<Message> = (0..40)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect();
        assert_eq!(snip_compact(&mut short, &cfg).reason, "40 messages <= 50");
    }

    #[test]
    fn micro_reason_counts_results_and_the_replaced_ones() {
        let cfg = PipelineConfig::default();
        let long = "x".repeat(200);
        let mut h = vec![Message::user_text("go")];
        h.extend(turn(0, &long));
        h.extend(turn(1, "short"));
        h.extend(turn(2, &long));
        h.extend(turn(3, &long));
        h.extend(turn(4, &long));
        let r = micro_compact(&mut h, &cfg);
        assert_eq!(r.reason, "5 results > keep 3; 1 older over 120 chars");
        assert_eq!(r.changes.len(), 1);
        let mut few = vec![Message::user_text("go")];
        few.extend(turn(0, &long));
        assert_eq!(micro_compact(&mut few, &cfg).reason, "1 result <= keep 3");
    }

    #[test]
    fn budget_reason_gives_the_batch_total_and_the_results_over_the_threshold() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig::default();
        let mut h = vec![
            Message::assistant_blocks(vec![
                block::tool_use("a", "bash", json!({})),
                block::tool_use("b", "bash", json!({})),
            ]),
            Message::user_blocks(vec![
                block::tool_result("a", "x".repeat(190_000)),
                block::tool_result("b", "y".repeat(20_000)),
            ]),
        ];
        let r = tool_result_budget(&mut h, &store, &cfg).unwrap();
        assert!(r.changed);
        assert_eq!(r.reason, "batch 210,000 > 200,000; 1 result over 30,000");
        let mut small = vec![Message::user_blocks(vec![block::tool_result("c", "z")])];
        let r = tool_result_budget(&mut small, &store, &cfg).unwrap();
        assert_eq!(r.reason, "batch 1 <= 200,000");
    }

    #[test]
    fn compact_history_reason_compares_the_size_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig {
            context_limit: 100,
            ..PipelineConfig::default()
        };
        let h = vec![Message::user_text("z".repeat(200))];
        let size = estimate_size(&h);
        let pending =
            begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, 1).unwrap();
        let (_, report) = pending.finish(&["facts"], "z");
        assert_eq!(report.reason, format!("{size} > 100"));
        let within = StageReport::within_limit(4_465, 3, 50_000);
        assert_eq!(within.reason, "4,465 <= 50,000");
        assert!(!within.changed);
    }
}
