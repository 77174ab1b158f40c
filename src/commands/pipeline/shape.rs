//! The JSON `ctxlab pipeline` prints, in each strategy's shape: s08 as docs/pipeline.md
//! "`ctxlab pipeline`" describes (`"strategy": "lesson"`), s08-latest and s06 as their recorded cases
//! (`expected_by_strategy`), guarded as s08's plus each stage's `reason`
//! (docs/strategies.md, "ctxlab pipeline").

use serde_json::{Map, Value, json};

use crate::compact::{PendingCompaction, SizeUnit, Stage, StageReport, Strategy};
use crate::message::Message;
use crate::store::{FileWritten, Store, StoreError};

/// The output object being built.
pub(super) struct Shape {
    strategy: Strategy,
    out: Map<String, Value>,
    stages: Map<String, Value>,
}

fn size_key(unit: SizeUnit) -> &'static str {
    match unit {
        SizeUnit::Chars => "estimate_size",
        SizeUnit::JsonChars => "estimate_chars",
        SizeUnit::Tokens => "estimate_tokens",
    }
}

fn stage_key(stage: Stage) -> &'static str {
    match stage {
        Stage::ToolResultBudget => "budget",
        Stage::SnipCompact => "snip",
        Stage::MicroCompact => "micro",
        Stage::FitToolResults => "fit",
        other => other.name(),
    }
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

impl Shape {
    pub(super) fn new(strategy: Strategy, input_size: usize) -> Shape {
        let mut out = Map::new();
        let name = match strategy {
            Strategy::S08 => "lesson",
            other => other.name(),
        };
        out.insert("strategy".into(), json!(name));
        let key = format!("{}_input", size_key(strategy.unit()));
        out.insert(key, json!(input_size));
        // Filled by `triggered`; inserted now so it keeps its place after the input size.
        out.insert("stages".into(), Value::Null);
        Shape {
            strategy,
            out,
            stages: Map::new(),
        }
    }

    /// One stage's entry: `changed`, `messages`, the size, `files_written` (s08-latest adds
    /// `ran` and shows only that when the stage did not run; guarded adds `reason`).
    pub(super) fn stage(
        &mut self,
        store: &Store,
        report: &StageReport,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        let mut m = Map::new();
        if self.strategy == Strategy::S08Latest {
            m.insert("ran".into(), json!(report.ran));
            if !report.ran {
                self.stages
                    .insert(stage_key(report.stage).into(), Value::Object(m));
                return Ok(());
            }
        }
        // Key order as each version's recorded cases have it.
        m.insert("changed".into(), json!(report.changed));
        m.insert("messages".into(), messages_json(messages));
        let size = (size_key(report.unit).to_string(), json!(report.size_after));
        if report.unit == SizeUnit::Chars {
            m.insert(size.0.clone(), size.1.clone());
        }
        m.insert(
            "files_written".into(),
            files_json(store, &report.files_written)?,
        );
        if report.unit != SizeUnit::Chars {
            m.insert(size.0, size.1);
        }
        if self.strategy == Strategy::Guarded {
            m.insert("reason".into(), json!(report.reason));
        }
        self.stages
            .insert(stage_key(report.stage).into(), Value::Object(m));
        Ok(())
    }

    /// s08-latest's `probe_micro_no_target`.
    pub(super) fn micro_probe(
        &mut self,
        store: &Store,
        report: &StageReport,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        let mut m = Map::new();
        m.insert("changed".into(), json!(report.changed));
        m.insert("messages".into(), messages_json(messages));
        m.insert(
            "files_written".into(),
            files_json(store, &report.files_written)?,
        );
        self.out
            .insert("probe_micro_no_target".into(), Value::Object(m));
        Ok(())
    }

    pub(super) fn triggered(&mut self, over: bool) {
        let stages = std::mem::take(&mut self.stages);
        self.out.insert("stages".into(), Value::Object(stages));
        self.out
            .insert("auto_compact_triggered".into(), json!(over));
    }

    /// A summarizing probe: the history it leaves, the files it would write and the exact
    /// request (no `system` when the strategy sends none); `null` when the strategy found
    /// nothing to summarize.
    pub(super) fn probe(
        &mut self,
        key: &str,
        store: &Store,
        pending: Option<PendingCompaction>,
        summary: &str,
        active_request: &str,
    ) -> Result<(), StoreError> {
        let Some(pending) = pending else {
            self.out.insert(key.into(), Value::Null);
            return Ok(());
        };
        let request = pending.request().clone();
        let (messages, report) = pending.finish(&[summary], active_request);
        let mut m = Map::new();
        m.insert("messages".into(), messages_json(&messages));
        m.insert(
            "files_written".into(),
            files_json(store, &report.files_written)?,
        );
        let mut req = Map::new();
        if !request.system.is_empty() {
            req.insert("system".into(), json!(request.system));
        }
        req.insert(
            "messages".into(),
            json!([{"role": "user", "content": request.user_text}]),
        );
        req.insert("max_tokens".into(), json!(request.max_tokens));
        m.insert("summarizer_requests".into(), json!([Value::Object(req)]));
        self.out.insert(key.into(), Value::Object(m));
        Ok(())
    }

    pub(super) fn finish(self) -> Value {
        Value::Object(self.out)
    }
}
