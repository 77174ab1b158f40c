//! Stage 4, `compact_history`: when the history is still over the limit after micro (or
//! the model or the user asked), save the transcript and replace the whole history with one
//! `[Compacted]` summary message (docs/pipeline.md, "compact_history").

use super::config::PipelineConfig;
use super::report::{CompactTrigger, limit_reason};
use super::summarize::{PendingCompaction, SummaryRequest, transcript_text};
use crate::message::{Message, estimate_size};
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
    let transcript = store.write_transcript(now_secs, &transcript_text(messages))?;
    let size_before = estimate_size(messages);
    Ok(PendingCompaction {
        reason: compact_reason(&trigger, focus, size_before, cfg.context_limit),
        trigger,
        focus: focus.map(str::to_string),
        request: SummaryRequest::new(messages, cfg, focus),
        transcript,
        replaced: messages.len(),
        tail: Vec::new(),
        size_before,
        messages_before: messages.len(),
    })
}
