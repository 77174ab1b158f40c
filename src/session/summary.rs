//! A session in numbers: what `ctxlab inspect` prints and what a browser lists beside each
//! file. `SessionSummary` is computed from a loaded session; the `quick_*` scans compute the
//! listing's counts straight from the text, reading only the fields they need from each
//! line (serde skips the rest without building it), so a listing can afford them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::discover::QuickStats;
use super::model::{Compaction, LoadWarning, MessageKind, Session, Summary, TokenCount};

/// One compaction, summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactionLine {
    pub kind: &'static str,
    pub trigger: Option<String>,
    /// Message index where it happened and the file line that records it.
    pub at: usize,
    pub line: usize,
    pub timestamp: Option<String>,
    pub tokens_before: Option<TokenCount>,
    pub tokens_after: Option<TokenCount>,
    pub duration_ms: Option<u64>,
    /// `text`, `encrypted`, `not_recorded` or `none`.
    pub summary: &'static str,
    pub summary_chars: Option<usize>,
    /// Messages kept besides the summary; None when the file does not say.
    pub kept_messages: Option<usize>,
    pub cleared_tool_results: usize,
}

impl CompactionLine {
    fn of(c: &Compaction) -> CompactionLine {
        let (summary, summary_chars) = match &c.summary {
            Summary::Text(t) => ("text", Some(t.chars().count())),
            Summary::Encrypted => ("encrypted", None),
            Summary::NotRecorded => ("not_recorded", None),
            Summary::None => ("none", None),
        };
        CompactionLine {
            kind: c.kind.name(),
            trigger: c.trigger.as_ref().map(|t| t.name().to_string()),
            at: c.at,
            line: c.line,
            timestamp: c.timestamp.clone(),
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            duration_ms: c.duration_ms,
            summary,
            summary_chars,
            kept_messages: c.kept.as_ref().map(Vec::len),
            cleared_tool_results: c.cleared_tool_ids.len(),
        }
    }
}

/// A subagent's conversation, summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SidechainLine {
    pub agent_id: Option<String>,
    pub messages: usize,
    pub calls: usize,
    pub compactions: usize,
}

/// Everything `ctxlab inspect` reports about a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub format: &'static str,
    pub tool: &'static str,
    pub session_id: Option<String>,
    pub version: Option<String>,
    pub project: Option<String>,
    pub models: Vec<String>,
    pub started: Option<String>,
    pub ended: Option<String>,
    pub title: Option<String>,
    pub lines: usize,
    pub messages: usize,
    /// Model calls: assistant messages of the main conversation.
    pub calls: usize,
    /// Calls whose token usage the file records.
    pub calls_with_usage: usize,
    pub tool_pairs: usize,
    pub compactions: Vec<CompactionLine>,
    pub peak_context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub output_tokens: u64,
    /// The replayed conversation's size in the lesson's unit (chars of Python's `str()`).
    pub conversation_chars: usize,
    pub sidechains: Vec<SidechainLine>,
    pub warnings: Vec<LoadWarning>,
    pub skipped: BTreeMap<String, usize>,
    pub skipped_total: usize,
}

/// `estimate_size` of `replay_messages`, without copying them.
fn conversation_chars(s: &Session) -> usize {
    let sizes: Vec<usize> = s
        .messages
        .iter()
        .zip(&s.info)
        .filter(|(_, i)| i.kind == MessageKind::Conversation)
        .map(|(m, _)| m.estimate_size())
        .collect();
    2 + sizes.iter().sum::<usize>() + 2 * sizes.len().saturating_sub(1)
}

fn assistant_count(s: &Session) -> usize {
    s.messages
        .iter()
        .filter(|m| m.role() == "assistant")
        .count()
}

