//! What the model saw at a point of a recorded session (`Session::model_view`): the latest
//! full compaction's new history (its replacement, or its summary and what it kept), the
//! messages since, and micro compactions' cleared results. Pure: it reads the model.

use serde_json::Value;

use super::model::{CLEARED_RESULT_TEXT, CompactionKind, MessageKind, Session, Summary};
use crate::message::{BlockKind, Message, Role};

impl Session {
    /// What the model saw right after compaction `k`.
    pub fn context_after(&self, k: usize) -> Vec<Message> {
        match self.compactions.get(k) {
            Some(c) => self.model_view(c.at),
            None => Vec::new(),
        }
    }

    /// What the model saw at message `upto` (exclusive): the latest full compaction's summary
    /// and what it kept, the messages since, with micro compactions' cleared results.
    pub fn model_view(&self, upto: usize) -> Vec<Message> {
        let upto = upto.min(self.messages.len());
        let last_full = self
            .compactions
            .iter()
            .rposition(|c| c.kind.replaces_history() && c.at <= upto);
        let (mut view, from, micro_from) = match last_full {
            None => (Vec::new(), 0, 0),
            Some(k) if self.compactions[k].replacement.is_some() => {
                let c = &self.compactions[k];
                let view = c
                    .new_history()
                    .map_or(Vec::new(), |h| h.into_iter().cloned().collect());
                (view, c.at.min(upto), k + 1)
            }
            Some(k) => {
                let c = &self.compactions[k];
                let mut view = Vec::new();
                let mut from = c.at;
                match c.summary_message {
                    Some(i) if i < self.messages.len() => {
                        view.push(self.messages[i].clone());
                        from = from.max(i + 1);
                    }
                    _ => {}
                }
                match &c.kept {
                    Some(kept) => view.extend(kept.iter().map(|k| k.message.clone())),
                    None if c.summary_message.is_none() => {
                        view.push(synthesized_summary(&c.summary));
                    }
                    None => {}
                }
                (view, from.min(upto), k + 1)
            }
        };
        // An abandoned branch is out of the view once the conversation went on without it.
        let live_until = self.info[..upto]
            .iter()
            .rposition(|i| i.kind != MessageKind::Abandoned)
            .unwrap_or(0);
        view.extend(
            self.messages[from..upto]
                .iter()
                .zip(&self.info[from..upto])
                .enumerate()
                .filter(|(k, (_, i))| match i.kind {
                    MessageKind::CompactSummary => false,
                    MessageKind::Abandoned => from + k > live_until,
                    _ => true,
                })
                .map(|(_, (m, _))| m.clone()),
        );
        let cleared: Vec<&str> = self.compactions[micro_from.min(self.compactions.len())..]
            .iter()
            .filter(|c| c.kind == CompactionKind::Micro && c.at <= upto)
            .flat_map(|c| c.cleared_tool_ids.iter().map(String::as_str))
            .collect();
        if !cleared.is_empty() {
            for m in &mut view {
                clear_results(m, &cleared);
            }
        }
        view
    }
}

/// A user message standing for a summary the file holds only as a compaction record.
pub(crate) fn synthesized_summary(summary: &Summary) -> Message {
    let text = match summary {
        Summary::Text(t) => t.clone(),
        Summary::Encrypted => "[compaction summary: encrypted by the provider]".to_string(),
        Summary::NotRecorded | Summary::None => "[compaction summary: not recorded]".to_string(),
    };
    Message::user_text(text)
}

fn clear_results(m: &mut Message, ids: &[&str]) {
    let hit = m
        .tool_results()
        .any(|b| ids.contains(&b.get("tool_use_id").and_then(Value::as_str).unwrap_or("")));
    if !hit || m.role_kind() != Role::User {
        return;
    }
    if let Some(blocks) = m.blocks_mut() {
        for b in blocks.iter_mut() {
            if BlockKind::of(b) != BlockKind::ToolResult {
                continue;
            }
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            if ids.contains(&id) {
                b["content"] = Value::String(CLEARED_RESULT_TEXT.to_string());
            }
        }
    }
}
