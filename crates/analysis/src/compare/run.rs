//! One strategy on one session: the replay loop observed call by call, with the
//! reachability accounting, into a `StrategyRun` (per-call summaries, totals and, for the
//! workbench, every piece's state at every call). `ctxlab replay --compare` and the
//! workbench's compare view run it once per strategy, each on its own store.

use std::collections::BTreeMap;

use serde::Serialize;

use super::reachability::{Accountant, Amount, Piece, PieceState, Reach, ReachTotals};
use crate::compact::{PipelineConfig, Stage, Strategy};
use crate::message::{Message, estimate_size, tool_pairing_error};
use crate::pipeline_replay::{ReplayEvent, ReplayOptions, replay_events};
use crate::store::{Store, StoreError};

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The summary every compaction gets; None: the extractive summary.
    pub summary_text: Option<String>,
    /// The clock used in transcript names.
    pub now_secs: u64,
    /// Keep every piece's state at every call (the workbench's view).
    pub detail: bool,
    /// A ctxlab recording's events, honoured where they happened.
    pub recorded: Vec<crate::session::recorded::RecordedEvent>,
}

/// One model call under one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct CallSummary {
    pub call: usize,
    /// The request's size in Python `str()` chars, whatever the strategy.
    pub size: usize,
    pub messages: usize,
    /// The stages that changed the history before this call, in order.
    pub stages: Vec<Stage>,
    /// Chars of the summary request (system text and input), when one was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_input_chars: Option<usize>,
    /// Why the request breaks a tool pair, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orphan: Option<String>,
    pub reach: ReachTotals,
    /// Results first sent at this call, and not whole.
    pub unseen_replaced: usize,
    /// The recording says the API refused this call as too long.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

/// A whole run, as the comparison table shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunTotals {
    pub calls: usize,
    /// How often each stage changed the history (the strategy's stages, zero included).
    pub fired: BTreeMap<&'static str, usize>,
    pub peak_size: usize,
    /// The history as the session ends (after its last message), in `str()` chars.
    pub final_size: usize,
    pub final_messages: usize,
    pub summary_calls: usize,
    pub summary_input_chars: usize,
    /// Every piece against the history as the session ends.
    pub reach_end: ReachTotals,
    /// Results whose first request did not hold them whole.
    pub unseen_replaced: Amount,
    /// Of those, the ones that request did not lead to a full copy either.
    pub unseen_unreachable: Amount,
    /// Requests that break a tool pair.
    pub orphans_sent: usize,
    pub files_written: usize,
    /// Recorded events this strategy could not follow, as sentences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<String>,
}

/// What the workbench needs to show any piece at any call.
#[derive(Debug, Clone, Default)]
pub struct RunDetail {
    pub pieces: Vec<Piece>,
    /// Per call (index = call - 1), the state of each piece entered before it.
    pub states: Vec<Vec<PieceState>>,
    /// Per piece: the call it was first sent at and its class there, when not whole.
    pub unseen: Vec<Option<(usize, Reach)>>,
    /// Per piece, as the session ends.
    pub end: Vec<PieceState>,
}

/// One strategy's run.
#[derive(Debug, Clone)]
pub struct StrategyRun {
    pub strategy: Strategy,
    pub config: PipelineConfig,
    pub calls: Vec<CallSummary>,
    pub totals: RunTotals,
    pub detail: Option<RunDetail>,
}

/// Replays `session` under `config.strategy` on `store` and accounts for every piece at
/// every call; `on_call` sees each call's summary as it is made.
pub fn run_strategy(
    session: Vec<Message>,
    config: PipelineConfig,
    store: &Store,
    options: &RunOptions,
    mut on_call: impl FnMut(&CallSummary),
) -> Result<StrategyRun, StoreError> {
    let replay_options = ReplayOptions {
        config,
        summary_text: options.summary_text.clone(),
        summarizer: None,
        now_secs: options.now_secs,
        recorded: options.recorded.clone(),
    };
    let mut acc = Accountant::new(options.detail);
    let mut calls: Vec<CallSummary> = Vec::new();
    let mut states = Vec::new();
    let mut end = None;
    let mut final_size = 0;
    let totals = replay_events(session, store, &replay_options, |event| match event {
        ReplayEvent::Entered(m) => acc.enter(m),
        ReplayEvent::Stage { .. } => {}
        ReplayEvent::Call(view) => {
            acc.files_written(view.files, store);
            let snap = acc.call(view.record.call, view.request, view.before_summary, store);
            let summary = CallSummary {
                call: view.record.call,
                size: view.record.estimate_size,
                messages: view.record.messages,
                stages: view.record.reports.iter().map(|r| r.stage).collect(),
                summary_input_chars: view.summary_input_chars,
                orphan: tool_pairing_error(view.request),
                reach: snap.totals,
                unseen_replaced: snap.unseen_replaced.len(),
                refused: view.record.refused.is_some(),
            };
            on_call(&summary);
            calls.push(summary);
            if options.detail {
                states.push(snap.states);
            }
        }
        ReplayEvent::End(history) => {
            final_size = estimate_size(history);
            end = Some(acc.end(history, store));
        }
    })?;
    let end = end.unwrap_or_default();
    let mut unseen_replaced = Amount::default();
    let mut unseen_unreachable = Amount::default();
    let pieces: Vec<Piece> = acc.pieces().cloned().collect();
    let unseen: Vec<Option<(usize, Reach)>> = (0..pieces.len()).map(|i| acc.unseen(i)).collect();
    for (p, u) in pieces.iter().zip(&unseen) {
        if let Some((_, reach)) = u {
            unseen_replaced.add(p.chars);
            if *reach != Reach::Referenced {
                unseen_unreachable.add(p.chars);
            }
        }
    }
    let summaries: Vec<usize> = calls.iter().filter_map(|c| c.summary_input_chars).collect();
    // A call may follow more than one summary (a recorded compact tool, then the limit).
    let summary_calls = calls
        .iter()
        .flat_map(|c| &c.stages)
        .filter(|s| s.summarizes())
        .count();
    let run_totals = RunTotals {
        calls: totals.calls,
        fired: totals.fired,
        peak_size: calls.iter().map(|c| c.size).max().unwrap_or(0),
        final_size,
        final_messages: totals.final_messages,
        summary_calls,
        summary_input_chars: summaries.iter().sum(),
        reach_end: end.totals,
        unseen_replaced,
        unseen_unreachable,
        orphans_sent: calls.iter().filter(|c| c.orphan.is_some()).count(),
        files_written: totals.files_written,
        not_applied: totals.not_applied.iter().map(|n| n.describe()).collect(),
    };
    let detail = options.detail.then_some(RunDetail {
        pieces,
        states,
        unseen,
        end: end.states,
    });
    Ok(StrategyRun {
        strategy: config.strategy,
        config,
        calls,
        totals: run_totals,
        detail,
    })
}
