//! One model for every session format ctxlab reads: the messages in the Anthropic wire shape,
//! where each came from, the compactions the recording tool performed, the usage of each
//! model call, and the session's metadata. Readers fill it; the workbench, `ctxlab inspect`
//! and `ctxlab replay` read it. Nothing here reads or writes files.
//!
//! The message list is the *full* session: what came before each compaction stays in it,
//! so a viewer can show what a compaction dropped. `model_view` rebuilds what the model saw
//! at any point (the summary, what the compaction kept, what followed), and
//! `replay_messages` is the conversation alone, as the lesson's pipeline replays it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::message::Message;

/// The tool that recorded a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    ClaudeCode,
    Codex,
    Ctxlab,
    /// `ctxlab proxy`'s captures: the exact requests of any agent.
    Proxy,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::ClaudeCode => "claude-code",
            Tool::Codex => "codex",
            Tool::Ctxlab => "ctxlab",
            Tool::Proxy => "proxy",
        }
    }
}

/// The file layout a session was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionFormat {
    /// `~/.claude/projects/<project>/<session>.jsonl`.
    ClaudeCode,
    /// A Codex rollout with the `{timestamp, type, payload}` envelope.
    Codex,
    /// A 2025 Codex rollout: a `{id, timestamp, instructions}` line, then bare items.
    CodexLegacy,
    /// ctxlab's own transcript: one message per line.
    CtxlabTranscript,
    /// A JSON array of messages, or `ctxlab pipeline`'s `{"messages": [...]}` object.
    MessageArray,
    /// A live session ctxlab recorded (`session::recorded`: a header line, then events).
    CtxlabSession,
    /// A `ctxlab proxy` capture (`session::capture`: a header line, then one exchange per
    /// line).
    ProxyCapture,
}

impl SessionFormat {
    pub fn name(self) -> &'static str {
        match self {
            SessionFormat::ClaudeCode => "claude-code",
            SessionFormat::Codex => "codex",
            SessionFormat::CodexLegacy => "codex-legacy",
            SessionFormat::CtxlabTranscript => "ctxlab-transcript",
            SessionFormat::MessageArray => "message-array",
            SessionFormat::CtxlabSession => "ctxlab-session",
            SessionFormat::ProxyCapture => "proxy-capture",
        }
    }

    pub fn tool(self) -> Tool {
        match self {
            SessionFormat::ClaudeCode => Tool::ClaudeCode,
            SessionFormat::Codex | SessionFormat::CodexLegacy => Tool::Codex,
            SessionFormat::CtxlabTranscript
            | SessionFormat::MessageArray
            | SessionFormat::CtxlabSession => Tool::Ctxlab,
            SessionFormat::ProxyCapture => Tool::Proxy,
        }
    }
}

/// What the file says about the session as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionMeta {
    pub session_id: Option<String>,
    /// The recording tool's version (`version` in Claude Code, `cli_version` in Codex).
    pub version: Option<String>,
    /// The project folder the agent worked in.
    pub cwd: Option<String>,
    /// Every model that answered, in order of first appearance.
    pub models: Vec<String>,
    /// ISO 8601 timestamps of the first and last timestamped lines.
    pub started: Option<String>,
    pub ended: Option<String>,
    /// Claude Code's `summary` line: a title for the session list (not a compaction).
    pub title: Option<String>,
    pub git_branch: Option<String>,
    /// For a sidechain: the subagent's id.
    pub agent_id: Option<String>,
    /// A Claude Code session without `cwd`: its project folder's name, decoded (`numbers`).
    pub project_folder: Option<String>,
    /// Claude Code's `summary` lines (titles, not compactions).
    pub summary_lines: usize,
    /// How many times a person rewound the conversation (Claude Code): each left a branch
    /// of `MessageKind::Abandoned` messages.
    pub rewinds: usize,
    /// The system prompt the file records (Codex's `base_instructions`), in every call.
    #[serde(skip)]
    pub system_prompt: Option<String>,
}

impl SessionMeta {
    pub(crate) fn saw_timestamp(&mut self, ts: &str) {
        // A value that is not a time (a redaction's `[trimmed]`) is no start or end.
        if !looks_like_time(ts) {
            return;
        }
        if self.started.is_none() {
            self.started = Some(ts.to_string());
        }
        // Lines are written in time order; the last one ends the session.
        self.ended = Some(ts.to_string());
    }

