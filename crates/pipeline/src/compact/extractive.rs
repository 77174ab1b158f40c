//! A deterministic extractive summary: what the embedded scripted model (and `ctxlab replay`
//! without `--summary-text`) answers when no real model writes the summary. It reports facts
//! found in the history (the request, files named in tool inputs, commands run, the first
//! lines of the latest results) and never invents anything, so a demo's `[Compacted]`
//! message is honest.

use serde_json::Value;

use crate::compact::request::{authoritative_request, latest_request};
use crate::message::{Message, ResultContent, Role};
use crate::util::clip_chars as clip;

/// The summary stays within this many chars, like the lesson's `max_tokens` budget.
pub const EXTRACTIVE_SUMMARY_MAX_CHARS: usize = 2_000;
const RESULT_LINES: usize = 2;
const LAST_RESULTS: usize = 3;
const LINE_CHARS: usize = 160;

fn push_unique(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

/// Facts extracted from a history, in a fixed order, within the size limit.
pub fn extractive_summary(messages: &[Message]) -> String {
    let mut files_read = Vec::new();
    let mut files_changed = Vec::new();
    let mut commands = Vec::new();
    let mut compacted_before = false;
    for m in messages {
        if let Some(text) = m.text()
            && authoritative_request(text).is_some()
        {
            compacted_before = true;
        }
        for b in m.tool_uses() {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
            let input = b.get("input");
            let field = |k: &str| {
                input
                    .and_then(|i| i.get(k))
                    .and_then(Value::as_str)
                    .map(|s| clip(s, LINE_CHARS))
            };
            match name {
                "bash" => {
                    if let Some(c) = field("command") {
                        push_unique(&mut commands, c);
                    }
                }
                "write_file" | "edit_file" => {
                    if let Some(p) = field("path") {
                        push_unique(&mut files_changed, p);
                    }
                }
                _ => {
                    if let Some(p) = field("path").or_else(|| field("pattern")) {
                        push_unique(&mut files_read, p);
                    }
                }
            }
        }
    }
    let mut last_results: Vec<String> = Vec::new();
    for m in messages.iter().rev() {
        for b in m.tool_results().collect::<Vec<_>>().into_iter().rev() {
            if last_results.len() == LAST_RESULTS {
                break;
            }
            let text = ResultContent::of(b).to_text();
            let lines: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(RESULT_LINES)
                .map(|l| clip(l.trim(), LINE_CHARS))
                .collect();
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("?");
            last_results.push(format!("{id}: {}", lines.join(" | ")));
        }
    }
    last_results.reverse();

    let mut out = String::new();
    let request = latest_request(messages).unwrap_or_else(|| "(none found)".to_string());
    out.push_str(&format!("Goal: {}\n", clip(&request, 400)));
    if compacted_before {
        out.push_str("Earlier work was already compacted once.\n");
    }
    let list = |label: &str, items: &[String]| {
        if items.is_empty() {
            String::new()
        } else {
            format!("{label}: {}\n", items.join(", "))
        }
    };
    out.push_str(&list("Files read", &files_read));
    out.push_str(&list("Files changed", &files_changed));
    if !commands.is_empty() {
        let recent: Vec<String> = commands.iter().rev().take(8).rev().cloned().collect();
        out.push_str(&format!(
            "Commands run ({}): {}\n",
            commands.len(),
            recent.join("; ")
        ));
    }
    if !last_results.is_empty() {
        out.push_str("Latest results:\n");
        for r in &last_results {
            out.push_str(&format!("- {r}\n"));
        }
    }
    let assistant_turns = messages
        .iter()
        .filter(|m| m.role_kind() == Role::Assistant)
        .count();
    out.push_str(&format!(
        "History: {} messages, {} assistant turns.",
        messages.len(),
        assistant_turns
    ));
    clip(&out, EXTRACTIVE_SUMMARY_MAX_CHARS)
}

/// The summary of a summarizer request's input: the JSON of a history, whole or cut at
/// either end or in the middle, after an instruction or a note (every strategy words its
/// request its own way). Every complete message in the text is used.
pub fn extractive_summary_from_request(text: &str) -> String {
    extractive_summary(&messages_in_text(text))
}

/// Every complete message object found in a text, in order: each place `{"role": ` starts
/// a JSON value that parses as a message. Inside a JSON string the quotes are escaped, so
/// only real message starts match.
pub fn messages_in_text(text: &str) -> Vec<Message> {
    const START: &str = "{\"role\": ";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(START) {
        rest = &rest[at..];
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let used = stream.byte_offset();
                if let Ok(m) = Message::from_value(v) {
                    out.push(m);
                }
                rest = &rest[used..];
            }
            _ => rest = &rest[START.len()..],
        }
    }
    out
}

