//! The JSON `ctxlab pipeline` prints, in each strategy's shape: s08 as docs/pipeline.md
//! "`ctxlab pipeline`" describes (`"strategy": "s08"`), s08-latest and s06 as their recorded cases
//! (`expected_by_strategy`), guarded as s08's plus each stage's `reason`
//! (docs/strategies.md, "ctxlab pipeline").
//!
//! The object is written as it is made, key by key, straight to the output: a history
//! holding one huge message is never copied into a JSON tree or an output string (each
//! stage's messages and each file's content go out and are dropped), so memory stays a small
//! multiple of the input. The key order is the one the recorded cases have.

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::PipelineError;
use crate::compact::{PendingCompaction, SizeUnit, Stage, StageReport, Strategy};
use crate::message::Message;
use crate::store::{FileWritten, Store};

/// The output object being written.
pub(super) struct Shape<'w> {
    strategy: Strategy,
    out: &'w mut dyn Write,
    /// Stages written so far (a comma goes before every one but the first).
    stages: usize,
    /// s08-latest's `probe_micro_no_target`, made during the stages but placed after them.
    micro_probe: Option<Vec<u8>>,
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

/// `,"key":` (or without the comma): a key of an object being written.
fn key(out: &mut dyn Write, comma: bool, name: &str) -> Result<(), PipelineError> {
    if comma {
        out.write_all(b",")?;
    }
    serde_json::to_writer(&mut *out, name)?;
    out.write_all(b":")?;
    Ok(())
}

fn value(out: &mut dyn Write, v: &impl Serialize) -> Result<(), PipelineError> {
    serde_json::to_writer(&mut *out, v)?;
    Ok(())
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
        out.write_all(b"{")?;
        key(out, false, "path")?;
        value(out, &f.path)?;
        key(out, true, "status")?;
        value(out, &f.status)?;
        key(out, true, "chars")?;
        value(out, &f.chars)?;
        key(out, true, "bytes")?;
        value(out, &f.bytes)?;
        key(out, true, "content")?;
        store.read_text_with(&f.path, |text| serde_json::to_writer(&mut *out, text))??;
        out.write_all(b"}")?;
    }
    out.write_all(b"]")?;
    Ok(())
}

impl<'w> Shape<'w> {
    /// Starts the object: `strategy`, the input size, and opens `stages`.
    pub(super) fn new(
        strategy: Strategy,
        input_size: usize,
        out: &'w mut dyn Write,
    ) -> Result<Shape<'w>, PipelineError> {
        out.write_all(b"{")?;
        key(out, false, "strategy")?;
        value(out, &strategy.name())?;
        key(out, true, &format!("{}_input", size_key(strategy.unit())))?;
        value(out, &input_size)?;
        key(out, true, "stages")?;
        out.write_all(b"{")?;
        Ok(Shape {
            strategy,
            out,
            stages: 0,
            micro_probe: None,
        })
    }

    /// One stage's entry: `changed`, `messages`, the size, `files_written` (s08-latest adds
    /// `ran` and shows only that when the stage did not run; guarded adds `reason`).
    pub(super) fn stage(
        &mut self,
        store: &Store,
        report: &StageReport,
        messages: &[Message],
    ) -> Result<(), PipelineError> {
        let out = &mut *self.out;
        key(out, self.stages > 0, stage_key(report.stage))?;
        self.stages += 1;
        out.write_all(b"{")?;
        let mut comma = false;
        if self.strategy == Strategy::S08Latest {
            key(out, false, "ran")?;
            value(out, &report.ran)?;
            if !report.ran {
                out.write_all(b"}")?;
                return Ok(());
            }
            comma = true;
        }
        // Key order as each version's recorded cases have it.
        key(out, comma, "changed")?;
        value(out, &report.changed)?;
        key(out, true, "messages")?;
        value(out, &messages)?;
        if report.unit == SizeUnit::Chars {
            key(out, true, size_key(report.unit))?;
            value(out, &report.size_after)?;
        }
        key(out, true, "files_written")?;
        write_files(out, store, &report.files_written)?;
        if report.unit != SizeUnit::Chars {
            key(out, true, size_key(report.unit))?;
            value(out, &report.size_after)?;
        }
        if self.strategy == Strategy::Guarded {
            key(out, true, "reason")?;
            value(out, &report.reason)?;
        }
        out.write_all(b"}")?;
        Ok(())
    }

    /// s08-latest's `probe_micro_no_target`; it comes after `stages` in the output, so it is
    /// kept as text until then.
    pub(super) fn micro_probe(
        &mut self,
        store: &Store,
        report: &StageReport,
        messages: &[Message],
    ) -> Result<(), PipelineError> {
        let mut buf = Vec::new();
        buf.write_all(b"{")?;
        key(&mut buf, false, "changed")?;
        value(&mut buf, &report.changed)?;
        key(&mut buf, true, "messages")?;
        value(&mut buf, &messages)?;
        key(&mut buf, true, "files_written")?;
        write_files(&mut buf, store, &report.files_written)?;
        buf.write_all(b"}")?;
        self.micro_probe = Some(buf);
        Ok(())
    }

    /// Closes `stages` and writes `auto_compact_triggered`.
    pub(super) fn triggered(&mut self, over: bool) -> Result<(), PipelineError> {
        let out = &mut *self.out;
        out.write_all(b"}")?;
        if let Some(probe) = self.micro_probe.take() {
            key(out, true, "probe_micro_no_target")?;
            out.write_all(&probe)?;
        }
        key(out, true, "auto_compact_triggered")?;
        value(out, &over)?;
        Ok(())
    }

    /// A summarizing probe: the history it leaves, the files it would write and the exact
    /// request (no `system` when the strategy sends none); `null` when the strategy found
    /// nothing to summarize.
    pub(super) fn probe(
        &mut self,
        name: &str,
        store: &Store,
        pending: Option<PendingCompaction>,
        summary: &str,
        active_request: &str,
    ) -> Result<(), PipelineError> {
        let out = &mut *self.out;
        key(out, true, name)?;
        let Some(pending) = pending else {
            out.write_all(b"null")?;
            return Ok(());
        };
        let request = pending.request().clone();
        let (messages, report) = pending.finish(&[summary], active_request);
        out.write_all(b"{")?;
        key(out, false, "messages")?;
        value(out, &messages)?;
        drop(messages);
        key(out, true, "files_written")?;
        write_files(out, store, &report.files_written)?;
        key(out, true, "summarizer_requests")?;
        out.write_all(b"[{")?;
        let mut comma = false;
        if !request.system.is_empty() {
            key(out, false, "system")?;
            value(out, &request.system)?;
            comma = true;
        }
        key(out, comma, "messages")?;
        value(
            out,
            &[json!({"role": "user", "content": Value::String(request.user_text)})],
        )?;
        key(out, true, "max_tokens")?;
        value(out, &request.max_tokens)?;
        out.write_all(b"}]}")?;
        Ok(())
    }

    /// Closes the object (no newline).
    pub(super) fn finish(self) -> Result<(), PipelineError> {
        self.out.write_all(b"}")?;
        Ok(())
    }
}
