//! A session in numbers: what `ctxlab inspect` prints. `SessionSummary` is computed from a
//! loaded session; the numbers a listing shows too (calls, compactions, start, end, peak,
//! project) come from `numbers::SessionNumbers`, the one place that answers them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::{
    Compaction, LoadWarning, MessageKind, RecordedUsage, Session, Summary, TokenCount, TokenSource,
};
use super::numbers::{ProjectSource, SessionNumbers, compaction_label};
use crate::message::Role;
use crate::util::group_digits;

/// A compaction's token count as `inspect` writes it: `~` for an estimate, and where an
/// estimate came from.
fn tokens(t: &Option<TokenCount>) -> String {
    match t {
        None => "?".to_string(),
        Some(t) => match t.source {
            TokenSource::Recorded => t.text(),
            TokenSource::LastCallBefore => format!("{} (last call before)", t.text()),
            TokenSource::FirstCallAfter => format!("{} (first call after)", t.text()),
        },
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group_digits(n), crate::util::noun(n, one, many))
}

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
    /// Messages kept from before besides the summary; None when the file does not say.
    pub kept_messages: Option<usize>,
    /// Messages of the new history the recording tool wrote anew (Codex's developer
    /// instructions and environment context): neither kept nor the summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reinjected_messages: Option<usize>,
    pub cleared_tool_results: usize,
    /// The compaction's own model call, when the file records it: its cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_call: Option<RecordedUsage>,
}

impl CompactionLine {
    /// `#1 at message 5 (line 14): full manual, 2,150 -> 900 tokens, 12.0 s; summary 202
    /// chars of text; kept 1 message` (the label is `numbers::compaction_label`): compaction `i` (from 0) as `inspect` lists it and an
    /// exported replay shows it.
    pub fn describe(&self, i: usize) -> String {
        let mut s = format!(
            "{} (line {}): {} {}, {} -> {} tokens",
            compaction_label(i + 1, Some(self.at)),
            self.line,
            self.kind,
            self.trigger.as_deref().unwrap_or("trigger unknown"),
            tokens(&self.tokens_before),
            tokens(&self.tokens_after),
        );
        if let Some(ms) = self.duration_ms {
            // Codex's compactions take tens of milliseconds: "0.0 s" would say none.
            if ms < 1000 {
                s.push_str(&format!(", {ms} ms"));
            } else {
                s.push_str(&format!(", {:.1} s", ms as f64 / 1000.0));
            }
        }
        match (self.summary, self.summary_chars) {
            ("text", Some(n)) => {
                s.push_str(&format!("; summary {} of text", plural(n, "char", "chars")))
            }
            ("encrypted", _) => s.push_str("; summary encrypted by the provider"),
            ("not_recorded", _) => s.push_str("; summary not recorded"),
            _ => {}
        }
        match self.kept_messages {
            Some(n) if self.kind != "micro" => {
                s.push_str(&format!("; kept {}", plural(n, "message", "messages")))
            }
            None => s.push_str("; what was kept is not recorded"),
            _ => {}
        }
        if let Some(n) = self.reinjected_messages.filter(|n| *n > 0) {
            s.push_str(&format!(", {} re-injected", group_digits(n)));
        }
        if let Some(u) = &self.compaction_call {
            s.push_str(&format!(
                "; its own call read {} tokens and wrote {}",
                group_digits(u.context_tokens() as usize),
                group_digits(u.output_tokens as usize)
            ));
        }
        if self.cleared_tool_results > 0 {
            s.push_str(&format!(
                "; {} cleared",
                plural(self.cleared_tool_results, "tool result", "tool results")
            ));
        }
        s
    }

    pub fn of(c: &Compaction) -> CompactionLine {
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
            kept_messages: c.kept_messages(),
            reinjected_messages: c.reinjected_messages(),
            cleared_tool_results: c.cleared_tool_ids.len(),
            compaction_call: c.own_call,
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
    /// `recorded`, or `folder_name` when decoded from Claude Code's folder name.
    pub project_source: Option<ProjectSource>,
    pub models: Vec<String>,
    pub started: Option<String>,
    pub ended: Option<String>,
    pub title: Option<String>,
    /// What the file holds when it holds no conversation (`holds`).
    pub without_conversation: Option<String>,
    pub lines: usize,
    pub messages: usize,
    /// Model calls: assistant messages of the main conversation.
    pub calls: usize,
    /// Calls whose token usage the file records.
    pub calls_with_usage: usize,
    /// Of `calls`, the ones the API refused (a ctxlab recording's refusals).
    pub refused_calls: usize,
    /// The compactions' own model calls the file records (Codex): not in `calls`.
    pub compaction_calls: usize,
    pub tool_pairs: usize,
    /// Times a person rewound the conversation, and the messages of the branches left
    /// behind (in `messages`, out of a replay).
    pub rewinds: usize,
    pub abandoned_messages: usize,
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
    /// The line (or item) types the reader does not know, by name, with their counts: the
    /// `unknown line type x` entries of `skipped`, so a format change is named.
    pub unknown_types: BTreeMap<String, usize>,
    /// What a Claude Code file records of its requests beyond the transcript; None when it
    /// records nothing (older files, other formats).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_record: Option<RecordLine>,
    /// Tool results Claude Code's persisted-output stage replaced by a `<persisted-output>`
    /// marker with a preview (the full output in the session's `tool-results/`).
    pub claude_code_persisted_outputs: usize,
}

/// Claude Code's request record, counted (`claude_requests`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordLine {
    /// Distinct request shapes (system prompt and tool schemas).
    pub shapes: usize,
    /// `api-request` lines, and how many were matched to a call of the file.
    pub requests: usize,
    pub requests_matched: usize,
    /// Model calls whose request shape is known.
    pub calls_with_shape: usize,
    /// Attachments with rendered text (reminders sent to the model).
    pub rendered_attachments: usize,
    /// `api-request-blob` lines (user messages as sent, counted through the others).
    pub blobs: usize,
    /// The API's context editing the requests asked for, by edit type: requests naming it.
    pub context_edits: BTreeMap<String, usize>,
}

