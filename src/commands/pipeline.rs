//! `ctxlab pipeline` as a library function (docs/pipeline.md, "ctxlab pipeline"): run one
//! strategy's stages on a
//! history read from a file and describe every step as JSON, without a model. Each lesson
//! version prints the shape its recorded cases have (docs/strategies.md); the JSON itself
//! is written in `pipeline/shape.rs`.
//!
//! The probes of the summarizing stages run against a dry-run store, which sees the
//! workspace as it stood after the last stage but writes nothing: each probe therefore
//! reports the names it would have used, and the real workspace is left as the stages left
//! it.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::compact::{CompactTrigger, Pipeline, PipelineConfig, Stage, Strategy};
use crate::message::{BlockKind, Message, Role};
// The input format is a session format: it lives with the session readers, and this
// command (like `replay`) reads through them. Re-exported for the callers of this command.
pub use crate::session::history_input::{
    HistoryInput, InputError, history_input_from_value, parse_history_input,
};
use crate::store::{Store, StoreError};

mod shape;

use shape::Shape;

/// Why the report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("the pipeline could not write to the workspace: {0}")]
    Store(#[from] StoreError),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

impl From<serde_json::Error> for PipelineError {
    fn from(e: serde_json::Error) -> Self {
        PipelineError::Output(e.into())
    }
}

/// Roles a message of the input may have: the Messages API knows no others.
pub const ROLES: [&str; 2] = ["user", "assistant"];

/// Checks what the parser lets through but the pipeline cannot honestly work with: a role
/// other than `user` or `assistant` is an error (`messages[i]: ...`); a `tool_result` that
/// answers no `tool_use` of the message just before it is a warning, returned as text.
pub fn check_history(messages: &[Message]) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for (index, m) in messages.iter().enumerate() {
        if !ROLES.contains(&m.role()) {
            return Err(format!(
                "messages[{index}]: unknown role {:?}; expected \"user\" or \"assistant\"",
                m.role()
            ));
        }
        let asked: Vec<&str> = index
            .checked_sub(1)
            .map(|i| &messages[i])
            .filter(|prev| prev.role_kind() == Role::Assistant)
            .map(|prev| {
                prev.blocks()
                    .iter()
                    .filter(|b| BlockKind::of(b) == BlockKind::ToolUse)
                    .filter_map(|b| b.get("id").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        for b in m.blocks() {
            if BlockKind::of(b) != BlockKind::ToolResult {
                continue;
            }
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            if !asked.contains(&id) {
                warnings.push(format!(
                    "messages[{index}]: the tool_result for {id:?} answers no tool_use in the message before it"
                ));
            }
        }
    }
    Ok(warnings)
}

/// Runs the strategy's stages on `workspace`, then its summarizing probes, and writes the
/// JSON object of its recorded shape to `out` (no newline), as it goes. `now` pins the
/// clock for transcript names (and makes s08-latest count its transcripts 1, 2, 3 instead
/// of drawing random ids); None: the current time.
pub fn write_pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now: Option<u64>,
    summary_text: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), PipelineError> {
    let mut pipeline = Pipeline::new(config);
    if now.is_some() {
        pipeline = pipeline.with_counter_ids();
    }
    let now_secs = now.unwrap_or_else(crate::util::unix_now);
    let store = Store::new(workspace);
    let HistoryInput {
        mut messages,
        active_request,
    } = input;
    let mut out = Shape::new(config.strategy, pipeline.size(&messages), out)?;
    for &stage in pipeline.stages() {
        let report = pipeline.run_stage(stage, &mut messages, &store)?;
        out.stage(&store, &report, &messages)?;
        if stage == Stage::SnipCompact && config.strategy == Strategy::S08Latest {
            // The lesson's micro rules show on small inputs too: micro with no target, on
            // a copy, against a dry-run store.
            let probe = store.dry_run();
            let mut copy = messages.clone();
            let r = crate::compact::s08_latest::micro(&mut copy, &probe, &config, None)?;
            out.micro_probe(&probe, &r, &copy)?;
        }
    }
    out.triggered(pipeline.over_limit(&messages))?;
    if let Some(summary) = summary_text {
        // One probe store at a time: each holds the transcript it would have written.
        {
            let probe = store.dry_run();
            let pending = pipeline.begin_compact(
                &messages,
                &probe,
                None,
                CompactTrigger::OverLimit,
                now_secs,
            )?;
            let key = pipeline.summarizing_stage().name();
            out.probe(key, &probe, pending, summary, &active_request)?;
        }
        if pipeline.strategy().reactive_attempts() > 0 {
            let probe = store.dry_run();
            let pending = pipeline.begin_reactive(&messages, &probe, now_secs, 0, None)?;
            // The pending compaction holds its own copy of the tail it keeps: the live
            // history is not needed any more.
            drop(messages);
            out.probe(
                "reactive_compact",
                &probe,
                pending,
                summary,
                &active_request,
            )?;
        }
    }
    out.finish()
}

/// [`write_pipeline_report`] as a JSON value (for tests and callers that want the tree).
pub fn pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now: Option<u64>,
    summary_text: Option<&str>,
) -> Result<Value, PipelineError> {
    let mut bytes = Vec::new();
    write_pipeline_report(input, workspace, config, now, summary_text, &mut bytes)?;
    Ok(serde_json::from_slice(&bytes)?)
}
