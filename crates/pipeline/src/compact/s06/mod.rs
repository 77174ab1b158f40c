//! `s06`: the lesson's older three-layer design (docs/strategies.md, "s06").
//!
//! Before every call: `micro` (older results become `[Previous: used {tool}]`), then
//! `auto_compact` when the history is over `context_limit` tokens (`len(str(history)) // 4`).
//! No budget, no snip, no reactive stage. The `compact` tool answers `Compressing...`; after
//! its batch the history is auto-compacted with its focus and the turn ends.

pub mod auto_compact;
pub mod micro;

pub use auto_compact::begin_auto_compact;
pub use micro::micro_previous;

use serde_json::json;

use super::design::{CompactAsk, Design, DesignContext, StageRun};
use super::report::{CompactTrigger, Stage};
use super::summarize::{PendingCompaction, SummaryShape};
use super::window::ContextWindow;
use crate::message::{Message, ToolSpec};
use crate::store::{Store, StoreError};

/// The summarizer's one user message starts with this; s06 sends no system prompt.
pub const SUMMARY_PROMPT: &str = "Summarize this conversation for continuity. Include: 1) What was accomplished, 2) Current state, 3) Key decisions made. Be concise but preserve critical details.";

/// What stands in for a summary the model returned without text.
pub const NO_SUMMARY: &str = "No summary generated.";

/// What a `compact` tool call answers.
pub const COMPACT_TOOL_RESULT: &str = "Compressing...";

/// The `compact` tool's description and its `focus` field's, as the lesson words them.
pub const COMPACT_TOOL_DESCRIPTION: &str = "Trigger manual conversation compression.";
pub const FOCUS_DESCRIPTION: &str = "What to preserve in the summary";

/// Results of this tool are reference material and never replaced.
pub const PRESERVED_TOOL: &str = "read_file";

/// s06 runs only its micro before each call.
pub const STAGES: [Stage; 1] = [Stage::MicroCompact];

/// The summary text: the first block as the model wrote it.
fn summary(texts: &[&str]) -> String {
    match texts.first() {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => NO_SUMMARY.to_string(),
    }
}

fn message(_label: &str, _request: &str, summary: &str, transcript: &str) -> String {
    let marker = crate::compact::markers::Marker::Compressed { transcript }.write();
    format!("{marker}\n\n{summary}")
}

/// `[Conversation compressed. Transcript: {path}]` and the summary as written.
pub const SUMMARY_SHAPE: SummaryShape = SummaryShape { summary, message };

/// The lesson's s06.
#[derive(Debug, Clone, Copy)]
pub struct S06Design;

impl Design for S06Design {
    fn stages(&self) -> &'static [Stage] {
        &STAGES
    }

    fn summarizing_stage(&self) -> Stage {
        Stage::AutoCompact
    }

    fn run_stage(
        &self,
        stage: Stage,
        messages: &mut Vec<Message>,
        _store: &Store,
        cx: DesignContext<'_>,
    ) -> Result<StageRun, StoreError> {
        Ok(match stage {
            Stage::MicroCompact => StageRun::Ran(micro_previous(messages, cx.config)),
            _ => StageRun::NotRun("not a stage of s06".into()),
        })
    }

    fn begin_compact(
        &self,
        ask: CompactAsk<'_>,
        focus: Option<&str>,
        trigger: CompactTrigger,
    ) -> Result<Option<PendingCompaction>, StoreError> {
        let CompactAsk {
            messages,
            store,
            cx,
            now_secs,
        } = ask;
        begin_auto_compact(messages, store, cx.config, focus, trigger, now_secs).map(Some)
    }

    /// s06 has no reactive stage: the error goes to the user.
    fn begin_reactive(
        &self,
        _ask: CompactAsk<'_>,
        _attempt: usize,
        _window: Option<ContextWindow>,
    ) -> Result<Option<PendingCompaction>, StoreError> {
        Ok(None)
    }

    fn system_note(&self) -> Option<&'static str> {
        None
    }

    fn compact_tool_result(&self) -> &'static str {
        COMPACT_TOOL_RESULT
    }

    fn compact_tool_override(&self) -> Option<ToolSpec> {
        Some(ToolSpec {
            name: "compact".into(),
            description: COMPACT_TOOL_DESCRIPTION.into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "focus": {"type": "string", "description": FOCUS_DESCRIPTION}
                }
            }),
        })
    }
}
