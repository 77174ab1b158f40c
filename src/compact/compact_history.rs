//! Stage 4, `compact_history`: when the history is still over the limit after micro (or
//! the model or the user asked), save the transcript and replace the whole history with one
//! `[Compacted]` summary message (docs/pipeline.md, "compact_history").

use super::config::PipelineConfig;
use super::report::Stage;
use super::report::{CompactTrigger, limit_reason};
use super::strategy::SizeUnit;
use super::summarize::{LessonLines, PendingCompaction, SummaryRequest, SummaryStyle};
use crate::message::{Message, estimate_size};
use crate::store::{Store, StoreError};

/// Step 1 of `compact_history`: save the transcript, build the request.
pub fn begin_compact_history(
    messages: &[Message],
    store: &Store,
    cfg: &PipelineConfig,
    focus: Option<&str>,
    trigger: CompactTrigger,
    now_secs: u64,
) -> Result<PendingCompaction, StoreError> {
    let lines = LessonLines::of(messages);
    let transcript = store.write_transcript(now_secs, lines.transcript())?;
    let size_before = estimate_size(messages);
    let reason = match (&trigger, focus) {
        (CompactTrigger::OverLimit, _) => limit_reason(size_before, cfg.context_limit),
        (_, Some(focus)) => format!("requested, focus: {focus}"),
        (_, None) => "requested".to_string(),
    };
    Ok(PendingCompaction {
        stage: Stage::CompactHistory,
        style: SummaryStyle::Lesson,
        unit: SizeUnit::Chars,
        reason,
        trigger,
        focus: focus.map(str::to_string),
        request: SummaryRequest::from_lines(&lines, messages.len(), cfg, focus),
        transcript,
        replaced: messages.len(),
        tail: Vec::new(),
        size_before,
        messages_before: messages.len(),
    })
}
