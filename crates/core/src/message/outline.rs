//! A message emptied down to what a session's figures ask of it, for a read that only
//! counts (`session::detail::Detail::Numbers`, issue 36): a gigabyte session's summary is
//! computed without holding its text. The outline keeps the role, each tool use's id and
//! name, each tool result's id (and its text where the caller asks for it), and the whole
//! message's size in the lesson's unit, computed before the text is dropped; nothing may
//! change it afterwards (a change would size the outline instead).

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::{Message, block_type};

impl Message {
    /// The outline of this message; `keep_text` says which tool results keep their text.
    pub fn sized_outline(&self, keep_text: &dyn Fn(&str) -> bool) -> Message {
        let size = OnceLock::new();
        let _ = size.set(self.estimate_size());
        let content = match self.raw.get("content") {
            Some(Value::Array(blocks)) => Value::Array(
                blocks
                    .iter()
                    .filter_map(|b| outline(b, keep_text))
                    .collect(),
            ),
            _ => Value::String(String::new()),
        };
        // Room for its two keys only (`Message::build`).
        let mut raw = Map::with_capacity(2);
        raw.insert("role".into(), Value::String(self.role().to_string()));
        raw.insert("content".into(), content);
        Message {
            raw: Arc::new(raw),
            size,
            json_size: OnceLock::new(),
            results: OnceLock::new(),
            print: OnceLock::new(),
            text_key: OnceLock::new(),
        }
    }
}

impl Message {
    /// `sized_outline` of a message not needed whole afterwards: its own map and block
    /// list become the outline's (a numbers-only read of a million tiny lines built every
    /// message twice, issue 39). A message of other keys than `role` and `content`, in
    /// that order, or whose role is no text, gets `sized_outline`'s new map.
    pub fn into_sized_outline(mut self, keep_text: &dyn Fn(&str) -> bool) -> Message {
        let same_keys = self.raw.keys().map(String::as_str).eq(["role", "content"]);
        if !same_keys || !matches!(self.raw.get("role"), Some(Value::String(_))) {
            return self.sized_outline(keep_text);
        }
        let size = self.estimate_size();
        // A message read from a line is its map's only holder: no copy is made here.
        if let Some(content) = Arc::make_mut(&mut self.raw).get_mut("content") {
            *content = match std::mem::take(content) {
                Value::Array(blocks) => {
                    let mut kept: Vec<Value> = blocks
                        .into_iter()
                        .filter_map(|b| outline(&b, keep_text))
                        .collect();
                    // The list is the parsed one, made for every block: an answer's text
                    // blocks leave it empty (then freed), a call's few tool uses short.
                    kept.shrink_to_fit();
                    Value::Array(kept)
                }
                _ => Value::String(String::new()),
            };
        }
        Message {
            raw: self.raw,
            size: OnceLock::from(size),
            json_size: OnceLock::new(),
            results: OnceLock::new(),
            print: OnceLock::new(),
            text_key: OnceLock::new(),
        }
    }
}

/// A tool use's or result's ids (a result's text when `keep_text` says); None for any other
/// block.
fn outline(b: &Value, keep_text: &dyn Fn(&str) -> bool) -> Option<Value> {
    let kind = block_type(b)?;
    let keys: &[&str] = match kind {
        "tool_use" => &["type", "id", "name"],
        "tool_result" => &["type", "tool_use_id"],
        _ => return None,
    };
    let mut o = Map::new();
    for k in keys {
        if let Some(v) = b.get(*k) {
            o.insert((*k).to_string(), v.clone());
        }
    }
    if let Some(Value::String(t)) = b.get("content")
        && keep_text(t)
    {
        o.insert("content".into(), Value::String(t.clone()));
    }
    Some(Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn an_outline_keeps_the_size_roles_and_tool_ids_and_drops_the_text() {
        let answer = Message::assistant_blocks(vec![
            block::text("long text ".repeat(50)),
            block::tool_use("t1", "Bash", json!({"command": "ls -la"})),
        ]);
        let results = Message::user_blocks(vec![
            block::tool_result("t1", "output ".repeat(40)),
            block::tool_result("t2", "<persisted-output>x</persisted-output>"),
        ]);
        let keep = |t: &str| t.starts_with("<persisted-output>");
        for m in [
            &answer,
            &results,
            &Message::user_text("a prompt ".repeat(30)),
        ] {
            let o = m.sized_outline(&keep);
            // The outline made of the message itself is the same outline.
            let owned = m.clone().into_sized_outline(&keep);
            assert_eq!(owned.raw, o.raw);
            assert_eq!(owned.estimate_size(), o.estimate_size());
            assert_eq!(owned.tool_result_lens(), o.tool_result_lens());
            assert_eq!(o.estimate_size(), m.estimate_size());
            assert_eq!(o.role(), m.role());
            assert!(o.joined_text().is_empty());
            assert!(o.clone().estimate_size() == m.estimate_size());
        }
        let o = answer.sized_outline(&keep);
        let ids: Vec<_> = o.tool_uses().map(|b| b["id"].clone()).collect();
        assert_eq!(ids, [json!("t1")]);
        let o = results.sized_outline(&keep);
        let kept: Vec<_> = o
            .tool_results()
            .map(|b| b.get("content").cloned())
            .collect();
        assert_eq!(
            kept,
            [None, Some(json!("<persisted-output>x</persisted-output>"))]
        );
    }
}
