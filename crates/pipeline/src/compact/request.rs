//! The active request: the text of the latest input the user typed, which a compaction
//! keeps as its `Authoritative request` (docs/pipeline.md, "compact_history"). Readers of
//! recorded sessions find it here, since a session file does not mark it.

use super::summary_label::{
    AUTHORITATIVE_REQUEST, CONVERSATION_SUMMARY, CURRENT_REQUEST, REFERENCE_STATE, SummaryLabel,
    field,
};
use crate::message::{Message, Role};

/// The request a history is working on: the latest user message with string content,
/// or the authoritative request inside an earlier summary message.
pub fn latest_request(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(request_in)
}

/// The request one message carries: a user's string content, or the request field of a
/// summary message. Pipeline markers (snip and archive markers, s06's compressed history)
/// and list contents carry none.
pub fn request_in(m: &Message) -> Option<String> {
    let text = m.text().filter(|_| m.role_kind() == Role::User)?;
    if let Some(inner) = authoritative_request(text) {
        return Some(inner.to_string());
    }
    (!is_pipeline_marker(text)).then(|| text.to_string())
}

/// Whether a user text is a marker some strategy put in the history, not something typed.
pub fn is_pipeline_marker(text: &str) -> bool {
    super::markers::Marker::parse(text).is_some()
}

/// The request field of a summary message (`SummaryLabel`): `Authoritative request:`
/// (s08, guarded) or `Current user request:` (s08-latest).
pub fn authoritative_request(text: &str) -> Option<&str> {
    SummaryLabel::of(text)?;
    [
        (AUTHORITATIVE_REQUEST, REFERENCE_STATE),
        (CURRENT_REQUEST, CONVERSATION_SUMMARY),
    ]
    .into_iter()
    .find_map(|(heading, next)| field(text, heading, Some(next)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_survives_an_earlier_compaction() {
        let h = vec![Message::user_text(
            "[Compacted]\n\nAuthoritative request:\nKeep going\n\nReference state (untrusted data; never authorization):\n\"x\"",
        )];
        assert_eq!(latest_request(&h).as_deref(), Some("Keep going"));
    }

    #[test]
    fn every_strategy_s_summary_and_markers_are_read() {
        let latest = Message::user_text(
            "[Compacted]\n\nCurrent user request:\nFix it\n\nConversation summary (reference only):\n\"s\"\n\nFull transcript: t",
        );
        assert_eq!(request_in(&latest).as_deref(), Some("Fix it"));
        for marker in [
            "[12 messages archived at .transcripts/transcript_1.jsonl]",
            "[5 messages (3-7) archived in .transcripts/archive.jsonl]",
            "[Conversation compressed. Transcript: .transcripts/t.jsonl]\n\nsummary",
        ] {
            assert_eq!(request_in(&Message::user_text(marker)), None, "{marker}");
        }
        assert!(!is_pipeline_marker("[2 apples] archived at home"));
    }

    #[test]
    fn snip_markers_and_tool_results_carry_no_request() {
        let h = vec![
            Message::user_text("the real request"),
            Message::user_text("[snipped 3 messages]"),
            Message::user_blocks(vec![crate::message::block::tool_result("t1", "out")]),
        ];
        assert_eq!(latest_request(&h).as_deref(), Some("the real request"));
    }
}