impl SessionSummary {
    pub fn of(s: &Session) -> SessionSummary {
        SessionSummary {
            format: s.format.name(),
            tool: s.tool().name(),
            session_id: s.meta.session_id.clone(),
            version: s.meta.version.clone(),
            project: s.meta.cwd.clone(),
            models: s.meta.models.clone(),
            started: s.meta.started.clone(),
            ended: s.meta.ended.clone(),
            title: s.meta.title.clone(),
            lines: s.lines,
            messages: s.messages.len(),
            calls: assistant_count(s),
            calls_with_usage: s.calls.len(),
            tool_pairs: s.tool_pairs(),
            compactions: s.compactions.iter().map(CompactionLine::of).collect(),
            peak_context_tokens: s.peak_context_tokens(),
            context_window: s.context_window(),
            output_tokens: s.calls.iter().map(|c| c.usage.output_tokens).sum(),
            conversation_chars: conversation_chars(s),
            sidechains: s
                .sidechains
                .iter()
                .map(|side| SidechainLine {
                    agent_id: side.meta.agent_id.clone(),
                    messages: side.messages.len(),
                    calls: assistant_count(side),
                    compactions: side.compactions.len(),
                })
                .collect(),
            warnings: s.warnings.clone(),
            skipped: s.skipped.clone(),
            skipped_total: s.skipped.values().sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversations_size_is_the_lessons_size_of_the_replayed_messages() {
        let s = crate::session::parse_session_text(include_str!(
            "../../tests/fixtures/sessions/claude_code.jsonl"
        ))
        .unwrap();
        assert_eq!(
            conversation_chars(&s),
            crate::message::estimate_size(&s.replay_messages())
        );
        let q = quick_claude(include_str!(
            "../../tests/fixtures/sessions/claude_code.jsonl"
        ));
        assert_eq!(
            (q.calls, q.compactions, q.peak_context_tokens),
            (5, 3, Some(2120))
        );
    }
}

#[derive(Deserialize)]
struct ClaudeUsageLite {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
}

#[derive(Deserialize)]
struct ClaudeMessageLite<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<ClaudeUsageLite>,
}

#[derive(Deserialize)]
struct ClaudeLineLite<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    message: Option<ClaudeMessageLite<'a>>,
}

/// Claude Code: calls are distinct message ids, compactions are boundaries (or a summary
/// line with no boundary before it), the peak is the largest prompt a call reported.
pub(crate) fn quick_claude(text: &str) -> QuickStats {
    let mut ids: HashSet<String> = HashSet::new();
    let mut stats = QuickStats::default();
    let mut boundary_open = false;
    let mut anonymous_calls = 0;
    for line in text.lines() {
        let Ok(l) = serde_json::from_str::<ClaudeLineLite>(line) else {
            continue;
        };
        if l.is_sidechain == Some(true) {
            continue;
        }
        match (l.kind.as_deref(), l.subtype.as_deref()) {
            (Some("system"), Some("compact_boundary")) => {
                stats.compactions += 1;
                boundary_open = true;
            }
            (Some("system"), Some("microcompact_boundary")) => stats.compactions += 1,
            (Some("user"), _) => {
                if l.is_compact_summary == Some(true) && !boundary_open {
                    stats.compactions += 1;
                }
                boundary_open = false;
            }
            (Some("assistant"), _) => {
                boundary_open = false;
                let Some(m) = l.message else { continue };
                if m.model.as_deref() == Some("<synthetic>") {
                    continue;
                }
                match m.id {
                    Some(id) => {
                        ids.insert(id.into_owned());
                    }
                    None => anonymous_calls += 1,
                }
                if let Some(u) = m.usage {
                    let ctx =
                        u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
                    stats.peak_context_tokens = stats.peak_context_tokens.max(Some(ctx));
                }
            }
            _ => {}
        }
    }
    stats.calls = ids.len() + anonymous_calls;
    stats
}

#[derive(Deserialize, Clone, Copy)]
struct CodexUsageLite {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
}

#[derive(Deserialize)]
struct CodexInfoLite {
    #[serde(default)]
    total_token_usage: Option<CodexUsageLite>,
    #[serde(default)]
    last_token_usage: Option<CodexUsageLite>,
}

#[derive(Deserialize)]
struct CodexPayloadLite<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    info: Option<CodexInfoLite>,
}

#[derive(Deserialize)]
struct CodexLineLite<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<CodexPayloadLite<'a>>,
}

/// Codex: calls are token_count events (repeats skipped), compactions are `compacted`
/// lines (or `context_compacted` events when no line follows), the peak is the largest
/// prompt a call reported.
pub(crate) fn quick_codex(text: &str) -> QuickStats {
    let mut stats = QuickStats::default();
    let mut last_total: Option<(u64, u64, u64)> = None;
    let mut events = 0;
    for line in text.lines() {
        let Ok(l) = serde_json::from_str::<CodexLineLite>(line) else {
            continue;
        };
        let Some(p) = l.payload else { continue };
        match (l.kind.as_deref(), p.kind.as_deref()) {
            (Some("compacted"), _) => stats.compactions += 1,
            (Some("event_msg"), Some("context_compacted")) => events += 1,
            (Some("event_msg"), Some("token_count")) => {
                let Some(info) = p.info else { continue };
                let total = info
                    .total_token_usage
                    .map(|t| (t.input_tokens, t.output_tokens, t.total_tokens));
                if total.is_some() && total == last_total {
                    continue;
                }
                last_total = total;
                if let Some(u) = info.last_token_usage {
                    stats.calls += 1;
                    stats.peak_context_tokens = stats.peak_context_tokens.max(Some(u.input_tokens));
                }
            }
            _ => {}
        }
    }
    stats.compactions = stats.compactions.max(events);
    stats
}
