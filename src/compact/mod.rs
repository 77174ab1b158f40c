//! The compaction pipeline (docs/pipeline.md), one file per stage.
//!
//! Pure and synchronous: it knows messages, sizes, the on-disk `Store` and summary requests
//! as data. It never performs a model call, never touches a terminal and never imports
//! tokio: `compact_history` and `reactive_compact` hand back a `SummaryRequest` and take
//! the summary text in a second step, so the caller decides how the call is made.

pub mod budget;
pub mod compact_history;
pub mod config;
pub mod micro;
pub mod reactive_compact;
pub mod report;
pub mod request;
pub mod snip;
pub mod summarize;

pub use budget::tool_result_budget;
pub use compact_history::begin_compact_history;
pub use config::{ConfigError, PipelineConfig};
pub use micro::micro_compact;
pub use reactive_compact::{begin_reactive_compact, reactive_tail_start};
pub use report::{Change, CompactTrigger, Stage, StageReport};
pub use snip::snip_compact;
pub use summarize::{PendingCompaction, SummaryRequest};

pub use crate::message::estimate_size;

use crate::message::Message;
use crate::store::{Store, StoreError};

/// The three stages that run before every call whatever the size, in order.
pub const CHEAP_STAGES: [Stage; 3] = [
    Stage::ToolResultBudget,
    Stage::SnipCompact,
    Stage::MicroCompact,
];

/// What the pre-call pipeline did, and the summary it still needs, if any.
#[derive(Debug)]
pub struct PreCall {
    pub reports: Vec<StageReport>,
    /// Some when the history is over the limit after micro: the caller must get the
    /// summary and call `finish`.
    pub pending: Option<PendingCompaction>,
}

/// The lesson's pipeline with a given configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pipeline {
    pub config: PipelineConfig,
}

impl Pipeline {
    pub fn new(config: PipelineConfig) -> Pipeline {
        Pipeline { config }
    }

    /// Runs one of the cheap stages (budget, snip, micro) on the history.
    /// The summarizing stages need a summary and go through `begin_*` instead.
    pub fn run_stage(
        &self,
        stage: Stage,
        messages: &mut Vec<Message>,
        store: &Store,
    ) -> Result<StageReport, StoreError> {
        let cfg = &self.config;
        Ok(match stage {
            Stage::ToolResultBudget => tool_result_budget(messages, store, cfg)?,
            Stage::SnipCompact => snip_compact(messages, cfg),
            Stage::MicroCompact => micro_compact(messages, cfg),
            Stage::CompactHistory | Stage::ReactiveCompact => {
                let n = messages.len();
                StageReport::unchanged(stage, estimate_size(messages), n)
            }
        })
    }

    /// What a cheap stage would do, computed on a copy with a dry-run store.
    pub fn preview_stage(
        &self,
        stage: Stage,
        messages: &[Message],
        store: &Store,
    ) -> Result<StageReport, StoreError> {
        let mut copy = messages.to_vec();
        self.run_stage(stage, &mut copy, &store.dry_run())
    }

    /// Whether the history is over the limit (compact_history runs).
    pub fn over_limit(&self, messages: &[Message]) -> bool {
        estimate_size(messages) > self.config.context_limit
    }

    /// The whole pre-call pipeline: budget, snip, micro, then compact_history's first step
    /// when the estimate is still over the limit.
    pub fn pre_call(
        &self,
        messages: &mut Vec<Message>,
        store: &Store,
        now_secs: u64,
    ) -> Result<PreCall, StoreError> {
        let mut reports = Vec::with_capacity(3);
        for stage in CHEAP_STAGES {
            reports.push(self.run_stage(stage, messages, store)?);
        }
        let pending = if self.over_limit(messages) {
            Some(begin_compact_history(
                messages,
                store,
                &self.config,
                None,
                CompactTrigger::OverLimit,
                now_secs,
            )?)
        } else {
            None
        };
        Ok(PreCall { reports, pending })
    }
}
