//! s06's `auto_compact`: the transcript first (`transcript_<secs>.jsonl`, ASCII JSON lines),
//! then one summary request with no system prompt whose user message is the lesson's
//! instruction, an optional focus sentence, and the *last* `summary_input_chars` chars of
//! the history's JSON. The history becomes `[Conversation compressed. Transcript: {path}]`
//! and the summary as the model wrote it.

use super::SUMMARY_PROMPT;
use crate::compact::config::PipelineConfig;
use crate::compact::report::{CompactTrigger, Stage, limit_reason};
use crate::compact::summarize::{
    PendingCompaction, Summarizing, SummaryRequest, focus_sentence, transcript_text,
};
use crate::compact::unit::SizeUnit;
use crate::message::{Message, ascii_json_history};
use crate::store::{Store, StoreError};

/// The summarizer's user message: instruction, focus, and the end of the history's JSON.
pub fn summary_user_text(history: &[Message], cfg: &PipelineConfig, focus: Option<&str>) -> String {
    let json = ascii_json_history(history);
    // ASCII JSON is ASCII, so a byte cut is a char cut.
    let tail = &json[json.len().saturating_sub(cfg.summary_input_chars)..];
    format!("{SUMMARY_PROMPT}{}\n\n{tail}", focus_sentence(focus))
}

/// Step 1 of auto_compact (also what the compact tool and `/compact` run under s06).
pub fn begin_auto_compact(
    messages: &[Message],
    store: &Store,
    cfg: &PipelineConfig,
    focus: Option<&str>,
    trigger: CompactTrigger,
    now_secs: u64,
) -> Result<PendingCompaction, StoreError> {
    let transcript = store.write_transcript(now_secs, &transcript_text(messages))?;
    let size_before = SizeUnit::Tokens.measure(messages);
    let reason = match (&trigger, focus) {
        (CompactTrigger::OverLimit, _) => {
            format!("{} tokens", limit_reason(size_before, cfg.context_limit))
        }
        (_, Some(focus)) => format!("requested, focus: {focus}"),
        (_, None) => "requested".to_string(),
    };
    let what = Summarizing {
        stage: Stage::AutoCompact,
        shape: super::SUMMARY_SHAPE,
        unit: SizeUnit::Tokens,
        trigger,
        focus,
    };
    let request = SummaryRequest {
        system: String::new(),
        user_text: summary_user_text(messages, cfg, focus),
        max_tokens: cfg.summary_max_tokens,
    };
    Ok(PendingCompaction::new(
        what,
        messages,
        messages.len(),
        request,
        transcript,
        reason,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_the_end_of_the_json_and_the_focus_comes_first() {
        let cfg = PipelineConfig {
            summary_input_chars: 10,
            ..PipelineConfig::default()
        };
        let h = vec![Message::user_text("abcdefghijklmnop")];
        let text = summary_user_text(&h, &cfg, Some("the parser"));
        assert_eq!(
            text,
            format!(
                "{SUMMARY_PROMPT} Pay special attention to preserving details about: the parser.\n\njklmnop\"}}]"
            )
        );
    }

    #[test]
    fn the_summary_stands_as_written_and_an_empty_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let h = vec![Message::user_text("go")];
        let cfg = PipelineConfig::default();
        let p = begin_auto_compact(&h, &store, &cfg, None, CompactTrigger::OverLimit, 7).unwrap();
        assert!(p.request().system.is_empty());
        let (after, report) = p.finish(&["  kept as is \n", "second"], "ignored");
        assert_eq!(
            after[0].text(),
            Some(
                "[Conversation compressed. Transcript: .transcripts/transcript_7.jsonl]\n\n  kept as is \n"
            )
        );
        assert_eq!(report.stage, Stage::AutoCompact);
        let p = begin_auto_compact(&h, &store, &cfg, None, CompactTrigger::Requested, 7).unwrap();
        let (after, _) = p.finish::<&str>(&[], "ignored");
        assert!(
            after[0]
                .text()
                .unwrap()
                .ends_with("\n\nNo summary generated.")
        );
        assert!(after[0].text().unwrap().contains("transcript_7-2.jsonl"));
    }
}
