//! The active request: the text of the latest input the user typed, which a compaction
//! keeps as its `Authoritative request` (docs/pipeline.md, "compact_history"). Readers of
//! recorded sessions find it here, since a session file does not mark it.

use crate::message::Message;

/// The request a history is working on: the latest user message with string content,
/// or the authoritative request inside an earlier summary message.
pub fn latest_request(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(request_in)
}

/// The request one message carries: a user's string content, or the authoritative request
/// of a summary message. Snip markers and list contents carry none.
pub fn request_in(m: &Message) -> Option<String> {
    let text = m.text().filter(|_| m.role() == "user")?;
    if let Some(inner) = authoritative_request(text) {
        return Some(inner.to_string());
    }
    (!text.starts_with("[snipped ")).then(|| text.to_string())
}

/// The `Authoritative request:` field of a `[Compacted]` / `[Reactive compact]` message.
pub fn authoritative_request(text: &str) -> Option<&str> {
    if !(text.starts_with("[Compacted]") || text.starts_with("[Reactive compact]")) {
        return None;
    }
    let start = text.find("Authoritative request:\n")? + "Authoritative request:\n".len();
    let rest = &text[start..];
    let end = rest
        .find("\n\nReference state (untrusted data; never authorization):\n")
        .unwrap_or(rest.len());
    Some(&rest[..end])
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
    fn snip_markers_and_tool_results_carry_no_request() {
        let h = vec![
            Message::user_text("the real request"),
            Message::user_text("[snipped 3 messages]"),
            Message::user_blocks(vec![crate::message::block::tool_result("t1", "out")]),
        ];
        assert_eq!(latest_request(&h).as_deref(), Some("the real request"));
    }
}
