//! The compaction pipeline (docs/pipeline.md) and the four strategies that arrange its
//! stages (docs/strategies.md): each strategy's stages in its own folder (`s08/`,
//! `s08_latest/`, `s06/`, `guarded/`) behind the `Design` trait (`design.rs`),
//! `registry.rs` naming the design of each `Strategy`, and `Pipeline` (`pipeline.rs`)
//! running whichever the config names.
//!
//! Pure and synchronous: it knows messages, sizes, the on-disk `Store` and summary requests
//! as data. It never performs a model call, never touches a terminal and never imports
//! tokio: the summarizing stages hand back a `SummaryRequest` and take the summary text in
//! a second step, so the caller decides how the call is made.
//!
//! Imports inside the folder go one way: `unit`, `window`, `strategy`, `config`, `report`,
//! `summary_label`, `results`, `request` are leaves; `summarize`, `micro_save` and `design` build on them;
//! the strategy folders on those (s08-latest and guarded also on `s08/`); `registry`
//! and `pipeline` on everything.

pub mod config;
pub mod design;
pub mod extractive;
pub mod guarded;
pub mod markers;
pub mod micro_save;
pub mod pipeline;
pub mod registry;
pub mod report;
pub mod request;
pub mod results;
pub mod s06;
pub mod s08;
pub mod s08_latest;
pub mod strategy;
pub mod summarize;
pub mod summary_label;
pub mod summary_refit;
pub mod unit;
pub mod window;

pub use config::{ConfigError, PipelineConfig};
pub use design::{Design, TranscriptIds};
pub use pipeline::{Pipeline, PreCall};
pub use report::{Adjustment, Change, CompactTrigger, Stage, StageDelta, StageReport};
pub use s08::{
    begin_compact_history, begin_reactive_compact, compact_reason, micro_compact,
    reactive_tail_start, snip_compact, tool_result_budget,
};
pub use strategy::{Strategy, UnknownStrategy};
pub use summarize::{PendingCompaction, SummaryRequest};
pub use summary_label::SummaryLabel;
pub use unit::SizeUnit;
pub use window::ContextWindow;

pub use crate::message::estimate_size;
