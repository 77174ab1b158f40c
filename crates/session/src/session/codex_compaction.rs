//! A Codex `compacted` line's `replacement_history`: the whole history the compaction
//! handed the model, item by item sorted into what the compaction kept from before, what
//! the harness wrote anew, and the summary (docs/pipeline.md, "Reading sessions").
//!
//! Kept means a copy of a message of the conversation before the compaction: Codex 0.171
//! says so itself (`replacement_history_metadata[i].retained_source`); older rollouts
//! carry no metadata, and there a typed user message (not injected context) is kept. The
//! developer instructions and the environment context Codex puts back in every new
//! history are written anew (new ids, no `retained_source`), even when their text is the
//! same as before: they are re-injected, not kept. The summary is the item Codex marks
//! `compaction.summary`, the item whose text is the line's `message`, or the provider's
//! encrypted item. A kept message's `from` is found by a hash of its text, computed once
//! per message of the session (`PromptIndex`), so a file of thousands of compactions is
//! read in linear time.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use super::assemble::{Builder, str_field};
use super::codex_items::{Item, convert_item};
use super::detail::HistoryCounts;
use super::model::{KeptMessage, MessageKind, Replacement, Session};
use crate::message::{Message, Role};

/// The message of a converted user, developer or system item.
pub(super) fn user_item_message(content: Value, role: &str) -> Message {
    if role == "user" {
        return match content {
            Value::Array(blocks) => Message::user_blocks(blocks),
            Value::String(s) => Message::user_text(s),
            other => Message::user_text(other.to_string()),
        };
    }
    // The item's text or blocks, as converted: always a valid message.
    Message::from_value(json!({"role": role, "content": content}))
        .unwrap_or_else(|_| Message::user_text(format!("[unreadable {role} message]")))
}

/// The key a typed user message is found by: a hash of its role and text.
pub(super) fn prompt_key(m: &Message) -> Option<u64> {
    if m.role_kind() != Role::User || m.is_tool_result_message() {
        return None;
    }
    let mut h = DefaultHasher::new();
    m.role().hash(&mut h);
    m.joined_text().hash(&mut h);
    Some(h.finish())
}

/// The typed user messages of a session by the hash of their text, indexed as the
/// session grows: each message is hashed once.
#[derive(Debug, Default)]
pub(super) struct PromptIndex {
    by_key: HashMap<u64, usize>,
    scanned: usize,
}

impl PromptIndex {
    /// Indexes the messages added since the last call (the latest of equal texts wins);
    /// returns how many it looked at.
    /// Indices are the whole file's (`Builder::end`: a follower forgets the front).
    pub fn catch_up(&mut self, b: &Builder) -> u64 {
        self.catch_up_over(&b.session, b.forgotten(), b.end())
    }

    /// `catch_up` as it was when the session held its first `upto` messages: what the
    /// reader had indexed at a compaction `upto` messages in (`kept_read`, a whole read:
    /// nothing forgotten).
    pub fn catch_up_to(&mut self, s: &Session, upto: usize) -> u64 {
        self.catch_up_over(s, 0, upto.min(s.messages.len()))
    }

    /// Indexes the messages from where it stopped up to `upto` (whole-file indices), of a
    /// session that holds them from `base` on.
    fn catch_up_over(&mut self, s: &Session, base: usize, upto: usize) -> u64 {
        let upto = upto.max(self.scanned);
        let from = self.scanned.max(base);
        for i in from..upto {
            if s.info.get(i - base).map(|o| o.kind) != Some(MessageKind::Conversation) {
                continue;
            }
            if let Some(k) = s.messages.get(i - base).and_then(prompt_key) {
                self.by_key.insert(k, i);
            }
        }
        self.scanned = upto;
        upto.saturating_sub(from) as u64
    }

    /// The index of the message equal to `m`, if one was indexed and is still held.
    pub fn find(&self, b: &Builder, m: &Message) -> Option<usize> {
        self.find_in(&b.session, b.forgotten(), m)
    }

    /// `find` in a session that holds its messages from `base` on (0: all of them).
    pub fn find_in(&self, s: &Session, base: usize, m: &Message) -> Option<usize> {
        self.find_keyed(s, base, prompt_key(m), m)
    }

    /// `find_in` with `m`'s `prompt_key` already known (a message found again and again).
    pub fn find_keyed(
        &self,
        s: &Session,
        base: usize,
        key: Option<u64>,
        m: &Message,
    ) -> Option<usize> {
        let i = self.candidate(key)?;
        let held = s.messages.get(i.checked_sub(base)?);
        (held == Some(m)).then_some(i)
    }
}

