//! `guarded`: ctxlab's own strategy, the s08 stages with every loss the lesson documents
//! removed (docs/strategies.md, "guarded"). Same thresholds and unit as s08.
//!
//! 1. snip checks tool pairs by id and appends what it cuts to `.transcripts/archive.jsonl`
//!    before cutting (`snip.rs`);
//! 2. micro spares the results the model has not seen and saves the others before a
//!    placeholder naming tool, input and file replaces them (here, through the shared
//!    saving micro);
//! 3. summaries keep the recent past, name the transcript, keep unseen results, and the
//!    reactive stage shrinks its tail instead of growing the history (`summary.rs`).
//!
//! The budget stage and the compact tool are s08's.

pub mod snip;
pub mod summary;

pub use snip::{pair_safe_bounds, snip_to_archive};
pub use summary::{begin_compact_history, begin_reactive, reactive_tails, recent_past_input};

use super::config::PipelineConfig;
use super::design::{CompactAsk, Design, DesignContext, StageRun};
use super::micro_save::{MicroSave, micro_save};
use super::report::{CompactTrigger, Stage, StageReport};
use super::results::{GUARDED_PREFIX, GUARDED_SUFFIX, ToolCall};
use super::s08::{STAGES, tool_result_budget};
use super::summarize::{PendingCompaction, SummaryShape, summary_from_texts, summary_message_text};
use super::unit::SizeUnit;
use super::window::ContextWindow;
use crate::message::Message;
use crate::pyrepr::unicode_json;
use crate::store::{Store, StoreError};
use crate::util::clip_chars;

/// How much of a tool's input the placeholder shows, in chars.
pub const PLACEHOLDER_INPUT_CHARS: usize = 80;

/// `[Earlier result of {tool} {input} saved at {path}; read it again if needed]`.
pub fn placeholder(call: Option<ToolCall<'_>>, path: &str) -> String {
    let (tool, input) = match call {
        Some(c) => (
            c.name,
            clip_chars(&unicode_json(c.input), PLACEHOLDER_INPUT_CHARS),
        ),
        None => ("unknown", "{}".to_string()),
    };
    format!("{GUARDED_PREFIX}{tool} {input} saved at {path}{GUARDED_SUFFIX}")
}

/// guarded's `micro_compact`: seen results but the last `micro_keep_recent`, over
/// `micro_min_chars`, saved (or their copy found) and replaced by `placeholder`.
pub fn micro(
    messages: &mut [Message],
    store: &Store,
    cfg: &PipelineConfig,
) -> Result<StageReport, StoreError> {
    micro_save(
        messages,
        store,
        cfg,
        &MicroSave {
            unit: SizeUnit::Chars,
            target: None,
            placeholder: &placeholder,
            shrink_only: true,
        },
    )
}

fn summary(texts: &[&str]) -> String {
    summary_from_texts(texts)
}

fn message(label: &str, request: &str, summary: &str, transcript: &str) -> String {
    format!(
        "{}\n\nFull transcript: {transcript}",
        summary_message_text(label, request, summary)
    )
}

/// s08's summary message, then `Full transcript: {path}`.
pub const SUMMARY_SHAPE: SummaryShape = SummaryShape { summary, message };

/// ctxlab's own strategy.
#[derive(Debug, Clone, Copy)]
pub struct GuardedDesign;

impl Design for GuardedDesign {
    fn stages(&self) -> &'static [Stage] {
        &STAGES
    }

    fn run_stage(
        &self,
        stage: Stage,
        messages: &mut Vec<Message>,
        store: &Store,
        cx: DesignContext<'_>,
    ) -> Result<StageRun, StoreError> {
        let cfg = cx.config;
        Ok(match stage {
            Stage::ToolResultBudget => StageRun::Ran(tool_result_budget(messages, store, cfg)?),
            Stage::SnipCompact => StageRun::Ran(snip_to_archive(messages, store, cfg)?),
            Stage::MicroCompact => StageRun::Ran(micro(messages, store, cfg)?),
            _ => StageRun::NotRun("not a stage of guarded".into()),
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
        begin_compact_history(messages, store, cx.config, focus, trigger, now_secs)
    }

    fn begin_reactive(
        &self,
        ask: CompactAsk<'_>,
        attempt: usize,
        window: Option<ContextWindow>,
    ) -> Result<Option<PendingCompaction>, StoreError> {
        let CompactAsk {
            messages,
            store,
            cx,
            now_secs,
        } = ask;
        begin_reactive(messages, store, cx.config, now_secs, attempt, window)
    }

    fn system_note(&self) -> Option<&'static str> {
        Some(super::s08::SYSTEM_NOTE)
    }

    fn compact_tool_result(&self) -> &'static str {
        super::s08::COMPACT_TOOL_RESULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_placeholder_names_tool_input_and_file() {
        let input =
            json!({"command": "grep -rn parse_line src/ | head -50", "note": "x".repeat(100)});
        let p = placeholder(
            Some(ToolCall {
                name: "bash",
                input: &input,
            }),
            ".task_outputs/tool-results/t1.txt",
        );
        let shown = clip_chars(&unicode_json(&input), 80);
        assert_eq!(shown.chars().count(), 80);
        assert_eq!(
            p,
            format!(
                "[Earlier result of bash {shown} saved at .task_outputs/tool-results/t1.txt; read it again if needed]"
            )
        );
        assert_eq!(
            crate::compact::results::pointed_path(&p),
            Some(".task_outputs/tool-results/t1.txt")
        );
        assert_eq!(
            placeholder(None, "p"),
            "[Earlier result of unknown {} saved at p; read it again if needed]"
        );
    }
}
