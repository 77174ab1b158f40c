//! What the saving stages need to know about tool results (s08-latest's micro and fit,
//! guarded's micro): which results the model has already seen, which tool call each one
//! answers, and whether a result's text is already a pointer to a saved copy that can be
//! reused instead of saving it again.
//!
//! Reads messages and asks the store whether a file exists; never changes either.

use std::collections::HashMap;

use serde_json::Value;

use crate::message::{Message, Role, block_tool_id};
use crate::store::Store;

/// The index of the first message the model has not seen: the one after the last
/// assistant message (0 when there is none). Tool results from here on are unseen.
pub fn first_unseen(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| m.role_kind() == Role::Assistant)
        .map_or(0, |i| i + 1)
}

/// The tool call a result answers: its name and input, found by id.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    pub name: &'a str,
    pub input: &'a Value,
}

/// Every `tool_use` of a history by id (a later one wins, as a dict built in order would).
pub fn tool_calls(messages: &[Message]) -> HashMap<&str, ToolCall<'_>> {
    let mut out = HashMap::new();
    for m in messages {
        for b in m.tool_uses() {
            if let Some(id) = block_tool_id(b) {
                let name = b.get("name").and_then(Value::as_str).unwrap_or("unknown");
                let input = b.get("input").unwrap_or(&Value::Null);
                out.insert(id, ToolCall { name, input });
            }
        }
    }
    out
}

/// The `tool_use_id` of a result block.
pub fn result_id(block: &Value) -> Option<&str> {
    block.get("tool_use_id").and_then(Value::as_str)
}

/// s08-latest's micro placeholder.
pub const SAVED_AT_PREFIX: &str = "[Earlier tool result saved at ";
/// guarded's micro placeholder starts and ends so.
pub const GUARDED_PREFIX: &str = "[Earlier result of ";
pub const GUARDED_SUFFIX: &str = "; read it again if needed]";

/// The path a result's text points at when it is a marker or placeholder of a saved copy:
/// a `<persisted-output>` marker, s08-latest's `[Earlier tool result saved at ...]` or
/// guarded's `[Earlier result of ... saved at ...; read it again if needed]`.
pub fn pointed_path(text: &str) -> Option<&str> {
    if let Some(rest) = text.strip_prefix(SAVED_AT_PREFIX) {
        return rest.strip_suffix(']');
    }
    if text.starts_with(GUARDED_PREFIX) {
        let body = text.strip_suffix(GUARDED_SUFFIX)?;
        return body
            .rfind(" saved at ")
            .map(|i| &body[i + " saved at ".len()..]);
    }
    super::markers::persisted_path(text)
}

/// The saved copy a result's text points at, when that copy exists in the results folder:
/// the saving stages reuse it rather than save the pointer itself.
pub fn saved_copy(store: &Store, text: &str) -> Option<String> {
    pointed_path(text).and_then(|p| store.saved_tool_result(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn unseen_results_follow_the_last_assistant_message() {
        let h = vec![
            Message::user_text("go"),
            Message::assistant_blocks(vec![block::tool_use("a", "bash", json!({}))]),
            Message::user_blocks(vec![block::tool_result("a", "x")]),
        ];
        assert_eq!(first_unseen(&h), 2);
        assert_eq!(first_unseen(&h[..1]), 0);
        let calls = tool_calls(&h);
        assert_eq!(calls["a"].name, "bash");
    }

    #[test]
    fn every_pointer_shape_names_its_path() {
        let p = ".task_outputs/tool-results/t1.txt";
        assert_eq!(
            pointed_path(&format!(
                "<persisted-output>\nFull output: {p}\nPreview:\nabc\n</persisted-output>"
            )),
            Some(p)
        );
        assert_eq!(
            pointed_path(&format!("[Earlier tool result saved at {p}]")),
            Some(p)
        );
        assert_eq!(
            pointed_path(&format!(
                "[Earlier result of bash {{\"command\": \"x saved at y\"}} saved at {p}; read it again if needed]"
            )),
            Some(p)
        );
        assert_eq!(pointed_path("plain output"), None);
        assert_eq!(
            pointed_path("see [Earlier tool result saved at x] here"),
            None
        );
    }

    #[test]
    fn only_existing_copies_in_the_results_folder_are_reused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let f = store.persist_tool_result(Some("t1"), "full").unwrap();
        let marker = format!("[Earlier tool result saved at {}]", f.path);
        assert_eq!(saved_copy(&store, &marker), Some(f.path.clone()));
        assert_eq!(
            saved_copy(
                &store,
                "[Earlier tool result saved at .task_outputs/tool-results/nope.txt]"
            ),
            None
        );
        assert_eq!(
            saved_copy(&store, "[Earlier tool result saved at /etc/passwd]"),
            None
        );
    }
}
