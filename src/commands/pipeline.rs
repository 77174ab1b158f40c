//! `ctxlab pipeline` as a library function (spec section 10): run the stages on a history
//! read from a file and describe every step as JSON, without a model.
//!
//! The probes of compact_history and reactive_compact run against a dry-run store, which
//! sees the workspace as it stood after micro but writes nothing: each probe therefore
//! reports the names it would have used, and the real workspace is left as micro left it.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::compact::request::latest_request;
use crate::compact::{
    CompactTrigger, Pipeline, PipelineConfig, StageReport, begin_compact_history,
    begin_reactive_compact, estimate_size,
};
use crate::message::{Message, MessageError, json_kind};
use crate::store::{FileWritten, Store, StoreError};

/// Why an input file cannot be used. The text names the position; the caller adds the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "expected {{\"messages\": [...], \"active_request\": \"...\"}} or a list of messages, found {0}"
    )]
    Shape(&'static str),
    #[error("\"active_request\" must be a string, found {0}")]
    ActiveRequest(&'static str),
    #[error("messages[{index}]: {source}")]
    Message { index: usize, source: MessageError },
}

/// A history and the request it works on.
#[derive(Debug, Clone)]
pub struct HistoryInput {
    pub messages: Vec<Message>,
    pub active_request: String,
}

/// Parses `{"messages": [...], "active_request": "..."}` or a bare list of messages.
pub fn parse_history_input(text: &str) -> Result<HistoryInput, InputError> {
    history_input_from_value(serde_json::from_str(text)?)
}

/// `parse_history_input` for a value already parsed.
pub fn history_input_from_value(value: Value) -> Result<HistoryInput, InputError> {
    let (list, active) = match value {
        Value::Array(items) => (items, None),
        Value::Object(mut map) => {
            let list = match map.remove("messages") {
                Some(Value::Array(items)) => items,
                Some(other) => return Err(InputError::Shape(json_kind(&other))),
                None => return Err(InputError::Shape("an object without \"messages\"")),
            };
            let active = match map.remove("active_request") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(other) => return Err(InputError::ActiveRequest(json_kind(&other))),
            };
            (list, active)
        }
        other => return Err(InputError::Shape(json_kind(&other))),
    };
    let messages = list
        .into_iter()
        .enumerate()
        .map(|(index, v)| {
            Message::from_value(v).map_err(|source| InputError::Message { index, source })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let active_request = active
        .or_else(|| latest_request(&messages))
        .unwrap_or_default();
    Ok(HistoryInput {
        messages,
        active_request,
    })
}

fn messages_json(messages: &[Message]) -> Value {
    Value::Array(messages.iter().map(Message::to_value).collect())
}

fn files_json(store: &Store, files: &[FileWritten]) -> Result<Value, StoreError> {
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let content = store.read_text(&f.path)?;
        let mut m = Map::new();
        m.insert("path".into(), json!(f.path));
        m.insert("status".into(), json!(f.status));
        m.insert("chars".into(), json!(f.chars));
        m.insert("bytes".into(), json!(f.bytes));
        m.insert("content".into(), Value::String(content));
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

fn stage_json(
    store: &Store,
    report: &StageReport,
    messages: &[Message],
) -> Result<Value, StoreError> {
    let mut m = Map::new();
    m.insert("changed".into(), json!(report.changed));
    m.insert("messages".into(), messages_json(messages));
    m.insert("estimate_size".into(), json!(report.size_after));
    m.insert(
        "files_written".into(),
        files_json(store, &report.files_written)?,
    );
    Ok(Value::Object(m))
}

/// Runs budget, snip and micro on `workspace`, then both summarizing probes, and returns
/// the JSON object of spec section 10.
pub fn pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now_secs: u64,
    summary_text: Option<&str>,
) -> Result<Value, StoreError> {
    let pipeline = Pipeline::new(config);
    let store = Store::new(workspace);
    let mut messages = input.messages;
    let mut out = Map::new();
    out.insert("strategy".into(), json!("lesson"));
    out.insert(
        "estimate_size_input".into(),
        json!(estimate_size(&messages)),
    );
    let mut stages = Map::new();
    for (key, stage) in [
        ("budget", crate::compact::Stage::ToolResultBudget),
        ("snip", crate::compact::Stage::SnipCompact),
        ("micro", crate::compact::Stage::MicroCompact),
    ] {
        let report = pipeline.run_stage(stage, &mut messages, &store)?;
        stages.insert(key.into(), stage_json(&store, &report, &messages)?);
    }
    out.insert("stages".into(), Value::Object(stages));
    out.insert(
        "auto_compact_triggered".into(),
        json!(pipeline.over_limit(&messages)),
    );
    if let Some(summary) = summary_text {
        let probe = store.dry_run();
        let pending = begin_compact_history(
            &messages,
            &probe,
            &config,
            None,
            CompactTrigger::OverLimit,
            now_secs,
        )?;
        out.insert(
            "compact_history".into(),
            probe_json(&probe, pending, summary, &input.active_request)?,
        );
        let probe = store.dry_run();
        let pending = begin_reactive_compact(&messages, &probe, &config, now_secs)?;
        out.insert(
            "reactive_compact".into(),
            probe_json(&probe, pending, summary, &input.active_request)?,
        );
    }
    Ok(Value::Object(out))
}

fn probe_json(
    store: &Store,
    pending: crate::compact::PendingCompaction,
    summary: &str,
    active_request: &str,
) -> Result<Value, StoreError> {
    let request = pending.request().clone();
    let (messages, report) = pending.finish(&[summary], active_request);
    let mut m = Map::new();
    m.insert("messages".into(), messages_json(&messages));
    m.insert(
        "files_written".into(),
        files_json(store, &report.files_written)?,
    );
    m.insert(
        "summarizer_requests".into(),
        json!([{
            "system": request.system,
            "messages": [{"role": "user", "content": request.user_text}],
            "max_tokens": request.max_tokens,
        }]),
    );
    Ok(Value::Object(m))
}
