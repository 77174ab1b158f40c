//! A history written as the lesson's JSON: transcript lines and summarizer inputs in the
//! ASCII form (s08, s06, guarded) and with non-ASCII kept (s08-latest), and the s08-latest
//! size unit built from each message's cached length. Only writes; never parses.

use super::Message;
use crate::pyrepr::{
    ascii_json_map, ascii_json_maps_prefix, unicode_json_map, unicode_json_maps,
    write_ascii_json_map,
};

/// The size of a history in the s08-latest unit: the length of
/// `json.dumps(messages, ensure_ascii=False)`, from each message's cached length.
pub fn json_size(messages: &[Message]) -> usize {
    let items: usize = messages.iter().map(Message::json_size).sum();
    2 + items + 2 * messages.len().saturating_sub(1)
}

/// Unicode JSON of one message: an s08-latest transcript line without its newline.
pub fn unicode_json_message(m: &Message) -> String {
    unicode_json_map(&m.raw)
}

/// Unicode JSON of a whole history as one array: the s08-latest summarizer input.
pub fn unicode_json_history(messages: &[Message]) -> String {
    unicode_json_maps(messages.iter().map(|m| &*m.raw))
}

/// ASCII JSON of one message: a transcript line without its newline.
pub fn ascii_json_message(m: &Message) -> String {
    ascii_json_map(&m.raw)
}

/// `ascii_json_message` appended to `out`.
pub fn write_ascii_json_message(m: &Message, out: &mut String) {
    write_ascii_json_map(&m.raw, out);
}

/// ASCII JSON of a whole history as one array: the summarizer's input before the cut.
pub fn ascii_json_history(messages: &[Message]) -> String {
    ascii_json_history_prefix(messages, usize::MAX)
}

/// The first `max_chars` chars of `ascii_json_history`, without writing the rest.
pub fn ascii_json_history_prefix(messages: &[Message], max_chars: usize) -> String {
    ascii_json_maps_prefix(messages.iter().map(|m| &*m.raw), max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn json_size_is_the_length_of_the_unicode_json_and_follows_edits() {
        let mut h = vec![
            Message::user_text("héllo \"解\""),
            Message::user_blocks(vec![block::tool_result("a", "😀x")]),
        ];
        assert_eq!(json_size(&h), unicode_json_history(&h).chars().count());
        assert_eq!(json_size(&[]), 2);
        h[1].blocks_mut().unwrap()[0]["content"] = json!("y");
        assert_eq!(json_size(&h), unicode_json_history(&h).chars().count());
    }

    #[test]
    fn history_prefix_is_a_cut_of_the_whole() {
        let h = vec![
            Message::user_text("héllo \"x\""),
            Message::user_text("second"),
        ];
        let whole = ascii_json_history(&h);
        assert!(whole.is_ascii());
        for cut in [0, 1, 5, 20, whole.len() - 1, whole.len(), whole.len() + 10] {
            let want = &whole[..cut.min(whole.len())];
            assert_eq!(ascii_json_history_prefix(&h, cut), want, "cut {cut}");
        }
        assert_eq!(ascii_json_history(&[]), "[]");
    }
}
