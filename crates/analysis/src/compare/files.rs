//! The texts the reachability accounting compares: the texts of a message (its string
//! content, each text block, each tool result's content as the pipeline reads it), the
//! texts a stored file holds (a transcript's or the archive's messages, a saved result's
//! whole text), and the store paths a text names.
//!
//! Pure functions over text; reading files is the accountant's job.

use std::borrow::Cow;

use serde_json::Value;

use crate::message::{BlockKind, Content, Message, ResultContent};
use crate::store::{TOOL_RESULTS_DIR, TRANSCRIPTS_DIR};

/// One text of a message: where it sits and, for a tool result, the id it answers.
#[derive(Debug)]
pub(crate) struct Text<'a> {
    pub text: Cow<'a, str>,
    /// The block index, None for string content.
    pub block: Option<usize>,
    /// Whether it is a tool result's content.
    pub result: bool,
    pub tool_use_id: Option<&'a str>,
}

/// The texts of a message, in order: string content, text blocks and tool results (a
/// list content as the `str()` the pipeline persists). Tool calls, images and unknown
/// blocks carry no text of their own here.
pub(crate) fn message_texts(m: &Message) -> Vec<Text<'_>> {
    match m.content() {
        Content::Text(s) => vec![Text {
            text: Cow::Borrowed(s),
            block: None,
            result: false,
            tool_use_id: None,
        }],
        Content::Blocks(blocks) => blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let text = match BlockKind::of(b) {
                    BlockKind::ToolResult => match ResultContent::of(b) {
                        ResultContent::Text(s) => Cow::Borrowed(s),
                        other => Cow::Owned(other.to_text()),
                    },
                    BlockKind::Text => Cow::Borrowed(b.get("text").and_then(Value::as_str)?),
                    _ => return None,
                };
                let result = BlockKind::of(b) == BlockKind::ToolResult;
                let tool_use_id = result
                    .then(|| b.get("tool_use_id").and_then(Value::as_str))
                    .flatten();
                Some(Text {
                    text,
                    block: Some(i),
                    result,
                    tool_use_id,
                })
            })
            .collect(),
    }
}

/// The texts a stored file holds. A `.jsonl` file is read line by line as messages (a
/// transcript line is a message, an archive line `{"index": I, "message": {...}}`); a line
/// that is neither is skipped. Any other file is one text, whole.
pub(crate) fn file_texts(path: &str, text: &str, mut each: impl FnMut(&str)) {
    if !path.ends_with(".jsonl") {
        each(text);
        return;
    }
    for line in text.lines() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if value.get("role").is_none()
            && let Some(inner) = value.get_mut("message").map(Value::take)
        {
            value = inner;
        }
        if let Ok(m) = Message::from_value(value) {
            for t in message_texts(&m) {
                each(&t.text);
            }
        }
    }
}

/// The store paths a text names (`.task_outputs/tool-results/...`, `.transcripts/...`), as
/// written: a path runs over letters, digits, `.`, `_`, `-` and `/`, and loses a trailing
/// `.` (the end of a sentence).
pub(crate) fn named_paths(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for dir in [TOOL_RESULTS_DIR, TRANSCRIPTS_DIR] {
        let mut from = 0;
        while let Some(at) = text[from..].find(dir) {
            let start = from + at;
            let tail = &text[start..];
            let len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
                .unwrap_or(tail.len());
            let path = tail[..len].trim_end_matches('.');
            if path.len() > dir.len() + 1 {
                out.push(path);
            }
            from = start + len.max(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn paths_are_found_in_every_marker_shape() {
        let text = "<persisted-output>\nFull output: .task_outputs/tool-results/t1.txt\nPreview:\n\
                    [3 messages (4-6) archived in .transcripts/archive.jsonl] and \
                    [Earlier result of bash {\"c\": 1} saved at .task_outputs/tool-results/t-2.txt; read it again if needed] \
                    Transcript: .transcripts/transcript_17.jsonl.";
        assert_eq!(
            named_paths(text),
            vec![
                ".task_outputs/tool-results/t1.txt",
                ".task_outputs/tool-results/t-2.txt",
                ".transcripts/archive.jsonl",
                ".transcripts/transcript_17.jsonl",
            ]
        );
        assert!(named_paths("ls .transcripts/ and nothing else").is_empty());
    }

    #[test]
    fn a_message_gives_its_texts_and_result_ids() {
        let m = Message::user_blocks(vec![
            block::text("note"),
            block::tool_result("a", "out"),
            json!({"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": "x"}]}),
            json!({"type": "image"}),
        ]);
        let texts = message_texts(&m);
        assert_eq!(texts.len(), 3);
        assert_eq!(
            (texts[1].text.as_ref(), texts[1].tool_use_id),
            ("out", Some("a"))
        );
        assert_eq!(texts[2].text, "[{'type': 'text', 'text': 'x'}]");
        assert_eq!(texts[0].tool_use_id, None);
    }

    #[test]
    fn archive_lines_and_transcript_lines_are_both_messages() {
        let file = "{\"index\": 4, \"message\": {\"role\": \"user\", \"content\": \"kept\"}}\n\
                    {\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"said\"}]}\nnot json\n";
        let mut seen = Vec::new();
        file_texts(".transcripts/archive.jsonl", file, |t| {
            seen.push(t.to_string())
        });
        assert_eq!(seen, vec!["kept", "said"]);
        let mut whole = Vec::new();
        file_texts(".task_outputs/tool-results/a.txt", "a\nb", |t| {
            whole.push(t.to_string())
        });
        assert_eq!(whole, vec!["a\nb"]);
    }
}
