//! `Design`: what one strategy does, behind one trait, so that `Pipeline` runs every
//! strategy the same way and each strategy's arrangement of stages reads in one place, its
//! folder's `mod.rs` (docs/strategies.md). Also `TranscriptIds`, the names s08-latest gives
//! its transcripts, which a design is handed with the config.
//!
//! The trait knows stages, reports and summary requests as data; it never calls a model.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::config::PipelineConfig;
use super::report::{CompactTrigger, Stage, StageReport};
use super::summarize::PendingCompaction;
use super::window::ContextWindow;
use crate::message::{Message, ToolSpec};
use crate::store::{Store, StoreError};

/// How s08-latest names its transcripts (the others use the clock): a random UUID's 32 hex
/// digits as the lesson does, or a counter 1, 2, 3, ... for reproducible runs.
#[derive(Debug, Clone, Default)]
pub enum TranscriptIds {
    #[default]
    Random,
    Counter(Arc<AtomicU64>),
}

impl TranscriptIds {
    /// A counter starting at 1.
    pub fn counter() -> TranscriptIds {
        TranscriptIds::Counter(Arc::new(AtomicU64::new(0)))
    }

    pub(crate) fn next(&self) -> String {
        match self {
            TranscriptIds::Random => {
                // Version 4, variant 10, as uuid.uuid4() would have.
                let v = fastrand::u128(..);
                let v = (v & !(0xf << 76)) | (0x4 << 76);
                let v = (v & !(0x3 << 62)) | (0x2 << 62);
                format!("{v:032x}")
            }
            TranscriptIds::Counter(n) => format!("{:032x}", n.fetch_add(1, Ordering::SeqCst) + 1),
        }
    }
}

/// What a design is given besides the history and the store.
#[derive(Debug, Clone, Copy)]
pub struct DesignContext<'a> {
    pub config: &'a PipelineConfig,
    pub ids: &'a TranscriptIds,
}

/// What every step 1 of a compaction is handed, whatever asked for it: the history, the
/// store, the config and transcript names, and the clock. One struct, so the four designs'
/// `begin_compact` and `begin_reactive` take only what differs between the two.
#[derive(Debug, Clone, Copy)]
pub struct CompactAsk<'a> {
    pub messages: &'a [Message],
    pub store: &'a Store,
    pub cx: DesignContext<'a>,
    pub now_secs: u64,
}

/// What running one of a design's stages came to: a report, or the reason its gate kept
/// it closed (s08-latest runs micro and fit only over the limit).
#[derive(Debug)]
pub enum StageRun {
    Ran(StageReport),
    NotRun(String),
}

/// One strategy's behaviour. `Pipeline` checks what every strategy shares (a summarizing
/// stage runs in two steps, a stage the design does not list is not run, the number of
/// reactive retries) and sets every report's sizes in the strategy's unit; the design
/// does the rest.
pub trait Design: Sync {
    /// The stages that run before every call, in order.
    fn stages(&self) -> &'static [Stage];

    /// The stage that summarizes when over the limit or asked to.
    fn summarizing_stage(&self) -> Stage {
        Stage::CompactHistory
    }

    /// Runs `stage`, one of `stages()`.
    fn run_stage(
        &self,
        stage: Stage,
        messages: &mut Vec<Message>,
        store: &Store,
        cx: DesignContext<'_>,
    ) -> Result<StageRun, StoreError>;

    /// Step 1 of the summarizing stage (over the limit, the compact tool or `/compact`);
    /// None when the design finds nothing it may summarize.
    fn begin_compact(
        &self,
        ask: CompactAsk<'_>,
        focus: Option<&str>,
        trigger: CompactTrigger,
    ) -> Result<Option<PendingCompaction>, StoreError>;

    /// Step 1 of reactive compaction after the `attempt`-th "prompt too long" in a row;
    /// `window` is the one the server's refusal named, as a number. None when the design
    /// has no (further) retry.
    fn begin_reactive(
        &self,
        ask: CompactAsk<'_>,
        attempt: usize,
        window: Option<ContextWindow>,
    ) -> Result<Option<PendingCompaction>, StoreError>;

    /// Whether a reactive compaction of `messages` could make the next request smaller.
    /// The agent asks before it runs one, so a design that answers false gets no
    /// transcript written and no summary request sent; `ctxlab pipeline`'s probe runs the
    /// stage as it is whatever this says.
    fn reactive_can_shrink(&self, _messages: &[Message], _cx: DesignContext<'_>) -> bool {
        true
    }

    /// The sentence the agent's system prompt ends with, telling the model how to read a
    /// summary message; None when the summary carries no request field (s06).
    fn system_note(&self) -> Option<&'static str>;

    /// The text a `compact` tool call answers.
    fn compact_tool_result(&self) -> &'static str;

    /// The `compact` tool as this strategy describes it to the model, when that differs
    /// from the tool list's own (`tools::tool_specs`).
    fn compact_tool_override(&self) -> Option<ToolSpec> {
        None
    }
}
