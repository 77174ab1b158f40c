//! A summary request the server refused as too long: the next attempt sized from the
//! server's own count of this request, and, once that would fall below a floor, a
//! compaction that needs no model (docs/pipeline.md, "When the summary does not fit").
//!
//! A fixed chars-per-token guess fails on token-dense text (a repeated file list runs near
//! 1.5 chars a token, the guess is 3), and sending the same request again fails the same
//! way. The refusal says how many tokens this very request was, so its chars divided by
//! that count is the ratio to size the next attempt with. Every attempt is strictly
//! smaller than the last, so the series ends; below `REFIT_FLOOR_CHARS` the history before
//! a short tail is replaced by a marker pointing at the transcript, which needs no model.

use super::config::PipelineConfig;
use super::report::{Change, CompactTrigger, Stage, StageReport};
use super::s08::SUMMARY_SHAPE;
use super::s08::reactive_tail_start;
use super::summarize::{
    LessonLines, PendingCompaction, SUMMARY_OVERHEAD_TOKENS, Summarizing, SummaryRequest,
};
use super::summary_label::SummaryLabel;
use super::unit::SizeUnit;
use crate::message::Message;
use crate::store::{Store, StoreError};
use crate::util::group_digits;

/// Share of the room the server's ratio leaves that the next attempt uses: the ratio is
/// measured on the refused text, and the shorter prefix may tokenize a little worse.
pub const REFIT_MARGIN_PERCENT: usize = 85;
/// An attempt is at most this share of the one before, whatever the numbers say, so a
/// series of refusals always ends.
pub const REFIT_MAX_SHARE_PERCENT: usize = 75;
/// Below this many chars of history a summary is not worth asking for.
pub const REFIT_FLOOR_CHARS: usize = 256;
/// The tails a reduction without a model keeps, one after the other while the request
/// is still refused (as reactive compaction keeps its tail).
pub const NO_MODEL_TAILS: [usize; 3] = [5, 2, 0];

/// What the server said when it refused a request as too long (its numbers, when given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Refusal {
    pub prompt_tokens: Option<u64>,
    pub window_tokens: Option<u64>,
}

/// The next summary attempt would be smaller than the floor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the next summary attempt would hold {chars} chars of history, below the floor of {floor}",
    chars = group_digits(*chars),
    floor = group_digits(REFIT_FLOOR_CHARS)
)]
pub struct BelowFloor {
    pub chars: usize,
}

