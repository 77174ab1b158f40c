//! What a compaction made now would put at risk (docs/forgot.md): the facts of the
//! messages since the last full compaction, ranked as `forgot` ranks them, and a ready
//! focus text for Claude Code's `/compact` and for Codex. Pure: it is given the session.

use super::facts::Fact;
use super::from_session::numbered;
use super::{CompactionInput, KeptInput, SummaryText, analyze};
use crate::session::{CompactionKind, MessageKind, Session};

/// Chars of a focus text at most: long enough for a handful of facts, short enough to type.
const MAX_FOCUS_CHARS: usize = 600;

/// The facts at risk and what to send to keep them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtRisk {
    /// Facts found since the last full compaction.
    pub total: usize,
    /// The most important ones, ranked.
    pub top: Vec<Fact>,
    /// `/compact Keep: …` for Claude Code.
    pub claude_compact: String,
    /// Codex's `/compact` takes no focus: a message to send before it compacts.
    pub codex_message: String,
}

fn focus(facts: &[Fact]) -> String {
    let mut out = String::new();
    for f in facts {
        let item = f.text.replace('\n', " ");
        if out.chars().count() + item.chars().count() + 2 > MAX_FOCUS_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&item);
    }
    out
}

/// The facts at risk in `s`, the first `shown` of them listed.
pub fn at_risk(s: &Session, shown: usize) -> AtRisk {
    let from = s
        .compactions
        .iter()
        .filter(|c| c.kind == CompactionKind::Full)
        .map(|c| c.at)
        .max()
        .unwrap_or(0)
        .min(s.messages.len());
    let before = (from..s.messages.len())
        .filter(|&i| {
            s.info
                .get(i)
                .is_none_or(|o| o.kind == MessageKind::Conversation)
        })
        .map(|i| numbered(s, i))
        .collect();
    let input = CompactionInput {
        kind: "at risk".into(),
        micro: false,
        at: Some(s.messages.len()),
        call: None,
        trigger: None,
        rule: "a compaction now, with a summary that names none of them".into(),
        before,
        summary: SummaryText::Text(String::new()),
        kept: KeptInput::recorded(Vec::new(), Vec::new()),
        cleared: Vec::new(),
        after: Vec::new(),
        tokens_before: None,
    };
    let report = analyze(1, &input);
    let top: Vec<Fact> = report.facts.into_iter().take(shown.max(1)).collect();
    let keep = focus(&top);
    AtRisk {
        total: report.not_carried,
        claude_compact: format!("/compact Keep: {keep}"),
        codex_message: format!("Before you compact, keep these in the summary: {keep}"),
        top,
    }
}
