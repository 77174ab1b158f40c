//! `ctxlab replay` as a library function (spec section 11): what the pipeline would have
//! done to a recorded session, model call by model call.
//!
//! A session file's assistant messages mark where model calls happened; before each one
//! the live history goes through the pre-call pipeline exactly as the agent would run it.
//! No model is called: the summary is a given text or the extractive summary.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compact::summary::{extractive_summary_from_request, request_in};
use crate::compact::{Pipeline, PipelineConfig, Stage, StageReport, estimate_size};
use crate::message::Message;
use crate::store::{Store, StoreError};

/// What happened before one model call.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    pub call: usize,
    /// The stages that changed something, in order.
    pub reports: Vec<StageReport>,
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
    let pipeline = Pipeline::new(options.config);
    let mut live: Vec<Message> = Vec::new();
    let mut active_request = String::new();
    let mut fired: BTreeMap<&'static str, usize> = [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
        Stage::CompactHistory,
    ]
    .into_iter()
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

/// Reads a session: a JSON array of messages (or `ctxlab pipeline`'s input object), or a
/// transcript (one message per line).
pub fn parse_session(text: &str) -> Result<Vec<Message>, SessionError> {
    if text.trim_start().starts_with('[') {
        let input = crate::inspect::parse_history_input(text).map_err(SessionError::Array)?;
        return Ok(input.messages);
    }
    // A whole file that is one JSON object with "messages" is `ctxlab pipeline`'s input;
    // anything else is read as a transcript, line by line. The file is parsed once either way.
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        if value.get("messages").is_some() {
            let input =
                crate::inspect::history_input_from_value(value).map_err(SessionError::Array)?;
            return Ok(input.messages);
        }
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|source| SessionError::Line {
                line: i + 1,
                message: source.to_string(),
            })?;
        let m = Message::from_value(value).map_err(|source| SessionError::Line {
            line: i + 1,
            message: source.to_string(),
        })?;
        out.push(m);
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Array(crate::inspect::InputError),
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
}