/// The tail a reduction without a model keeps after one that kept `kept` (None for the
/// first): 5, then 2, then 0; None past the last.
pub fn next_no_model_tail(kept: Option<usize>) -> Option<usize> {
    match kept {
        None => NO_MODEL_TAILS.first().copied(),
        Some(k) => NO_MODEL_TAILS.iter().copied().find(|&t| t < k),
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl PendingCompaction {
    /// The summary request's size as sent: instructions and history text, in chars.
    pub fn request_chars(&self) -> usize {
        self.request.system.chars().count() + self.request.user_text.chars().count()
    }

    /// The history text the summary request holds, in chars.
    pub fn input_chars(&self) -> usize {
        self.request.user_text.chars().count()
    }

    /// Sizes the next attempt after the server refused this one: with its token count of
    /// the request, at this request's own chars per token, with a margin, into the window
    /// (the server's, else `known_window`); without numbers, half. Always smaller than
    /// before. Returns the clause added to the reason.
    pub fn refit_after_refusal(
        &mut self,
        refusal: Refusal,
        known_window: Option<u64>,
    ) -> Result<String, BelowFloor> {
        let sent = self.request_chars();
        let input = self.input_chars();
        let window = refusal.window_tokens.or(known_window).map(to_usize);
        let prompt = refusal.prompt_tokens.map(to_usize).filter(|&p| p > 0);
        let (target, how) = match (prompt, window) {
            (Some(p), Some(w)) => {
                // Hundredths of a char per token keep the sum in integers.
                let cpt100 = (sent.saturating_mul(100) / p).max(1);
                let reserve = self.request.max_tokens.min(w / 4).max(1);
                let instructions = (self.request.system.chars().count() * 100).div_ceil(cpt100);
                let room = w
                    .saturating_sub(SUMMARY_OVERHEAD_TOKENS)
                    .saturating_sub(instructions)
                    .saturating_sub(reserve);
                if reserve < self.request.max_tokens {
                    self.request.max_tokens = reserve;
                }
                let chars = room.saturating_mul(cpt100) / 100 * REFIT_MARGIN_PERCENT / 100;
                let how = format!(
                    "the server counted {} tokens > {} for {} chars ({}.{:02} chars a token)",
                    group_digits(p),
                    group_digits(w),
                    group_digits(sent),
                    cpt100 / 100,
                    cpt100 % 100
                );
                (chars, how)
            }
            _ => (input / 2, "the server gave no token count".to_string()),
        };
        let target = target.min(input * REFIT_MAX_SHARE_PERCENT / 100);
        if target < REFIT_FLOOR_CHARS {
            return Err(BelowFloor { chars: target });
        }
        if let Some((cut, _)) = self.request.user_text.char_indices().nth(target) {
            self.request.user_text.truncate(cut);
        }
        let clause = format!(
            "summary request refused: {how}; next attempt with {} chars of history",
            group_digits(target)
        );
        self.add_reason(&clause);
        Ok(clause)
    }

    /// Ends the compaction without a summary: the messages of `history` (the one this
    /// compaction began from) before its last `keep_tail` (a tool call kept with its
    /// result) become one marker message naming the transcript, which already holds them.
    /// `why` says what was tried.
    pub fn finish_without_summary(
        self,
        history: &[Message],
        keep_tail: usize,
        cfg: &PipelineConfig,
        active_request: &str,
        why: &str,
    ) -> (Vec<Message>, StageReport) {
        let mut tail_cfg = *cfg;
        tail_cfg.reactive_keep_tail = keep_tail;
        let tail_start = reactive_tail_start(history, &tail_cfg);
        let label = SummaryLabel::for_trigger(&self.trigger).text();
        let path = self.transcript.path.clone();
        let summary = format!(
            "(no summary: {why}; the {tail_start} earlier messages are in the transcript {path})"
        );
        let mut out = Vec::with_capacity(1 + history.len() - tail_start);
        out.push(Message::user_text((self.shape.message)(
            label,
            active_request,
            &summary,
            &path,
        )));
        out.extend_from_slice(&history[tail_start..]);
        let kept_tail = history.len() - tail_start;
        let reason = format!(
            "{}; {why}: reduced without a model, the {} messages before the last {kept_tail} \
             replaced by a marker (they are in the transcript {path})",
            self.reason,
            group_digits(tail_start),
        );
        let report = StageReport {
            stage: self.stage,
            changed: true,
            size_before: self.unit.measure(history),
            size_after: self.unit.measure(&out),
            messages_before: history.len(),
            messages_after: out.len(),
            changes: vec![Change::Summarized {
                replaced: tail_start,
                kept_tail,
                trigger: self.trigger,
                focus: self.focus,
                transcript: path,
                summary_chars: 0,
                summary_cut: false,
            }],
            files_written: vec![self.transcript],
            reason,
            ran: true,
            unit: self.unit,
            adjusted: self.adjusted,
        };
        (out, report)
    }
}

/// Step 1 of a reduction without a model after a request was refused again although a
/// compaction already ran in this turn: the transcript of `messages` is written, nothing
/// is asked of a model. Finish it with `finish_without_summary`.
pub fn begin_no_model(
    messages: &[Message],
    store: &Store,
    now_secs: u64,
    unit: SizeUnit,
) -> Result<PendingCompaction, StoreError> {
    let lines = LessonLines::of(messages);
    let transcript = store.write_transcript(now_secs, lines.transcript())?;
    let what = Summarizing {
        stage: Stage::ReactiveCompact,
        shape: SUMMARY_SHAPE,
        unit,
        trigger: CompactTrigger::PromptTooLong,
        focus: None,
    };
    let request = SummaryRequest {
        system: String::new(),
        user_text: String::new(),
        max_tokens: 0,
    };
    let reason = "the API said the prompt is too long again after a compaction without a summary"
        .to_string();
    // Nothing is replaced by a summary here: `finish_without_summary` cuts the history it
    // is given, so the pending compaction keeps no tail of its own.
    let mut pending =
        PendingCompaction::new(what, messages, messages.len(), request, transcript, reason);
    pending.replaced = 0;
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::FileWritten;

    fn pending(input_chars: usize, max_tokens: usize) -> PendingCompaction {
        PendingCompaction {
            stage: Stage::CompactHistory,
            shape: SUMMARY_SHAPE,
            unit: SizeUnit::Chars,
            reason: "3,282 > 3,000".into(),
            trigger: CompactTrigger::OverLimit,
            focus: None,
            request: SummaryRequest {
                system: "s".repeat(100),
                user_text: "x".repeat(input_chars),
                max_tokens,
            },
            transcript: FileWritten {
                path: ".transcripts/t.jsonl".into(),
                status: crate::store::WriteStatus::Created,
                chars: 0,
                bytes: 0,
            },
            replaced: 3,
            tail: Vec::new(),
            size_before: input_chars,
            messages_before: 3,
            summary_cut_at: None,
            adjusted: Vec::new(),
        }
    }

    #[test]
    fn the_next_attempt_is_sized_from_the_servers_count_of_this_request() {
        // 3,609 chars counted as 2,337 tokens: about 1.54 chars a token, not 3.
        let mut p = pending(3_509, 512);
        let refusal = Refusal {
            prompt_tokens: Some(2_337),
            window_tokens: Some(2_048),
        };
        let clause = p.refit_after_refusal(refusal, None).unwrap();
        assert!(
            clause.contains("2,337 tokens > 2,048 for 3,609 chars (1.54 chars a token)"),
            "{clause}"
        );
        // Room: 2,048 - 64 overhead - 65 instructions - 512 reserve = 1,407 tokens, at
        // 1.54 chars a token and 85%: 1,841 chars.
        assert_eq!(p.input_chars(), 1_841);
        assert!(
            p.reason.contains("next attempt with 1,841 chars"),
            "{}",
            p.reason
        );
        // Refused again at the same ratio with the same numbers: it still shrinks.
        let again = p.input_chars();
        p.refit_after_refusal(refusal, None).unwrap();
        assert!(p.input_chars() <= again * 3 / 4);
    }

    #[test]
    fn without_numbers_it_halves_and_below_the_floor_it_stops() {
        let mut p = pending(2_000, 512);
        p.refit_after_refusal(Refusal::default(), None).unwrap();
        assert_eq!(p.input_chars(), 1_000);
        p.refit_after_refusal(Refusal::default(), Some(4_096))
            .unwrap();
        assert_eq!(p.input_chars(), 500);
        let err = p.refit_after_refusal(Refusal::default(), None).unwrap_err();
        assert_eq!(err.chars, 250);
        // A window too small for anything is below the floor at once, and a zero or
        // enormous count is no division by zero.
        let mut p = pending(10_000, 512);
        let tiny = Refusal {
            prompt_tokens: Some(u64::MAX),
            window_tokens: Some(100),
        };
        assert!(p.refit_after_refusal(tiny, None).is_err());
        let zero = Refusal {
            prompt_tokens: Some(0),
            window_tokens: Some(100),
        };
        assert!(p.refit_after_refusal(zero, None).is_ok());
    }

    #[test]
    fn the_tails_without_a_model_go_five_two_zero() {
        assert_eq!(next_no_model_tail(None), Some(5));
        assert_eq!(next_no_model_tail(Some(5)), Some(2));
        assert_eq!(next_no_model_tail(Some(2)), Some(0));
        assert_eq!(next_no_model_tail(Some(0)), None);
    }

    #[test]
    fn a_reduction_without_a_model_keeps_the_tail_and_names_the_transcript() {
        let history: Vec<Message> = (0..8)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect();
        let p = pending(500, 512);
        let cfg = PipelineConfig::default();
        let (out, report) = p.finish_without_summary(&history, 2, &cfg, "hello", "refused");
        assert_eq!(out.len(), 3);
        assert_eq!(out[1..], history[6..]);
        let first = out[0].joined_text();
        assert!(first.starts_with("[Compacted]"), "{first}");
        assert!(first.contains("Authoritative request:\nhello"), "{first}");
        assert!(first.contains(".transcripts/t.jsonl"), "{first}");
        assert!(
            report
                .reason
                .contains("reduced without a model, the 6 messages before the last 2"),
            "{}",
            report.reason
        );
        assert_eq!(report.messages_after, 3);
    }
}
