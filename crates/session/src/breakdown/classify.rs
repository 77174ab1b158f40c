//! One message's sizes by category. A block goes to one category by its type and role;
//! a user text a compaction wrote (a `[Compacted]` summary, a snip or archive marker) and
//! a result a compaction replaced (its placeholders, Claude Code's cleared text) count as
//! summaries and markers; a result that starts with `<persisted-output>` is a preview of a
//! result saved to a file: Claude Code's persisted-output stage when it is that marker
//! (`session::claude_persisted`), else ctxlab's tool_result_budget. Tool results go under the tool's name, which `names` gives by
//! the `tool_use` id. Characters always; tokens when a tokenizer is given.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tiktoken_rs::CoreBPE;

use super::{Category, Parts, Size};
use crate::compact::request::is_pipeline_marker;
use crate::compact::results::{GUARDED_PREFIX, GUARDED_SUFFIX, SAVED_AT_PREFIX};
use crate::compact::s08::micro::MICRO_PLACEHOLDER;
use crate::compact::summary_label::SummaryLabel;
use crate::message::{BlockKind, Content, Message, ResultContent, Role, block_type};
use crate::session::CLEARED_RESULT_TEXT;
use crate::session::claude_persisted::claude_code_persisted;

/// What the source says a message is, beyond its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    Normal,
    /// A compaction's summary message (Claude Code's `isCompactSummary`): all of it is
    /// summary, whatever its shape.
    Summary,
}

/// What classifying needs besides the message.
pub struct Classifier<'a> {
    /// Counts tokens when given; else only characters are measured.
    pub bpe: Option<&'a CoreBPE>,
    /// Tool names by `tool_use` id.
    pub names: &'a HashMap<String, String>,
    /// Ids of results a micro compaction cleared (they read as Claude Code's cleared text).
    pub cleared: Option<&'a HashSet<String>>,
}

impl Classifier<'_> {
    fn size(&self, text: &str) -> Size {
        Size {
            chars: text.chars().count() as u64,
            tokens: self.bpe.map_or(0, |b| super::tokens::count(b, text)),
        }
    }
}

pub use crate::message::tool_names;

pub(super) fn is_marker(text: &str) -> bool {
    SummaryLabel::of(text).is_some() || is_pipeline_marker(text)
}

/// A result's text that a compaction put in place of the result.
pub(super) fn is_placeholder(text: &str) -> bool {
    text == CLEARED_RESULT_TEXT
        || text == MICRO_PLACEHOLDER
        || text.starts_with("[Previous: used ")
        || text.starts_with(SAVED_AT_PREFIX)
        || (text.starts_with(GUARDED_PREFIX) && text.ends_with(GUARDED_SUFFIX))
}

/// A system prompt the session file records (Codex's `base_instructions`), sized.
pub fn system_prompt_parts(text: &str, c: &Classifier) -> Parts {
    let mut p = Parts::default();
    p.add(Category::SystemPrompt, c.size(text));
    p
}

/// `m`'s sizes by category.
pub fn message_parts(m: &Message, hint: Hint, c: &Classifier) -> Parts {
    let mut p = Parts::default();
    let role_cat = match m.role() {
        "assistant" => Category::AssistantText,
        "system" => Category::SystemPrompt,
        "developer" => Category::DeveloperMessages,
        _ => Category::UserText,
    };
    let summary = hint == Hint::Summary;
    let text_cat = |t: &str| {
        if summary || (m.role_kind() == Role::User && is_marker(t)) {
            Category::Summaries
        } else {
            role_cat.clone()
        }
    };
    match m.content() {
        Content::Text(t) => p.add(text_cat(t), c.size(t)),
        Content::Blocks(blocks) => {
            for b in blocks {
                block_parts(&mut p, m.role(), b, summary, c, &text_cat);
            }
        }
    }
    p
}

