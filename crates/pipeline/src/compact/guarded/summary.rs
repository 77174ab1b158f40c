//! guarded's summarizing stages. Both write the whole history to a transcript first and
//! name it in the summary message, and both give the summarizer the *recent* past: the
//! newest messages whole, as many as fit in `summary_input_chars`, with a note that older
//! ones are on disk (the lesson keeps the oldest 80,000 chars and loses the latest state).
//!
//! Both keep results the model has not seen, with the tool_use they answer, after the
//! summary rather than summarizing them away (reactive's last resort excepted).
//! reactive_compact runs only when something other than an earlier summary precedes its
//! tail; each further overflow halves the tail (5, 2, 0, the last summarizing everything),
//! and when the error names the window, the summary input is sized to fit in it.

use super::pair_safe_bounds;
use crate::compact::config::PipelineConfig;
use crate::compact::report::{CompactTrigger, Stage};
use crate::compact::request::authoritative_request;
use crate::compact::results::first_unseen;
use crate::compact::s08::compact_reason;
use crate::compact::summarize::{
    PendingCompaction, SUMMARY_SYSTEM, Summarizing, SummaryRequest, focus_sentence, transcript_text,
};
use crate::compact::unit::SizeUnit;
use crate::compact::window::ContextWindow;
use crate::message::{Message, ascii_json_message};
use crate::store::{Store, StoreError};

/// The summarizer input: the newest messages whole (ASCII JSON), oldest dropped first, in
/// at most `limit` chars. A newest message that alone is too long keeps its end.
pub fn recent_past_input(history: &[Message], limit: usize) -> String {
    let parts: Vec<String> = history.iter().map(ascii_json_message).collect();
    let array_len = |items: &[String]| -> usize {
        2 + items.iter().map(String::len).sum::<usize>() + 2 * items.len().saturating_sub(1)
    };
    if array_len(&parts) <= limit {
        return format!("[{}]", parts.join(", "));
    }
    let note = |dropped: usize| {
        format!("[{dropped} older messages left out here; the transcript on disk holds them]\n")
    };
    for keep in (1..parts.len()).rev() {
        let kept = &parts[parts.len() - keep..];
        let text_len = note(parts.len() - keep).len() + array_len(kept);
        if text_len <= limit {
            return format!("{}[{}]", note(parts.len() - keep), kept.join(", "));
        }
    }
    // Not even the newest message fits: keep as much of its end as the limit allows.
    let lead = note(parts.len().saturating_sub(1));
    let newest = parts.last().map(String::as_str).unwrap_or("");
    let room = limit.saturating_sub(lead.len());
    // ASCII JSON is ASCII, so a byte cut is a char cut.
    format!("{lead}{}", &newest[newest.len().saturating_sub(room)..])
}

/// Whether summarizing `part` can shrink anything: it holds a message that is not itself a
/// summary. A lone earlier summary summarized again only grows a summary of a summary.
fn worth_summarizing(part: &[Message]) -> bool {
    part.iter()
        .any(|m| m.text().and_then(authoritative_request).is_none())
}

/// Where the tail of unseen results starts: the assistant message whose tool calls they
/// answer. `len` when the model has seen everything.
fn unseen_tail_start(messages: &[Message]) -> usize {
    let from = first_unseen(messages);
    let unseen_results = messages[from..].iter().any(Message::is_tool_result_message);
    if from > 0 && unseen_results {
        pair_safe_bounds(messages, 0, from - 1).1
    } else {
        messages.len()
    }
}

fn request(
    history: &[Message],
    cfg: &PipelineConfig,
    focus: Option<&str>,
    input_chars: usize,
) -> SummaryRequest {
    SummaryRequest {
        system: format!("{SUMMARY_SYSTEM}{}", focus_sentence(focus)),
        user_text: recent_past_input(history, input_chars),
        max_tokens: cfg.summary_max_tokens,
    }
}