/// The prefixes under which the readers count what they do not know.
const UNKNOWN_PREFIXES: &[&str] = &["unknown line type ", "unknown item type "];

fn unknown_types(skipped: &BTreeMap<String, usize>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (what, n) in skipped {
        // `replacement_history: unknown item type x` is an item type too.
        let what = what.strip_prefix("replacement_history: ").unwrap_or(what);
        if let Some(name) = UNKNOWN_PREFIXES.iter().find_map(|p| what.strip_prefix(p)) {
            *out.entry(name.to_string()).or_default() += n;
        }
    }
    out
}

fn record_line(s: &Session) -> Option<RecordLine> {
    let r = &s.request_record;
    (!r.is_empty()).then(|| RecordLine {
        shapes: r.shapes.len(),
        requests: r.requests,
        requests_matched: r.requests_matched,
        calls_with_shape: s
            .calls
            .iter()
            .filter(|c| r.shape_of_call(c.line).is_some())
            .count(),
        rendered_attachments: r.attachments.len(),
        blobs: r.blobs,
        context_edits: r.context_edits.clone(),
    })
}

/// Tool results that are Claude Code's persisted-output markers.
fn claude_code_persisted_outputs(s: &Session) -> usize {
    s.messages
        .iter()
        .flat_map(|m| m.tool_results())
        .filter(|b| {
            matches!(crate::message::ResultContent::of(b),
                crate::message::ResultContent::Text(t) if super::claude_persisted::claude_code_persisted(t).is_some())
        })
        .count()
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
        .filter(|m| m.role_kind() == Role::Assistant)
        .count()
}

impl SessionSummary {
    pub fn of(s: &Session) -> SessionSummary {
        let n = SessionNumbers::of(s);
        SessionSummary {
            format: s.format.name(),
            tool: s.tool().name(),
            session_id: s.meta.session_id.clone(),
            version: s.meta.version.clone(),
            project: n.project,
            project_source: n.project_source,
            models: s.meta.models.clone(),
            started: n.started,
            ended: n.ended,
            title: s.meta.title.clone(),
            without_conversation: super::holds::without_conversation(s),
            lines: s.lines,
            messages: s.messages.len(),
            calls: n.calls,
            calls_with_usage: s.calls.len(),
            refused_calls: n.refused_calls,
            compaction_calls: s
                .compactions
                .iter()
                .filter(|c| c.own_call.is_some())
                .count(),
            tool_pairs: s.tool_pairs(),
            rewinds: s.meta.rewinds,
            abandoned_messages: s.abandoned_messages(),
            compactions: s.compactions.iter().map(CompactionLine::of).collect(),
            peak_context_tokens: n.peak_context_tokens,
            context_window: s.context_window(),
            output_tokens: s
                .calls
                .iter()
                .map(|c| c.usage.output_tokens)
                .chain(
                    s.compactions
                        .iter()
                        .filter_map(|c| c.own_call.map(|u| u.output_tokens)),
                )
                .sum(),
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
            unknown_types: unknown_types(&s.skipped),
            request_record: record_line(s),
            claude_code_persisted_outputs: claude_code_persisted_outputs(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversations_size_is_the_lessons_size_of_the_replayed_messages() {
        let s = crate::session::parse_session_text(include_str!(
            "../../../../tests/fixtures/sessions/claude_code.jsonl"
        ))
        .unwrap();
        assert_eq!(
            conversation_chars(&s),
            crate::message::estimate_size(&s.replay_messages())
        );
        let n = SessionNumbers::of(&s);
        assert_eq!(
            (n.calls, n.compactions, n.peak_context_tokens),
            (5, 3, Some(2120))
        );
    }
}
