//! The replay loop: what the pipeline would have done to a recorded session, model call by
//! model call (docs/pipeline.md, "Replay"). `ctxlab replay` prints it; the workbench draws
//! it for a saved transcript. One loop serves both, so they cannot disagree.
//!
//! A session's assistant messages mark where model calls happened; before each one the live
//! history goes through the pre-call pipeline exactly as the agent would run it, with the
//! active request taken from the latest user message with string content. No model is
//! called: the summary is a given text or the scripted model's extractive summary.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compact::request::request_in;
use crate::compact::{CompactTrigger, Pipeline, PipelineConfig, StageReport, estimate_size};
use crate::message::Message;
use crate::provider::scripted::extractive::extractive_summary_from_request;
use crate::store::{Store, StoreError};

/// What happened before one model call.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    pub call: usize,
    /// The stages that changed something, in order (sizes in the strategy's unit).
    pub reports: Vec<StageReport>,
    /// The request's size in s08's unit (Python `str()` chars) whatever the strategy, so
    /// strategies compare on one scale.
    pub estimate_size: usize,
    pub messages: usize,
}

/// Totals over the whole replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayTotals {
    pub calls: usize,
    pub fired: BTreeMap<&'static str, usize>,
    pub files_written: usize,
    pub final_messages: usize,
    pub final_estimate_size: usize,
}

/// How to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub config: PipelineConfig,
    /// The summary every compaction gets; None: the extractive summary.
    pub summary_text: Option<String>,
    /// The clock used in transcript names.
    pub now_secs: u64,
}

/// One fact of a replay, in the order it happens: each stage that ran before a call (with
/// the history after it), the call, and each message as it joins the live history.
#[derive(Debug)]
pub enum ReplayStep<'a> {
    /// A stage ran, changed or not; `history` is the live history after it.
    Stage {
        report: &'a StageReport,
        history: &'a [Message],
    },
    /// A model call happened with `history` as its messages.
    Call {
        record: &'a CallRecord,
        history: &'a [Message],
    },
    /// A message of the session joined the live history.
    Appended(&'a Message),
}

/// Replays `session` on `store`, calling `on_call` after each model call's pipeline.
pub fn replay(
    session: Vec<Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_call: impl FnMut(&CallRecord),
) -> Result<ReplayTotals, StoreError> {
    replay_steps(session, store, options, |step| {
        if let ReplayStep::Call { record, .. } = step {
            on_call(record);
        }
    })
}

/// The replay loop itself, reporting every step (the timeline is built from these).
pub fn replay_steps(
    session: Vec<Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_step: impl FnMut(ReplayStep<'_>),
) -> Result<ReplayTotals, StoreError> {
    // Counted transcript ids (s08-latest) keep a replay reproducible.
    let pipeline = Pipeline::new(options.config).with_counter_ids();
    let mut live: Vec<Message> = Vec::new();
    let mut active_request = String::new();
    let mut fired: BTreeMap<&'static str, usize> = pipeline
        .stages()
        .iter()
        .chain([&pipeline.summarizing_stage()])
        .map(|s| (s.name(), 0))
        .collect();
    let mut files_written = 0;
    let mut calls = 0;
    for message in session {
        if message.role() == "assistant" {
            calls += 1;
            // `Pipeline::pre_call` unrolled, so each stage's history can be reported: the
            // strategy's stages one by one, then the summarizing stage when still over
            // the limit.
            let mut reports: Vec<StageReport> = Vec::new();
            for &stage in pipeline.stages() {
                let report = pipeline.run_stage(stage, &mut live, store)?;
                on_step(ReplayStep::Stage {
                    report: &report,
                    history: &live,
                });
                if report.changed {
                    reports.push(report);
                }
            }
            let pending = if pipeline.over_limit(&live) {
                pipeline.begin_compact(
                    &live,
                    store,
                    None,
                    CompactTrigger::OverLimit,
                    options.now_secs,
                )?
            } else {
                None
            };
            if let Some(pending) = pending {
                let summary = match &options.summary_text {
                    Some(s) => s.clone(),
                    None => extractive_summary_from_request(&pending.request().user_text),
                };
                let (history, report) = pending.finish(&[summary], &active_request);
                live = history;
                on_step(ReplayStep::Stage {
                    report: &report,
                    history: &live,
                });
                reports.push(report);
            }
            for r in &reports {
                *fired.entry(r.stage.name()).or_default() += 1;
                files_written += r.files_written.len();
            }
            let record = CallRecord {
                call: calls,
                reports,
                estimate_size: estimate_size(&live),
                messages: live.len(),
            };
            on_step(ReplayStep::Call {
                record: &record,
                history: &live,
            });
        } else if let Some(request) = request_in(&message) {
            active_request = request;
        }
        on_step(ReplayStep::Appended(&message));
        live.push(message);
    }
    Ok(ReplayTotals {
        calls,
        fired,
        files_written,
        final_messages: live.len(),
        final_estimate_size: estimate_size(&live),
    })
}
