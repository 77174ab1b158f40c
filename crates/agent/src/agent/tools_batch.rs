//! Running one batch of tool calls: every `tool_use` of an answer, in order, each answered
//! by exactly one `tool_result`.
//!
//! A call that cannot run (no id, no name, an answer cut short, a batch already cancelled)
//! is answered with an error the model reads, never run with an empty name or id. A
//! `compact` call runs nothing: the batch reports the request and the loop compacts after
//! the whole batch's results are in the history (docs/pipeline.md "The loop and the compact
//! tool").

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::events::AgentEvent;
use super::state::{Agent, Stop};
use crate::message::{BlockKind, block};
use crate::tools::{ToolOutcome, run_tool};

/// The result text of a `compact` tool call under s08 (docs/pipeline.md "The loop and the
/// compact tool"); each strategy has its own (`Strategy::compact_tool_result`).
pub const COMPACT_TOOL_RESULT: &str = crate::compact::s08::COMPACT_TOOL_RESULT;
/// The result of a tool call that was never run because the user cancelled: the same words
/// a tool that was cancelled while running reports.
pub const CANCELLED_RESULT: &str = crate::tools::CANCELLED_MESSAGE;
/// The result of a tool call in an answer that stopped for another reason than `tool_use`.
pub const INCOMPLETE_RESULT: &str =
    "Not run: the response ended before the tool call was complete.";

/// One `tool_use` block as the batch runs it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BatchCall {
    /// The block's id, or the synthetic one written into the block when it had none.
    pub id: String,
    /// The block's name; empty when it had none (then `defect` says so).
    pub name: String,
    pub input: Value,
    /// Why the call must not run; this text is its error result.
    pub defect: Option<String>,
}

/// The model asked, with the `compact` tool, for the history to be compacted.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CompactRequest {
    pub focus: Option<String>,
}

/// What running a batch left behind.
#[derive(Debug)]
pub(super) struct ToolBatch {
    /// One `tool_result` per call, in order: the next user message.
    pub results: Vec<Value>,
    /// Set when a `compact` call was in the batch (the last one's focus wins).
    pub compact: Option<CompactRequest>,
    /// Cancel or Quit arrived while a tool ran; the calls after it were answered, not run.
    pub interrupted: Option<Stop>,
}

/// The id given to the `index`-th tool_use of answer number `answer` when it has none.
/// Derived from positions, not random, so a run replays to the same history; the prefix
/// keeps it apart from ids providers hand out, and it is a safe file name.
pub(super) fn synthetic_tool_id(answer: u64, index: usize) -> String {
    format!("ctxlab_missing_id_{answer}_{index}")
}

