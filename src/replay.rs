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
use crate::compact::{Pipeline, PipelineConfig, StageReport, estimate_size};
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

/// Replays `session` on `store`, calling `on_call` after each model call's pipeline.
pub fn replay(
    session: Vec<Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_call: impl FnMut(&CallRecord),
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
            let pre = pipeline.pre_call(&mut live, store, options.now_secs)?;
            let mut reports: Vec<StageReport> =
                pre.reports.into_iter().filter(|r| r.changed).collect();
            if let Some(pending) = pre.pending {
                let summary = match &options.summary_text {
                    Some(s) => s.clone(),
                    None => extractive_summary_from_request(&pending.request().user_text),
                };
                let (history, report) = pending.finish(&[summary], &active_request);
                live = history;
                reports.push(report);
            }
            for r in &reports {
                *fired.entry(r.stage.name()).or_default() += 1;
                files_written += r.files_written.len();
            }
            on_call(&CallRecord {
                call: calls,
                reports,
                estimate_size: estimate_size(&live),
                messages: live.len(),
            });
        } else if let Some(request) = request_in(&message) {
            active_request = request;
        }
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