fn block_parts(
    p: &mut Parts,
    role: &str,
    b: &Value,
    summary: bool,
    c: &Classifier,
    text_cat: &dyn Fn(&str) -> Category,
) {
    let field = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
    let over = |cat: Category| if summary { Category::Summaries } else { cat };
    match block_type(b).unwrap_or("") {
        "text" => p.add(text_cat(field("text")), c.size(field("text"))),
        "thinking" => p.add(over(Category::Thinking), c.size(field("thinking"))),
        "redacted_thinking" => p.add(over(Category::Thinking), c.size(field("data"))),
        "tool_use" | "server_tool_use" => {
            let input = b.get("input").map(Value::to_string).unwrap_or_default();
            let size = c.size(&format!("{}{input}", field("name")));
            p.add(over(Category::ToolCalls), size);
        }
        "image" => p.add(
            Category::Images,
            Size {
                chars: 0,
                tokens: super::image::image_tokens(b),
            },
        ),
        "tool_result" => {
            let id = field("tool_use_id");
            let name = c.names.get(id).map_or("unknown", String::as_str);
            let tool = over(Category::tool(name));
            if role == "user" && c.cleared.is_some_and(|ids| ids.contains(id)) {
                p.add(Category::Summaries, c.size(CLEARED_RESULT_TEXT));
                return;
            }
            let text_of = |p: &mut Parts, t: &str| {
                let cat = if claude_code_persisted(t).is_some() {
                    over(Category::ClaudeCodePersisted)
                } else if crate::compact::markers::is_persisted(t) {
                    over(Category::PersistedPreviews)
                } else if is_placeholder(t) {
                    Category::Summaries
                } else {
                    tool.clone()
                };
                p.add(cat, c.size(t));
            };
            match ResultContent::of(b) {
                ResultContent::Text(t) => text_of(p, t),
                ResultContent::Blocks(items) => {
                    for item in items {
                        match BlockKind::of(item) {
                            BlockKind::Text => {
                                text_of(p, item.get("text").and_then(Value::as_str).unwrap_or(""))
                            }
                            BlockKind::Image => p.add(
                                Category::Images,
                                Size {
                                    chars: 0,
                                    tokens: super::image::image_tokens(item),
                                },
                            ),
                            _ => p.add(tool.clone(), c.size(&item.to_string())),
                        }
                    }
                }
                ResultContent::Empty => {}
            }
        }
        // Anything else (documents, unknown blocks) is its JSON, on its role's side.
        _ => p.add(text_cat(""), c.size(&b.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn blocks_go_to_their_categories() {
        let a = Message::assistant_blocks(vec![
            json!({"type": "thinking", "thinking": "hmm", "signature": "s"}),
            json!({"type": "text", "text": "I'll look"}),
            block::tool_use("t1", "bash", json!({"command": "ls"})),
        ]);
        let persisted = "<persisted-output>\nFull output: .task_outputs/tool-results/t2.txt\nPreview:\nab\n</persisted-output>";
        let u = Message::user_blocks(vec![
            block::tool_result("t1", "a.txt b.txt"),
            block::tool_result("t2", persisted),
            block::tool_result("t3", MICRO_PLACEHOLDER),
        ]);
        let names = tool_names([&a].into_iter());
        let c = Classifier {
            bpe: None,
            names: &names,
            cleared: None,
        };
        let pa = message_parts(&a, Hint::Normal, &c);
        assert_eq!(pa.get(&Category::Thinking).chars, 3);
        assert_eq!(pa.get(&Category::AssistantText).chars, 9);
        assert_eq!(
            pa.get(&Category::ToolCalls).chars,
            "bash{\"command\":\"ls\"}".len() as u64
        );
        let pu = message_parts(&u, Hint::Normal, &c);
        assert_eq!(pu.get(&Category::tool("bash")).chars, 11);
        assert_eq!(
            pu.get(&Category::PersistedPreviews).chars,
            persisted.len() as u64
        );
        assert_eq!(
            pu.get(&Category::Summaries).chars,
            MICRO_PLACEHOLDER.chars().count() as u64
        );
        let s = Message::user_text("[Compacted]\n\nAuthoritative request:\ngo");
        let ps = message_parts(&s, Hint::Normal, &c);
        assert_eq!(ps.chars(), ps.get(&Category::Summaries).chars);
        let cleared: HashSet<String> = ["t1".to_string()].into();
        let c2 = Classifier {
            cleared: Some(&cleared),
            ..c
        };
        let pc = message_parts(&u, Hint::Normal, &c2);
        assert_eq!(pc.get(&Category::tool("bash")).chars, 0);
    }
}
