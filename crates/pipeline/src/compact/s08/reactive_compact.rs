//! `reactive_compact`: after the API said the prompt is too long, save the transcript,
//! summarize all but the last few messages and retry once (docs/pipeline.md,
//! "reactive_compact").

use crate::compact::config::PipelineConfig;
use crate::compact::report::CompactTrigger;
use crate::compact::report::{Adjustment, Stage};
use crate::compact::summarize::{LessonLines, PendingCompaction, Summarizing, SummaryRequest};
use crate::compact::unit::SizeUnit;
use crate::message::Message;
use crate::store::{Store, StoreError};

/// Where `reactive_compact` cuts: the tail it keeps starts here.
pub fn reactive_tail_start(messages: &[Message], cfg: &PipelineConfig) -> usize {
    let len = messages.len();
    let mut tail_start = len.saturating_sub(cfg.reactive_keep_tail);
    if 0 < tail_start
        && tail_start < len
        && messages[tail_start].is_tool_result_message()
        && messages[tail_start - 1].has_tool_use()
    {
        tail_start -= 1;
    }
    tail_start
}

/// Step 1 of `reactive_compact`: save the transcript, summarize all but the tail.
pub fn begin_reactive_compact(
    messages: &[Message],
    store: &Store,
    cfg: &PipelineConfig,
    now_secs: u64,
) -> Result<PendingCompaction, StoreError> {
    let lines = LessonLines::of(messages);
    let transcript = store.write_transcript(now_secs, lines.transcript())?;
    let tail_start = reactive_tail_start(messages, cfg);
    let reason = format!(
        "the API said the prompt is too long; {tail_start} messages before the last {} to summarize",
        messages.len() - tail_start
    );
    let what = Summarizing {
        stage: Stage::ReactiveCompact,
        shape: super::SUMMARY_SHAPE,
        unit: SizeUnit::Chars,
        trigger: CompactTrigger::PromptTooLong,
        focus: None,
    };
    let request = SummaryRequest::from_lines(&lines, tail_start, cfg, None);
    let mut pending =
        PendingCompaction::new(what, messages, tail_start, request, transcript, reason);
    // The legend says "keep 5": a tail one longer keeps a tool pair together.
    pending.adjusted = Adjustment::of_cut(
        (0, 0),
        (messages.len() - tail_start, cfg.reactive_keep_tail),
    );
    Ok(pending)
}