    pub(crate) fn saw_model(&mut self, model: &str) {
        if !self.models.iter().any(|m| m == model) {
            self.models.push(model.to_string());
        }
    }
}

/// Whether a recorded timestamp is an ISO 8601 time (`2025-09-10T18:58:38.331Z`): a date
/// with a time after it.
pub(crate) fn looks_like_time(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(b.get(10), Some(b'T' | b' '))
        && digits(11..13)
}

/// Why a message is in the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// What a person typed, a model's answer, or tool results.
    Conversation,
    /// Context the tool injected (Claude Code's `isMeta` lines, Codex's environment context
    /// and developer instructions): the model saw it, nobody typed it.
    Injected,
    /// The summary message a compaction left (Claude Code's `isCompactSummary` line).
    CompactSummary,
    /// A message of a branch a person rewound past (Claude Code: a later message's
    /// `parentUuid` points back before it). The model saw it while that branch lasted;
    /// the conversation that continued does not hold it, so a replay leaves it out.
    Abandoned,
}

/// Where one message came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageOrigin {
    /// 1-based number of the first line of the file that holds it.
    pub line: usize,
    pub timestamp: Option<String>,
    /// Claude Code's `uuid` of that first line.
    pub uuid: Option<String>,
    pub kind: MessageKind,
}

/// Full compactions replace the history with a summary the agent asked the model for;
/// server compactions replace it with what the provider's server made of it on its own
/// (Codex's `compaction_trigger` answered by a `compaction` item, docs/capture.md); micro
/// compactions clear old tool results in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    Full,
    Server,
    Micro,
}

impl CompactionKind {
    /// Its name as listings and `ctxlab inspect --json` write it.
    pub fn name(self) -> &'static str {
        match self {
            CompactionKind::Full => "full",
            CompactionKind::Server => "server",
            CompactionKind::Micro => "micro",
        }
    }

    /// Whether the history is replaced (full or server), not edited in place (micro).
    pub fn replaces_history(self) -> bool {
        self != CompactionKind::Micro
    }
}

/// What started a recorded compaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Auto,
    Manual,
    Other(String),
}

impl Trigger {
    pub(crate) fn parse(s: &str) -> Trigger {
        match s {
            "auto" => Trigger::Auto,
            "manual" => Trigger::Manual,
            other => Trigger::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Trigger::Auto => "auto",
            Trigger::Manual => "manual",
            Trigger::Other(s) => s,
        }
    }
}

/// The summary a compaction left, as far as the file lets anyone read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "text")]
pub enum Summary {
    Text(String),
    /// The provider returned the summary encrypted (Codex's remote compaction): it exists,
    /// the model read it, and nobody else can.
    Encrypted,
    /// The file marks a compaction but holds no summary for it.
    NotRecorded,
    /// Micro compactions clear results and write no summary.
    None,
}

/// Where a token count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The recording tool wrote it on the compaction itself.
    Recorded,
    /// The prompt size of the last model call before the compaction.
    LastCallBefore,
    /// The prompt size of the first model call after it.
    FirstCallAfter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenCount {
    pub tokens: u64,
    pub source: TokenSource,
}

impl TokenCount {
    /// Whether the count stands in for one the file did not record.
    pub fn is_estimate(&self) -> bool {
        self.source != TokenSource::Recorded
    }

    /// `12,000`, or `~12,000` for an estimate: every view writes a count this way.
    pub fn text(&self) -> String {
        token_text(self.tokens, self.is_estimate())
    }
}

/// `12,000`, or `~12,000` for an estimate: the one writer of a token count.
pub fn token_text(tokens: u64, estimate: bool) -> String {
    let n = crate::util::group_digits(usize::try_from(tokens).unwrap_or(usize::MAX));
    if estimate { format!("~{n}") } else { n }
}

/// A message a compaction kept for the model, and where it sat in the full session when it
/// is a copy of an earlier message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptMessage {
    pub message: Message,
    pub from: Option<usize>,
}

