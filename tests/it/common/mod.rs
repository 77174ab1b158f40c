//! Helpers shared by the pipeline test files: message builders in the agent loop's shape,
//! the tool-pairing check, and workspaces on a fast file system.
#![allow(dead_code)]

pub mod agent;
pub mod html;
pub mod tour;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxlab::message::{Message, block, block_type};
use ctxlab::store::Store;
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

/// A temporary workspace, on tmpfs when there is one (fsync is then nearly free).
pub fn workspace() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(dir) = tempfile::Builder::new()
            .prefix("ctxlab-test-")
            .tempdir_in(shm)
        {
            return dir;
        }
    }
    tempfile::tempdir().unwrap()
}

pub fn store_in(dir: &tempfile::TempDir) -> Store {
    Store::new(dir.path())
}

/// Every regular file under `root`, relative path -> bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let ft = entry.file_type().unwrap();
            let path = entry.path();
            if ft.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The `content` of every `tool_result` block of a message, in order.
pub fn result_contents(m: &Message) -> Vec<Option<Value>> {
    m.blocks()
        .iter()
        .filter(|b| block_type(b) == Some("tool_result"))
        .map(|b| b.get("content").cloned())
        .collect()
}