impl PromptIndex {
    /// The message `find_keyed` compares with a message of this key: the latest typed one
    /// of the same text (whole-file index).
    pub fn candidate(&self, key: Option<u64>) -> Option<usize> {
        self.by_key.get(&key?).copied()
    }
}

/// A replacement history, read.
pub(super) struct ReadHistory {
    /// How many messages were kept and re-injected (held or not).
    pub counts: HistoryCounts,
    pub replacement: Replacement,
    pub kept: Vec<KeptMessage>,
    /// The summary among the items is the provider's encrypted one.
    pub encrypted: bool,
}

/// Whether an item says it is the compaction's summary (Codex 0.171's content kinds).
fn marked_summary(o: &Map<String, Value>) -> bool {
    o.get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_kinds"))
        .and_then(Value::as_array)
        .is_some_and(|kinds| {
            kinds
                .iter()
                .any(|k| k.as_str() == Some("compaction.summary"))
        })
}

/// Reads `items` (with their `metadata` when the rollout has it) of a `compacted` line
/// whose summary text is `summary` (empty when not written).
///
/// With `hold` false (a numbers-only read, `Detail::Numbers`) the messages are sorted and
/// counted exactly as when held, then dropped: `kept` and `anew` stay empty, `counts` says
/// how many there were, and no kept message is looked up.
pub(super) fn read_history(
    b: &mut Builder,
    prompts: &PromptIndex,
    line: usize,
    items: &[Value],
    metadata: Option<&[Value]>,
    summary: &str,
    hold: bool,
) -> ReadHistory {
    let mut order = Vec::with_capacity(items.len());
    let mut anew = Vec::new();
    let mut kept = Vec::new();
    let mut reinjected = 0;
    let mut summary_at = None;
    let mut encrypted = false;
    // Without `hold`: how many messages were kept.
    let mut kept_count = 0;
    for (i, item) in items.iter().enumerate() {
        let Value::Object(o) = item else {
            b.warn(line, "a replacement_history item is not an object");
            continue;
        };
        // With metadata, Codex says which items it retained; without, a typed message is.
        let retained = metadata.map(|m| {
            m.get(i)
                .and_then(|x| x.get("retained_source"))
                .is_some_and(|r| !r.is_null())
        });
        // Where the message goes: kept (with the message it copies), or written anew.
        let (message, keep, from) = match convert_item(o) {
            Item::User {
                content,
                injected,
                role,
            } => {
                let message = user_item_message(content, role);
                let is_summary =
                    marked_summary(o) || (!summary.is_empty() && message.text() == Some(summary));
                if is_summary {
                    summary_at = Some(order.len());
                    (message, false, None)
                } else if retained.unwrap_or(!injected) {
                    let from = if hold {
                        prompts.find(b, &message)
                    } else {
                        None
                    };
                    (message, true, from)
                } else {
                    reinjected += 1;
                    (message, false, None)
                }
            }
            // An answer or a tool result is kept unless the metadata says Codex did not
            // retain it.
            Item::Assistant(blocks) => {
                let keep = retained.unwrap_or(true);
                reinjected += usize::from(!keep);
                (Message::assistant_blocks(blocks), keep, None)
            }
            Item::ToolResult(block) => {
                let keep = retained.unwrap_or(true);
                reinjected += usize::from(!keep);
                (Message::user_blocks(vec![block]), keep, None)
            }
            Item::EncryptedSummary => {
                encrypted = true;
                summary_at = Some(order.len());
                let text = "[compaction summary: encrypted by the provider]";
                (Message::user_text(text), false, None)
            }
            Item::Skip(reason) => {
                b.skip(format!("replacement_history: {reason}"));
                continue;
            }
        };
        if !hold {
            kept_count += usize::from(keep);
            continue;
        }
        if keep {
            order.push(Ok(kept.len()));
            kept.push(KeptMessage { message, from });
        } else {
            order.push(Err(anew.len()));
            anew.push(message);
        }
    }
    ReadHistory {
        counts: HistoryCounts {
            kept: if hold { kept.len() } else { kept_count },
            reinjected,
        },
        replacement: Replacement {
            order,
            anew,
            reinjected,
            summary: summary_at,
        },
        kept,
        encrypted,
    }
}

/// Duration of a `ContextCompaction` item from its `item_completed` event.
pub(super) fn item_duration_ms(p: &Map<String, Value>) -> Option<u64> {
    let start = p.get("started_at_ms")?.as_u64()?;
    p.get("completed_at_ms")?.as_u64()?.checked_sub(start)
}

/// Whether an `item_completed` event completes a compaction.
pub(super) fn is_compaction_item(p: &Map<String, Value>) -> bool {
    p.get("item")
        .and_then(Value::as_object)
        .and_then(|i| str_field(i, "type"))
        == Some("ContextCompaction")
}