/// A compaction the recording tool performed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    pub kind: CompactionKind,
    /// Index in `Session::messages` where it happened: `messages[..at]` came before it.
    pub at: usize,
    /// 1-based line of the file that records it.
    pub line: usize,
    pub timestamp: Option<String>,
    /// None when the file does not say.
    pub trigger: Option<Trigger>,
    pub tokens_before: Option<TokenCount>,
    pub tokens_after: Option<TokenCount>,
    pub duration_ms: Option<u64>,
    pub summary: Summary,
    /// Index of the summary message in `Session::messages`, when the file holds one.
    pub summary_message: Option<usize>,
    /// What the compaction kept besides the summary, in the order the model saw it; None
    /// when the file does not record it.
    pub kept: Option<Vec<KeptMessage>>,
    /// Micro compactions: the tool results they cleared.
    pub cleared_tool_ids: Vec<String>,
    /// The whole history the compaction handed the model, when the file records it as one
    /// list (Codex's `replacement_history`): `model_view` starts from it.
    pub replacement: Option<Replacement>,
    /// The compaction's own model call, when the file records its usage (Codex's
    /// `token_usage_record` of `compaction_response_id`): what it cost, not context.
    pub own_call: Option<RecordedUsage>,
    /// The sizes of the new history when a numbers-only read (`Detail::Numbers`) counted
    /// it instead of holding `kept` and `replacement`.
    pub counted: Option<super::detail::HistoryCounts>,
}

/// A compaction's new history, in the order the model saw it: the messages it kept (held
/// once, in `Compaction::kept`), the context the harness wrote anew, and the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replacement {
    /// Each message of the new history in order: `Ok(k)` is `kept[k]`, `Err(j)` is `anew[j]`.
    pub order: Vec<Result<usize, usize>>,
    /// The messages not kept from before: re-injected context and the summary.
    pub anew: Vec<Message>,
    /// How many of them the harness wrote anew (developer instructions, environment
    /// context): neither kept from before nor the summary.
    pub reinjected: usize,
    /// Which message of `order` is the summary, when one is.
    pub summary: Option<usize>,
}

impl Compaction {
    /// The new history the model saw after this compaction, in order, when the file
    /// records it as one list (`replacement`).
    pub fn new_history(&self) -> Option<Vec<&Message>> {
        let r = self.replacement.as_ref()?;
        let kept = self.kept.as_deref().unwrap_or(&[]);
        Some(
            r.order
                .iter()
                .filter_map(|slot| match *slot {
                    Ok(k) => kept.get(k).map(|k| &k.message),
                    Err(j) => r.anew.get(j),
                })
                .collect(),
        )
    }
}

impl Compaction {
    pub fn new(kind: CompactionKind, at: usize, line: usize) -> Compaction {
        Compaction {
            kind,
            at,
            line,
            timestamp: None,
            trigger: None,
            tokens_before: None,
            tokens_after: None,
            duration_ms: None,
            summary: if kind == CompactionKind::Micro {
                Summary::None
            } else {
                Summary::NotRecorded
            },
            summary_message: None,
            kept: None,
            cleared_tool_ids: Vec::new(),
            replacement: None,
            own_call: None,
            counted: None,
        }
    }

    /// How many messages the compaction kept besides the summary (None: not recorded),
    /// held or counted: the one figure `inspect`, `watch` and the listings show.
    pub fn kept_messages(&self) -> Option<usize> {
        self.kept
            .as_ref()
            .map(Vec::len)
            .or(self.counted.map(|c| c.kept))
    }

    /// How many messages of the new history the harness wrote anew, held or counted.
    pub fn reinjected_messages(&self) -> Option<usize> {
        self.replacement
            .as_ref()
            .map(|r| r.reinjected)
            .or(self.counted.map(|c| c.reinjected))
    }
}

/// Token usage of one model call, in the Anthropic sense: `input_tokens` excludes the
/// cached parts, which are counted apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecordedUsage {
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub output_tokens: u64,
}

impl RecordedUsage {
    /// The size of the prompt the call sent: its context.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens
    }
}

/// One model call as the file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedCall {
    /// Index of the assistant message it produced, when there is one.
    pub message: Option<usize>,
    pub line: usize,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub usage: RecordedUsage,
    /// The model's context window, when the file records it (Codex does).
    pub context_window: Option<u64>,
}

impl RecordedCall {
    /// The API's count of the prompt this call sent (cache included), when the file
    /// records one: the one figure `inspect --calls`, the workbench and an exported
    /// replay show for a recorded call (a count of 0 is a file that wrote no usage).
    pub fn prompt_tokens(&self) -> Option<u64> {
        let t = self.usage.context_tokens();
        (t > 0).then_some(t)
    }
}

/// Something in the file that could not be used; the rest of the file still loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadWarning {
    /// 1-based line number; 0 for the file as a whole.
    pub line: usize,
    pub message: String,
}

