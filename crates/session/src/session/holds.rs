//! What a file holds when it holds no conversation: the one sentence `ctxlab sessions`,
//! `inspect`, `replay` and `export` all print for it ("3 summary lines and no conversation
//! messages", "4 compactions and no conversation messages"), so a summary-only file is
//! never called empty (docs/pipeline.md, "Reading sessions").

use super::model::{MessageKind, Session};

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", crate::util::noun(n, one, many))
}

/// None when the session has a conversation to replay; else what the file holds instead
/// ("no messages" when it holds nothing ctxlab reads).
pub fn without_conversation(s: &Session) -> Option<String> {
    if s.info.iter().any(|i| i.kind == MessageKind::Conversation) {
        return None;
    }
    let other = s.messages.len();
    let mut parts = Vec::new();
    if !s.compactions.is_empty() {
        parts.push(count(s.compactions.len(), "compaction", "compactions"));
    }
    if s.meta.summary_lines > 0 {
        parts.push(count(s.meta.summary_lines, "summary line", "summary lines"));
    }
    if other > 0 {
        parts.push(count(other, "injected message", "injected messages"));
    }
    if parts.is_empty() {
        // An empty array, or lines ctxlab skips: nothing at all.
        return Some("no messages".to_string());
    }
    Some(format!("{} and no conversation messages", parts.join(", ")))
}