/// Step 1 of compact_history; None when nothing but an earlier summary precedes the unseen
/// results.
pub fn begin_compact_history(
    messages: &[Message],
    store: &Store,
    cfg: &PipelineConfig,
    focus: Option<&str>,
    trigger: CompactTrigger,
    now_secs: u64,
) -> Result<Option<PendingCompaction>, StoreError> {
    let tail_start = unseen_tail_start(messages);
    if !worth_summarizing(&messages[..tail_start]) {
        return Ok(None);
    }
    let transcript = store.write_transcript(now_secs, &transcript_text(messages))?;
    let size_before = SizeUnit::Chars.measure(messages);
    let mut reason = compact_reason(&trigger, focus, size_before, cfg.context_limit);
    let kept = messages.len() - tail_start;
    if kept > 0 {
        reason.push_str(&format!(
            "; the last {kept} messages hold unseen results and stay"
        ));
    }
    let what = Summarizing {
        stage: Stage::CompactHistory,
        shape: super::SUMMARY_SHAPE,
        unit: SizeUnit::Chars,
        trigger,
        focus,
    };
    let request = request(&messages[..tail_start], cfg, focus, cfg.summary_input_chars);
    Ok(Some(PendingCompaction::new(
        what, messages, tail_start, request, transcript, reason,
    )))
}

/// The tails reactive tries, one per overflow: `reactive_keep_tail`, then halved, and a
/// tail of 2 or fewer drops to 0 (5, 2, 0 by default).
pub fn reactive_tails(keep: usize) -> Vec<usize> {
    let mut out = vec![keep];
    let mut t = keep;
    while t > 0 {
        t = if t > 2 { t / 2 } else { 0 };
        out.push(t);
    }
    out
}