/// The complete messages at the start of a (possibly truncated) JSON array of messages.
pub fn messages_in_prefix(text: &str) -> Vec<Message> {
    let mut out = Vec::new();
    let Some(mut rest) = text.trim_start().strip_prefix('[') else {
        return out;
    };
    loop {
        rest = rest.trim_start_matches([' ', ',', '\n']);
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let used = stream.byte_offset();
                if let Ok(m) = Message::from_value(v) {
                    out.push(m);
                }
                rest = &rest[used..];
            }
            _ => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ascii_json_history, block};
    use serde_json::json;

    fn session() -> Vec<Message> {
        vec![
            Message::user_text("Fix the parser bug"),
            Message::assistant_blocks(vec![
                block::tool_use("t1", "read_file", json!({"path": "src/parser.rs"})),
                block::tool_use("t2", "bash", json!({"command": "cargo test"})),
            ]),
            Message::user_blocks(vec![
                block::tool_result("t1", "fn parse() {}\n// end"),
                block::tool_result("t2", "\ntest parser ... FAILED\nmore"),
            ]),
            Message::assistant_blocks(vec![block::tool_use(
                "t3",
                "edit_file",
                json!({"path": "src/parser.rs", "old": "a", "new": "b"}),
            )]),
            Message::user_blocks(vec![block::tool_result("t3", "Edited src/parser.rs")]),
        ]
    }

    #[test]
    fn names_the_request_files_commands_and_latest_results() {
        let s = extractive_summary(&session());
        assert!(s.starts_with("Goal: Fix the parser bug\n"), "{s}");
        assert!(s.contains("Files read: src/parser.rs\n"), "{s}");
        assert!(s.contains("Files changed: src/parser.rs\n"), "{s}");
        assert!(s.contains("Commands run (1): cargo test\n"), "{s}");
        assert!(s.contains("- t2: test parser ... FAILED | more\n"), "{s}");
        assert!(s.contains("- t3: Edited src/parser.rs\n"), "{s}");
        assert!(s.chars().count() <= EXTRACTIVE_SUMMARY_MAX_CHARS);
    }

    #[test]
    fn a_cut_request_still_yields_the_complete_messages() {
        let json = ascii_json_history(&session());
        let cut: String = json.chars().take(json.chars().count() - 30).collect();
        assert_eq!(messages_in_prefix(&cut).len(), 4);
        assert_eq!(messages_in_prefix(&json).len(), 5);
        assert!(extractive_summary_from_request(&cut).contains("Goal: Fix the parser bug"));
        assert!(messages_in_prefix("not json").is_empty());
    }

    #[test]
    fn messages_are_found_after_an_instruction_and_around_a_cut_middle() {
        let json = ascii_json_history(&session());
        // s06: an instruction, then the end of the JSON (the first message cut away).
        let tail = &json[40..];
        assert_eq!(
            messages_in_text(&format!("Summarize this.\n\n{tail}")).len(),
            4
        );
        // s08-latest: head, a note, tail; the cut message on each side is skipped.
        let (head, end) = (&json[..json.len() / 2], &json[json.len() / 2 + 10..]);
        let found = messages_in_text(&format!("{head}\n...[middle omitted]...\n{end}"));
        assert!(found.len() >= 2 && found.len() < 5, "{}", found.len());
        assert_eq!(messages_in_text(&json).len(), 5);
        assert!(messages_in_text("no messages {\"role\": oops").is_empty());
    }
}
