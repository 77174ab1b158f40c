//! Stage 4, `compact_history`: when the history is still over the limit after micro (or
//! the model or the user asked), save the transcript and replace the whole history with one
//! `[Compacted]` summary message (docs/pipeline.md, "compact_history").

use crate::compact::config::PipelineConfig;
use crate::compact::report::Stage;
use crate::compact::report::{CompactTrigger, limit_reason};
use crate::compact::summarize::{LessonLines, PendingCompaction, Summarizing, SummaryRequest};
use crate::compact::unit::SizeUnit;
use crate::message::Message;
use crate::store::{Store, StoreError};

/// Why compact_history runs, as its report will say: `96,266 > 50,000` over the limit,
/// `requested, focus: ...` when the model or the user asked.
pub fn compact_reason(
    trigger: &CompactTrigger,
    focus: Option<&str>,
    size: usize,
    limit: usize,
) -> String {
    match (trigger, focus) {
        (CompactTrigger::OverLimit, _) => limit_reason(size, limit),
        (_, Some(focus)) => format!("requested, focus: {focus}"),
        (_, None) => "requested".to_string(),
    }
}

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
    let reason = compact_reason(
        &trigger,
        focus,
        SizeUnit::Chars.measure(messages),
        cfg.context_limit,
    );
    let what = Summarizing {
        stage: Stage::CompactHistory,
        shape: super::SUMMARY_SHAPE,
        unit: SizeUnit::Chars,
        trigger,
        focus,
    };
    let request = SummaryRequest::from_lines(&lines, messages.len(), cfg, focus);
    Ok(PendingCompaction::new(
        what,
        messages,
        messages.len(),
        request,
        transcript,
        reason,
    ))
}
