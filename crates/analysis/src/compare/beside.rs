//! What ctxlab's strategies would have sent instead of a captured agent's requests
//! (docs/capture.md, "The requests view"): the capture's whole conversation (every message
//! ever sent, as `ctxlab replay` takes it) replayed once per strategy through the one replay
//! loop, on a dry-run store in an empty scratch folder, with the extractive summary and no
//! model; each replay call is the request whose answer is the same assistant message.
//!
//! One replay per strategy over the whole conversation, rather than the pipeline run on each
//! request's own messages: a request's messages are already what the agent's compaction
//! left (its summary, its cleared results), so the strategy would start from the agent's
//! work, and N requests would cost N pipelines over up to N messages each.

use serde::Serialize;

use crate::compact::{Change, PipelineConfig, Strategy};
use crate::message::Message;
use crate::pipeline_replay::{CallRecord, ReplayOptions, replay};
use crate::store::{Store, StoreError};

/// One strategy at one call: what it would have sent and what it dropped before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StrategyAt {
    pub strategy: &'static str,
    /// The request's messages in Python `str()` chars (the compare view's unit).
    pub size: usize,
    pub messages: usize,
    /// The stages that changed the history before this call, in order.
    pub stages: Vec<&'static str>,
    /// Tool results replaced by a placeholder, a saved copy's path or a preview.
    pub results_cleared: usize,
    /// Messages cut or archived behind a marker.
    pub messages_snipped: usize,
    /// Messages replaced by a summary.
    pub messages_summarized: usize,
}

impl StrategyAt {
    fn of(strategy: Strategy, r: &CallRecord) -> StrategyAt {
        let mut at = StrategyAt {
            strategy: strategy.name(),
            size: r.estimate_size,
            messages: r.messages,
            stages: r.reports.iter().map(|s| s.stage.name()).collect(),
            results_cleared: 0,
            messages_snipped: 0,
            messages_summarized: 0,
        };
        for c in r.reports.iter().flat_map(|s| &s.changes) {
            match c {
                Change::Persisted { .. } | Change::Placeholder { .. } | Change::Saved { .. } => {
                    at.results_cleared += 1
                }
                Change::Snipped { removed, .. } | Change::Archived { removed, .. } => {
                    at.messages_snipped += removed
                }
                Change::Summarized { replaced, .. } => at.messages_summarized += replaced,
            }
        }
        at
    }
}

/// Every strategy's calls over `conversation`: `out[k][c]` is strategy `k`'s call `c + 1`.
pub fn strategies_beside(
    conversation: &[Message],
    strategies: &[Strategy],
) -> Result<Vec<Vec<StrategyAt>>, StoreError> {
    let scratch = tempfile::tempdir().map_err(|source| StoreError::Write {
        path: std::env::temp_dir(),
        source,
    })?;
    let mut out = Vec::with_capacity(strategies.len());
    for &strategy in strategies {
        let store = Store::new(scratch.path()).dry_run();
        let options = ReplayOptions {
            config: PipelineConfig::for_strategy(strategy),
            summary_text: None,
            summarizer: None,
            now_secs: 0,
            recorded: Vec::new(),
        };
        let mut calls = Vec::new();
        replay(conversation.iter().cloned(), &store, &options, |r| {
            calls.push(StrategyAt::of(strategy, r))
        })?;
        out.push(calls);
    }
    Ok(out)
}
