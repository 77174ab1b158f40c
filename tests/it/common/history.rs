//! Histories in the agent loop's shape for the pipeline tests: message builders, the
//! tool-pairing check and a size counted from scratch.

use ctxlab::message::{Message, block, block_type};
use serde_json::{Value, json};

/// A user message with string content.
pub fn user(text: &str) -> Message {
    Message::user_text(text)
}

/// An assistant message: a short text, then one `tool_use` per id.
pub fn calls(ids: &[&str]) -> Message {
    let mut blocks = vec![block::text("Running tools.")];
    for id in ids {
        blocks.push(block::tool_use(*id, "bash", json!({"command": "ls"})));
    }
    Message::assistant_blocks(blocks)
}

/// An assistant message with text only (the end of a turn).
pub fn said(text: &str) -> Message {
    Message::assistant_blocks(vec![block::text(text)])
}

/// A user message answering the given ids with string contents, in order.
pub fn results(pairs: &[(&str, &str)]) -> Message {
    Message::user_blocks(
        pairs
            .iter()
            .map(|(id, c)| block::tool_result(*id, *c))
            .collect(),
    )
}

/// A `tool_result` block with arbitrary JSON content (list, null).
pub fn result_block(id: &str, content: Value) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": content})
}

/// `n` code points of a repeated pattern.
pub fn text_of(pattern: &str, n: usize) -> String {
    pattern.chars().cycle().take(n).collect()
}

/// The first violation of the pairing rule, if any (the library's own check).
pub fn pairing_violation(messages: &[Message]) -> Option<String> {
    ctxlab::message::tool_pairing_error(messages)
}

/// The size of a history counted from scratch: Python's `str()` of the whole list.
pub fn recount(messages: &[Message]) -> usize {
    let list = Value::Array(messages.iter().map(Message::to_value).collect());
    ctxlab::pyrepr::py_repr(&list).chars().count()
}

/// The `content` of every `tool_result` block of a message, in order.
pub fn result_contents(m: &Message) -> Vec<Option<Value>> {
    m.blocks()
        .iter()
        .filter(|b| block_type(b) == Some("tool_result"))
        .map(|b| b.get("content").cloned())
        .collect()
}