/// A session read from a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    pub format: SessionFormat,
    pub meta: SessionMeta,
    /// The full session in order, including what came before each compaction.
    pub messages: Vec<Message>,
    /// One entry per message.
    pub info: Vec<MessageOrigin>,
    pub compactions: Vec<Compaction>,
    pub calls: Vec<RecordedCall>,
    /// Subagent conversations, each its own session.
    pub sidechains: Vec<Session>,
    pub warnings: Vec<LoadWarning>,
    /// Lines or items the reader passed over, by kind (`line type progress`,
    /// `unknown line type x`, ...): counted, never fatal.
    pub skipped: BTreeMap<String, usize>,
    /// Non-empty lines read.
    pub lines: usize,
    /// A ctxlab recording's events a replay honours (the compact tool, refusals, ...), in
    /// order; empty for the other formats.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<super::recorded_event::RecordedEvent>,
    /// A ctxlab recording's strategy and numbers at its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_config: Option<crate::compact::PipelineConfig>,
    /// A ctxlab recording's stage events that changed the history, in order, each with
    /// the call it ran before; empty for the other formats.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded_stages: Vec<super::recorded_event::RecordedStage>,
    /// What a Claude Code file records of its requests beyond the transcript (the system
    /// prompt and tool schemas of each call, the rendered reminders); empty for the other
    /// formats and for older Claude Code files.
    #[serde(skip)]
    pub request_record: super::claude_requests::RequestRecord,
}

/// Claude Code writes this into a tool result that a micro compaction cleared.
pub const CLEARED_RESULT_TEXT: &str = "[Old tool result content cleared]";

impl Session {
    pub(crate) fn empty(format: SessionFormat) -> Session {
        Session {
            format,
            meta: SessionMeta::default(),
            messages: Vec::new(),
            info: Vec::new(),
            compactions: Vec::new(),
            calls: Vec::new(),
            sidechains: Vec::new(),
            warnings: Vec::new(),
            skipped: BTreeMap::new(),
            lines: 0,
            recorded: Vec::new(),
            recorded_config: None,
            recorded_stages: Vec::new(),
            request_record: Default::default(),
        }
    }

    pub fn tool(&self) -> Tool {
        self.format.tool()
    }

    /// The conversation as the lesson's pipeline replays it: what people typed, the model's
    /// answers and the tool results, without the tool's injected context and without the
    /// recorded compactions' summaries (the replay makes its own).
    pub fn replay_messages(&self) -> Vec<Message> {
        self.messages
            .iter()
            .zip(&self.info)
            .filter(|(_, i)| i.kind == MessageKind::Conversation)
            .map(|(m, _)| m.clone())
            .collect()
    }

    /// `replay_messages` without copying.
    pub fn into_replay_messages(self) -> Vec<Message> {
        if self
            .info
            .iter()
            .all(|i| i.kind == MessageKind::Conversation)
        {
            return self.messages;
        }
        self.messages
            .into_iter()
            .zip(self.info)
            .filter(|(_, i)| i.kind == MessageKind::Conversation)
            .map(|(m, _)| m)
            .collect()
    }

    /// How many messages sit on branches a person rewound past.
    pub fn abandoned_messages(&self) -> usize {
        self.info
            .iter()
            .filter(|i| i.kind == MessageKind::Abandoned)
            .count()
    }

    /// The largest prompt any recorded call sent, in tokens.
    pub fn peak_context_tokens(&self) -> Option<u64> {
        self.calls.iter().map(|c| c.usage.context_tokens()).max()
    }

    /// The context window the file records (the largest, if it changed).
    pub fn context_window(&self) -> Option<u64> {
        self.calls.iter().filter_map(|c| c.context_window).max()
    }

    /// How many `tool_use` blocks are answered by a `tool_result` in the message after them.
    pub fn tool_pairs(&self) -> usize {
        let mut pairs = 0;
        for (i, m) in self.messages.iter().enumerate() {
            let Some(next) = self.messages.get(i + 1) else {
                break;
            };
            for id in m
                .tool_uses()
                .filter_map(|b| b.get("id").and_then(Value::as_str))
            {
                if next
                    .tool_results()
                    .any(|r| r.get("tool_use_id").and_then(Value::as_str) == Some(id))
                {
                    pairs += 1;
                }
            }
        }
        pairs
    }
}