/// Step 1 of reactive_compact for the `attempt`-th overflow in a row; None when no tail
/// is left that something other than an earlier summary precedes (the error then goes to
/// the user).
pub fn begin_reactive(
    messages: &[Message],
    store: &Store,
    cfg: &PipelineConfig,
    now_secs: u64,
    attempt: usize,
    window: Option<ContextWindow>,
) -> Result<Option<PendingCompaction>, StoreError> {
    let len = messages.len();
    let unseen = unseen_tail_start(messages);
    let found = reactive_tails(cfg.reactive_keep_tail)
        .into_iter()
        .skip(attempt)
        .map(|keep| {
            // A tail keeps at least the unseen results (and the call they answer); only
            // the last resort, a tail of 0, summarizes them too.
            let cut = pair_safe_bounds(messages, 0, len.saturating_sub(keep)).1;
            let tail_start = if keep == 0 { len } else { cut.min(unseen) };
            (keep, tail_start)
        })
        .find(|&(_, tail_start)| worth_summarizing(&messages[..tail_start]));
    let Some((keep, tail_start)) = found else {
        return Ok(None);
    };
    let transcript = store.write_transcript(now_secs, &transcript_text(messages))?;
    let mut input_chars = cfg.summary_input_chars;
    if let Some(w) = window {
        input_chars = input_chars.min(w.input_chars(SUMMARY_SYSTEM.len(), cfg.summary_max_tokens));
    }
    let mut reason = format!(
        "the API said the prompt is too long; {tail_start} messages to summarize, tail {keep} keeps {}",
        len - tail_start
    );
    if input_chars < cfg.summary_input_chars {
        reason.push_str(&format!(
            "; summary input sized to the window: {input_chars} chars"
        ));
    }
    let what = Summarizing {
        stage: Stage::ReactiveCompact,
        shape: super::SUMMARY_SHAPE,
        unit: SizeUnit::Chars,
        trigger: CompactTrigger::PromptTooLong,
        focus: None,
    };
    let request = request(&messages[..tail_start], cfg, None, input_chars);
    Ok(Some(PendingCompaction::new(
        what, messages, tail_start, request, transcript, reason,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ascii_json_history, block};
    use serde_json::json;

    fn texts(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| Message::user_text(format!("message {i}")))
            .collect()
    }

    #[test]
    fn the_summary_input_keeps_the_newest_messages_whole() {
        let h = texts(10);
        let whole = ascii_json_history(&h);
        assert_eq!(recent_past_input(&h, whole.len()), whole);
        let cut = recent_past_input(&h, 200);
        assert!(cut.len() <= 200, "{}", cut.len());
        assert!(cut.ends_with("\"message 9\"}]"), "{cut}");
        let dropped: usize = cut[1..].split(' ').next().unwrap().parse().unwrap();
        let kept = ascii_json_history(&h[dropped..]);
        assert!(cut.ends_with(&kept), "{cut}");
        // One message longer than the limit: its end.
        let big = vec![Message::user_text("x".repeat(500) + "END")];
        let cut = recent_past_input(&big, 150);
        assert!(cut.len() <= 150 && cut.ends_with("END\"}"), "{cut}");
    }

    #[test]
    fn tails_halve_down_to_zero() {
        assert_eq!(reactive_tails(5), vec![5, 2, 0]);
        assert_eq!(reactive_tails(10), vec![10, 5, 2, 0]);
        assert_eq!(reactive_tails(0), vec![0]);
    }

    #[test]
    fn reactive_never_runs_with_nothing_before_its_tail_and_shrinks_on_retries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig::default();
        // 4 messages: a tail of 5 has nothing before it, so the first try keeps 2.
        let h = texts(4);
        let p = begin_reactive(&h, &store, &cfg, 1, 0, None)
            .unwrap()
            .unwrap();
        assert_eq!((p.replaced(), p.tail.len()), (2, 2));
        let p = begin_reactive(&h, &store, &cfg, 1, 2, None)
            .unwrap()
            .unwrap();
        assert_eq!((p.replaced(), p.tail.len()), (4, 0));
        assert!(
            begin_reactive(&h, &store, &cfg, 1, 3, None)
                .unwrap()
                .is_none()
        );
        assert!(
            begin_reactive(&[], &store, &cfg, 1, 0, None)
                .unwrap()
                .is_none()
        );
        // The window sizes the input.
        let p = begin_reactive(
            &texts(400),
            &store,
            &cfg,
            1,
            0,
            Some(ContextWindow::Chars(2_000)),
        )
        .unwrap()
        .unwrap();
        assert!(p.request().user_text.len() <= 2_000 - SUMMARY_SYSTEM.len());
    }

    #[test]
    fn compact_history_keeps_unseen_results_and_names_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig::default();
        let mut h = texts(3);
        h.push(Message::assistant_blocks(vec![block::tool_use(
            "t",
            "bash",
            json!({}),
        )]));
        h.push(Message::user_blocks(vec![block::tool_result("t", "fresh")]));
        let p = begin_compact_history(&h, &store, &cfg, None, CompactTrigger::OverLimit, 5)
            .unwrap()
            .unwrap();
        let (after, report) = p.finish(&["facts"], "the request");
        assert_eq!(after.len(), 3);
        assert_eq!(&after[1..], &h[3..]);
        assert!(
            after[0]
                .text()
                .unwrap()
                .starts_with("[Compacted]\n\nAuthoritative request:\nthe request\n")
        );
        assert!(
            after[0]
                .text()
                .unwrap()
                .ends_with("\"facts\"\n\nFull transcript: .transcripts/transcript_5.jsonl")
        );
        assert!(
            report
                .reason
                .ends_with("the last 2 messages hold unseen results and stay")
        );
        // Everything seen: the whole history is summarized.
        let seen = texts(3);
        let p = begin_compact_history(&seen, &store, &cfg, None, CompactTrigger::Requested, 5)
            .unwrap()
            .unwrap();
        assert_eq!(p.finish(&["f"], "r").0.len(), 1);
        // Only unseen results, or an earlier summary and unseen results: nothing to do.
        assert!(
            begin_compact_history(&h[3..], &store, &cfg, None, CompactTrigger::OverLimit, 5)
                .unwrap()
                .is_none()
        );
        let mut again = after.clone();
        assert!(
            begin_compact_history(&again, &store, &cfg, None, CompactTrigger::OverLimit, 5)
                .unwrap()
                .is_none()
        );
        // Reactive skips the tail that only a summary precedes and summarizes it all.
        let p = begin_reactive(&again, &store, &cfg, 5, 0, None)
            .unwrap()
            .unwrap();
        assert_eq!((p.replaced(), p.tail.len()), (3, 0));
        // A lone summary cannot shrink by being summarized again: the error goes to the user.
        again.truncate(1);
        assert!(
            begin_reactive(&again, &store, &cfg, 5, 0, None)
                .unwrap()
                .is_none()
        );
    }
}