fn text_field(block: &Value, key: &str) -> Option<String> {
    block
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn defect(missing_id: Option<&str>, missing_name: bool) -> Option<String> {
    match (missing_id, missing_name) {
        (None, false) => None,
        (Some(id), false) => Some(format!(
            "Not run: the tool call had no id (ctxlab gave it the id {id} so that this \
             result answers it). Call the tool again if you still need it."
        )),
        (None, true) => Some(
            "Not run: the tool call has no tool name. Call one of the offered tools by its \
             name."
                .to_string(),
        ),
        (Some(id), true) => Some(format!(
            "Not run: the tool call had neither an id (ctxlab gave it the id {id}) nor a tool \
             name. Call one of the offered tools by its name."
        )),
    }
}

/// Reads the tool calls of an answer, in order. A `tool_use` block without a (non-empty,
/// string) id gets a synthetic one written into the block itself, so that once the answer is
/// in the history its result can name it and the pair stays valid for the API.
pub(super) fn prepare_tool_calls(content: &mut [Value], answer: u64) -> Vec<BatchCall> {
    let mut calls = Vec::new();
    for b in content.iter_mut() {
        if BlockKind::of(b) != BlockKind::ToolUse {
            continue;
        }
        let index = calls.len();
        let (id, missing_id) = match text_field(b, "id") {
            Some(id) => (id, false),
            None => {
                let id = synthetic_tool_id(answer, index);
                if let Some(fields) = b.as_object_mut() {
                    fields.insert("id".into(), Value::String(id.clone()));
                }
                (id, true)
            }
        };
        let name = text_field(b, "name");
        calls.push(BatchCall {
            defect: defect(missing_id.then_some(id.as_str()), name.is_none()),
            id,
            name: name.unwrap_or_default(),
            input: b.get("input").cloned().unwrap_or(Value::Null),
        });
    }
    calls
}

impl Agent {
    /// Runs every call in order; after a cancel the rest are answered, not run. With
    /// `complete` false (the answer stopped for another reason than `tool_use`) none runs.
    pub(super) async fn run_tools(&mut self, calls: &[BatchCall], complete: bool) -> ToolBatch {
        let mut batch = ToolBatch {
            results: Vec::with_capacity(calls.len()),
            compact: None,
            interrupted: None,
        };
        for call in calls {
            let id = call.id.clone();
            if batch.interrupted.is_some() {
                batch.results.push(block::tool_error(id, CANCELLED_RESULT));
                continue;
            }
            if !complete {
                batch.results.push(block::tool_error(id, INCOMPLETE_RESULT));
                continue;
            }
            self.emit(AgentEvent::ToolStarted {
                id: id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
            });
            let started = Instant::now();
            let (text, is_error) = if let Some(defect) = &call.defect {
                (defect.clone(), true)
            } else {
                let (outcome, stop) = self.call_tool(&call.name, &call.input).await;
                if stop.is_some() {
                    batch.interrupted = stop;
                }
                match outcome {
                    ToolOutcome::Output { content, is_error } => (content, is_error),
                    ToolOutcome::CompactRequested { focus } => {
                        self.emit(AgentEvent::CompactRequested {
                            focus: focus.clone(),
                        });
                        batch.compact = Some(CompactRequest { focus });
                        let text = self.pipeline.strategy().compact_tool_result();
                        (text.to_string(), false)
                    }
                }
            };
            self.emit(AgentEvent::ToolFinished {
                id: id.clone(),
                name: call.name.clone(),
                is_error,
                chars: text.chars().count(),
                elapsed: started.elapsed(),
            });
            batch.results.push(if is_error {
                block::tool_error(id, text)
            } else {
                block::tool_result(id, text)
            });
        }
        batch
    }

    /// Runs one tool; Cancel kills it (the tool reports `Cancelled by user`).
    async fn call_tool(&mut self, name: &str, input: &Value) -> (ToolOutcome, Option<Stop>) {
        let token = CancellationToken::new();
        let workspace = Arc::clone(&self.workspace);
        let limits = self.setup.tool_limits.clone();
        let (name, input, tool_token) = (name.to_string(), input.clone(), token.clone());
        let run = async move { run_tool(&workspace, &name, &input, &limits, &tool_token).await };
        tokio::pin!(run);
        let mut stop = None;
        loop {
            tokio::select! {
                outcome = &mut run => return (outcome, stop),
                cmd = self.commands.recv(), if stop.is_none() => {
                    // The tool must see the cancel and kill its processes before we go on,
                    // so the future is awaited to the end rather than dropped.
                    if let Some(s) = self.on_command_during_work(cmd) {
                        stop = Some(s);
                        token.cancel();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_use_without_an_id_gets_a_synthetic_one_in_the_block_itself() {
        let mut content = vec![
            block::text("let me look"),
            block::tool_use("toolu_1", "bash", json!({"command": "ls"})),
            json!({"type": "tool_use", "name": "read_file", "input": {"path": "a"}}),
            json!({"type": "tool_use", "id": "", "name": "glob", "input": {}}),
        ];
        let calls = prepare_tool_calls(&mut content, 7);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["toolu_1", "ctxlab_missing_id_7_1", "ctxlab_missing_id_7_2"]
        );
        // The history will hold the same ids its results name.
        assert_eq!(content[2]["id"], "ctxlab_missing_id_7_1");
        assert_eq!(content[3]["id"], "ctxlab_missing_id_7_2");
        assert_eq!(calls[0].defect, None);
        let defect = calls[1].defect.as_deref().unwrap();
        assert!(defect.contains("no id") && defect.contains("ctxlab_missing_id_7_1"));
        assert_eq!(calls[1].name, "read_file");
    }

    #[test]
    fn a_tool_use_without_a_name_is_a_defect_and_keeps_its_id() {
        let mut content = vec![
            json!({"type": "tool_use", "id": "toolu_9", "input": {}}),
            json!({"type": "tool_use", "id": "toolu_10", "name": 3, "input": {}}),
            json!({"type": "tool_use", "input": {}}),
        ];
        let calls = prepare_tool_calls(&mut content, 1);
        assert_eq!(calls[0].id, "toolu_9");
        assert_eq!(calls[0].name, "");
        assert!(calls[0].defect.as_deref().unwrap().contains("no tool name"));
        assert!(calls[1].defect.as_deref().unwrap().contains("no tool name"));
        let both = calls[2].defect.as_deref().unwrap();
        assert!(both.contains("neither an id") && both.contains("nor a tool name"));
    }
}
