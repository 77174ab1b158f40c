//! `ctxlab pipeline` as a library function (docs/pipeline.md, "ctxlab pipeline"): run the
//! stages on a history read from a file and describe every step as JSON, without a model.
//!
//! The probes of compact_history and reactive_compact run against a dry-run store, which
//! sees the workspace as it stood after micro but writes nothing: each probe therefore
//! reports the names it would have used, and the real workspace is left as micro left it.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::compact::{
    CompactTrigger, Pipeline, PipelineConfig, StageReport, begin_compact_history,
    begin_reactive_compact, estimate_size,
};
use crate::message::Message;
// The input format is a session format: it lives with the session readers, and this
// command (like `replay`) reads through them. Re-exported for the callers of this command.
pub use crate::session::history_input::{
    HistoryInput, InputError, history_input_from_value, parse_history_input,
};
use crate::store::{FileWritten, Store, StoreError};

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
/// the JSON object docs/pipeline.md "ctxlab pipeline" describes.
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
