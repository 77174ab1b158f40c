//! `ctxlab pipeline` as a library function (docs/pipeline.md, "ctxlab pipeline"): run the
//! stages on a history read from a file and describe every step as JSON, without a model.
//!
//! The probes of compact_history and reactive_compact run against a dry-run store, which
//! sees the workspace as it stood after micro but writes nothing: each probe therefore
//! reports the names it would have used, and the real workspace is left as micro left it.
//!
//! The report is written as it is made, stage by stage, straight to the output: a history
//! holding one huge message is never copied into a report tree or an output string (each
//! stage's messages, each file's content go out and are dropped), so memory stays a small
//! multiple of the input (docs/pipeline.md, "ctxlab pipeline").

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::compact::{
    CompactTrigger, Pipeline, PipelineConfig, StageReport, begin_compact_history,
    begin_reactive_compact, estimate_size,
};
use crate::message::{Message, block_type};
// The input format is a session format: it lives with the session readers, and this
// command (like `replay`) reads through them. Re-exported for the callers of this command.
pub use crate::session::history_input::{
    HistoryInput, InputError, history_input_from_value, parse_history_input,
};
use crate::store::{FileWritten, Store, StoreError};

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
            .filter(|prev| prev.role() == "assistant")
            .map(|prev| {
                prev.blocks()
                    .iter()
                    .filter(|b| block_type(b) == Some("tool_use"))
                    .filter_map(|b| b.get("id").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        for b in m.blocks() {
            if block_type(b) != Some("tool_result") {
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

/// `{"path", "status", "chars", "bytes", "content"}` of each file, the content read back
/// from the store and written out without another copy.
fn write_files(
    out: &mut dyn Write,
    store: &Store,
    files: &[FileWritten],
) -> Result<(), PipelineError> {
    out.write_all(b"[")?;
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"path\":")?;
        serde_json::to_writer(&mut *out, &f.path)?;
        write!(out, ",\"status\":")?;
        serde_json::to_writer(&mut *out, &f.status)?;
        write!(
            out,
            ",\"chars\":{},\"bytes\":{},\"content\":",
            f.chars, f.bytes
        )?;
        store.read_text_with(&f.path, |text| serde_json::to_writer(&mut *out, text))??;
        out.write_all(b"}")?;
    }
    out.write_all(b"]")?;
    Ok(())
}

/// A list of messages, serialized from the history itself.
fn write_messages(out: &mut dyn Write, messages: &[Message]) -> Result<(), PipelineError> {
    serde_json::to_writer(&mut *out, messages)?;
    Ok(())
}

fn write_stage(
    out: &mut dyn Write,
    store: &Store,
    report: &StageReport,
    messages: &[Message],
) -> Result<(), PipelineError> {
    write!(out, "{{\"changed\":{},\"messages\":", report.changed)?;
    write_messages(out, messages)?;
    write!(
        out,
        ",\"estimate_size\":{},\"files_written\":",
        report.size_after
    )?;
    write_files(out, store, &report.files_written)?;
    out.write_all(b"}")?;
    Ok(())
}

/// Runs budget, snip and micro on `workspace`, then both summarizing probes, and writes the
/// JSON object docs/pipeline.md "ctxlab pipeline" describes to `out` (no newline).
pub fn write_pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now_secs: u64,
    summary_text: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), PipelineError> {
    let pipeline = Pipeline::new(config);
    let store = Store::new(workspace);
    let HistoryInput {
        mut messages,
        active_request,
    } = input;
    write!(
        out,
        "{{\"strategy\":\"lesson\",\"estimate_size_input\":{},\"stages\":{{",
        estimate_size(&messages)
    )?;
    for (i, (key, stage)) in [
        ("budget", crate::compact::Stage::ToolResultBudget),
        ("snip", crate::compact::Stage::SnipCompact),
        ("micro", crate::compact::Stage::MicroCompact),
    ]
    .into_iter()
    .enumerate()
    {
        let report = pipeline.run_stage(stage, &mut messages, &store)?;
        write!(out, "{}\"{key}\":", if i > 0 { "," } else { "" })?;
        write_stage(out, &store, &report, &messages)?;
    }
    write!(
        out,
        "}},\"auto_compact_triggered\":{}",
        pipeline.over_limit(&messages)
    )?;
    if let Some(summary) = summary_text {
        // One probe store at a time: each holds the transcript it would have written.
        {
            let probe = store.dry_run();
            let pending = begin_compact_history(
                &messages,
                &probe,
                &config,
                None,
                CompactTrigger::OverLimit,
                now_secs,
            )?;
            out.write_all(b",\"compact_history\":")?;
            write_probe(out, &probe, pending, summary, &active_request)?;
        }
        let probe = store.dry_run();
        let pending = begin_reactive_compact(&messages, &probe, &config, now_secs)?;
        // The pending compaction holds its own copy of the tail it keeps: the live history
        // is not needed any more.
        drop(messages);
        out.write_all(b",\"reactive_compact\":")?;
        write_probe(out, &probe, pending, summary, &active_request)?;
    }
    out.write_all(b"}")?;
    Ok(())
}

fn write_probe(
    out: &mut dyn Write,
    store: &Store,
    pending: crate::compact::PendingCompaction,
    summary: &str,
    active_request: &str,
) -> Result<(), PipelineError> {
    let request = pending.request().clone();
    let (messages, report) = pending.finish(&[summary], active_request);
    out.write_all(b"{\"messages\":")?;
    write_messages(out, &messages)?;
    drop(messages);
    out.write_all(b",\"files_written\":")?;
    write_files(out, store, &report.files_written)?;
    out.write_all(b",\"summarizer_requests\":")?;
    #[derive(Serialize)]
    struct Request<'a> {
        system: &'a str,
        messages: Value,
        max_tokens: usize,
    }
    serde_json::to_writer(
        &mut *out,
        &[Request {
            system: &request.system,
            messages: json!([{"role": "user", "content": request.user_text}]),
            max_tokens: request.max_tokens,
        }],
    )?;
    out.write_all(b"}")?;
    Ok(())
}

/// [`write_pipeline_report`] as a JSON value (for tests and callers that want the tree).
pub fn pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now_secs: u64,
    summary_text: Option<&str>,
) -> Result<Value, PipelineError> {
    let mut bytes = Vec::new();
    write_pipeline_report(input, workspace, config, now_secs, summary_text, &mut bytes)?;
    Ok(serde_json::from_slice(&bytes)?)
}
