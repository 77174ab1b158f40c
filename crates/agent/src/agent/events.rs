//! The agent's protocol: `UserCommand`s in, `AgentEvent`s out.
//!
//! The TUI and `ctxlab run` are two consumers of this one stream; nothing else crosses
//! between the agent task and a front end. Events carry copies (or shared `Arc`s) of what
//! changed, so a front end can mirror the history without ever asking the agent.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::compact::{PipelineConfig, Stage, StageReport};
use crate::message::Message;
use crate::provider::{ModelRequest, SentRequest};
use crate::util::{group_digits, plural};

/// What a front end asks of the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum UserCommand {
    /// A new request typed by the user; becomes the `active_request`.
    Submit(String),
    /// Compact the history now (`/compact [focus]`).
    Compact {
        focus: Option<String>,
    },
    /// Stop the running stream or tool; the history stays valid.
    Cancel,
    /// New thresholds, applied from the next model call.
    SetConfig(PipelineConfig),
    /// Pause before each stage that would change the history and before each model call.
    StepMode(bool),
    /// Continue past the current pause.
    Step,
    /// Continue past the current pause and the ones after it until one `target` stops at
    /// (step mode). Sent while nothing is paused, it applies to the pauses to come.
    RunTo(StepTarget),
    /// The pause between a playing model's streamed deltas (the scripted model), live.
    SetPace(Duration),
    Quit,
}

/// Where "run to" stops in step mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepTarget {
    /// The next stage that changes something (a cheap stage, compact_history or
    /// reactive_compact).
    Stage,
    /// The next model call (the main call or a summary call).
    ModelCall,
}

/// What the agent is about to do when it pauses in step mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NextStep {
    /// A stage that would change the history, with what it would do.
    Stage { stage: Stage, preview: StageReport },
    /// compact_history is due: the transcript is written and the summary requested next.
    /// `reason` is the report's reason (`96,266 > 50,000`, `requested, focus: ...`).
    Summarize {
        stage: Stage,
        messages: usize,
        size: usize,
        reason: String,
        focus: Option<String>,
    },
    /// The API said the prompt is too long (`api_message`, its words): reactive_compact
    /// summarizes the first `replaced` messages, keeps the last `kept`, and retries.
    Reactive {
        stage: Stage,
        api_message: String,
        messages: usize,
        size: usize,
        replaced: usize,
        kept: usize,
    },
    /// The summary request of `stage` goes to the model next: the history's first
    /// `replaced` messages as one message of `chars` chars; the transcript is saved.
    SummaryCall {
        stage: Stage,
        replaced: usize,
        chars: usize,
        focus: Option<String>,
        transcript: String,
    },
    /// The model call, with the request's size.
    ModelCall { messages: usize, size: usize },
}

impl NextStep {
    /// The status bar's sentence: "next: micro_compact will replace 2 results".
    pub fn describe(&self) -> String {
        match self {
            NextStep::Stage { preview, .. } => format!("next: {}", preview.summary()),
            NextStep::Summarize {
                stage,
                messages,
                size,
                reason,
                ..
            } => format!(
                "next: {} will summarize {} ({} chars): {reason}",
                stage.name(),
                plural(*messages, "message"),
                group_digits(*size)
            ),
            NextStep::Reactive {
                stage,
                api_message,
                replaced,
                kept,
                ..
            } => format!(
                "next: {} (the API said: {api_message}) will summarize {}, keep the last {kept}",
                stage.name(),
                plural(*replaced, "message")
            ),
            NextStep::SummaryCall {
                stage,
                replaced,
                chars,
                focus,
                ..
            } => {
                let mut s = format!(
                    "next: summary call for {}: {} as {} chars",
                    stage.name(),
                    plural(*replaced, "message"),
                    group_digits(*chars)
                );
                if let Some(f) = focus {
                    s.push_str(&format!(", focus: {f}"));
                }
                s
            }
            NextStep::ModelCall { messages, size } => {
                format!(
                    "next: model call with {} ({} chars)",
                    plural(*messages, "message"),
                    group_digits(*size)
                )
            }
        }
    }

    /// Whether running to `target` stops at this pause.
    pub fn stops(&self, target: StepTarget) -> bool {
        match target {
            StepTarget::Stage => matches!(
                self,
                NextStep::Stage { .. } | NextStep::Summarize { .. } | NextStep::Reactive { .. }
            ),
            StepTarget::ModelCall => {
                matches!(
                    self,
                    NextStep::ModelCall { .. } | NextStep::SummaryCall { .. }
                )
            }
        }
    }
}

/// The kind of a failure the user sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    ContextTooLong,
    RateLimited,
    Overloaded,
    Server,
    Auth,
    BadRequest,
    Network,
    Timeout,
    StreamCut,
    Store,
    Internal,
}

/// Everything the agent reports.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// Sent once at start.
    Ready {
        provider: String,
        workspace: PathBuf,
        config: PipelineConfig,
    },
    TurnStarted {
        request: String,
    },
    /// A message was appended to the history (user input, assistant reply, tool results).
    MessageAppended {
        message: Message,
    },
    /// A stage ran (changed or not). `history` is the history after it, when it changed.
    StageRan {
        report: StageReport,
        #[serde(skip)]
        history: Option<Arc<Vec<Message>>>,
    },
    /// The history was replaced wholesale (compaction, cancel repair).
    HistoryReplaced {
        #[serde(skip)]
        history: Arc<Vec<Message>>,
        messages: usize,
    },
    Paused {
        next: NextStep,
    },
    /// A request went to the model (`summary` for a summarizer call). `request` is the
    /// request, shared (no copy); `body` is it as the model received it, encoded once by
    /// the provider (the wire bytes of an HTTP provider): the timeline shows that.
    RequestSent {
        estimate_chars: usize,
        messages: usize,
        summary: bool,
        #[serde(skip)]
        request: Option<Arc<ModelRequest>>,
        #[serde(skip)]
        body: Option<Arc<SentRequest>>,
    },
    TextDelta {
        text: String,
    },
    ToolStarted {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    ToolFinished {
        id: String,
        name: String,
        is_error: bool,
        chars: usize,
        elapsed: Duration,
    },
    /// Token counts the server reported. `input_tokens` is the whole prompt, cached part
    /// included; `cached_input_tokens` is the share served from its prompt cache.
    Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        cached_input_tokens: Option<u64>,
    },
    Retrying {
        attempt: u32,
        reason: String,
        wait: Duration,
    },
    /// The model called the `compact` tool.
    CompactRequested {
        focus: Option<String>,
    },
    /// The API refused the request of `messages` messages (`estimate_chars` chars) as too
    /// long, in its own words; reactive_compact follows (or an error, on a second refusal).
    PromptTooLong {
        message: String,
        messages: usize,
        estimate_chars: usize,
    },
    /// `SetPace` was handled: `applied` is false when the model plays at no pace.
    PaceChanged {
        pace_ms: u64,
        applied: bool,
    },
    ConfigChanged {
        config: PipelineConfig,
    },
    StepModeChanged {
        on: bool,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    /// The model's answer stopped at its output limit (`finish_reason: "length"`,
    /// `stop_reason: "max_tokens"`): the message at `index` in the history may be cut short.
    AnswerCut {
        max_tokens: u32,
        index: usize,
    },
    /// The turn ended: the model's reason, or `cancelled` / `error`.
    TurnDone {
        stop_reason: StopReason,
    },
}

/// What every front end says about an answer cut at its output limit (`AnswerCut`). The
/// message is numbered from 0, as every view numbers messages (docs/architecture.md).
pub fn answer_cut_text(max_tokens: u32, index: usize) -> String {
    format!(
        "answer cut at max_tokens: {} (message {index}: it may be incomplete)",
        group_digits(usize::try_from(max_tokens).unwrap_or(usize::MAX)),
    )
}

/// A summary request's sizes: the history text it holds (the number a stage's reason gives
/// when it cuts the input) and the request with the instructions, in chars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummarySizes {
    pub history_chars: usize,
    pub with_instructions: usize,
}

impl SummarySizes {
    pub fn of(request: &ModelRequest) -> SummarySizes {
        let history_chars = request
            .messages
            .iter()
            .filter_map(Message::text)
            .map(|t| t.chars().count())
            .sum();
        SummarySizes {
            history_chars,
            with_instructions: history_chars + request.system.chars().count(),
        }
    }

    /// `4,005 chars of history, 4,260 with the instructions`, as every front end says it.
    pub fn text(&self) -> String {
        format!(
            "{} chars of history, {} with the instructions",
            group_digits(self.history_chars),
            group_digits(self.with_instructions)
        )
    }
}

/// What every front end says about a retry (`Retrying`): `attempt 2 in 1.5s: reason`,
/// `attempt` counting the first try as 1, so the workbench and `ctxlab run` agree.
pub fn retry_text(attempt: u32, wait: Duration, reason: &str) -> String {
    format!("attempt {attempt} in {:.1}s: {reason}", wait.as_secs_f64())
}

/// Why a turn ended: the model's own reason, or the agent's (`Cancelled`, `Error`,
/// `Compacted`).
///
/// Serialized as the snake_case word the Anthropic Messages API uses (`"end_turn"`), so
/// `ctxlab run --json` prints the same strings it always did; a reason ctxlab does not know
/// is kept as the provider sent it (`Other`), never dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model called tools and waits for their results.
    ToolUse,
    /// The answer hit `max_tokens`.
    MaxTokens,
    StopSequence,
    /// Anthropic paused a long-running turn; the agent treats it as the end of the turn.
    PauseTurn,
    Refusal,
    /// The user cancelled the turn.
    Cancelled,
    /// The history was compacted and no model answer follows: the compact tool ended the
    /// turn (s06), or a compaction the user asked for (`/compact`) finished.
    Compacted,
    /// The turn failed; an `AgentEvent::Error` said why.
    Error,
    /// A reason the provider gave that ctxlab has no name for.
    Other(String),
}

impl StopReason {
    /// Reads the stop reason of a model response. A response without one counts as
    /// `EndTurn`; the agent's own words (`cancelled`, `error`, `compacted`) coming from a
    /// model are not the agent's verdict, so they stay `Other`.
    pub fn from_model(reason: Option<&str>) -> StopReason {
        match reason {
            None => StopReason::EndTurn,
            Some(word @ ("cancelled" | "compacted" | "error")) => {
                StopReason::Other(word.to_string())
            }
            Some(word) => StopReason::from(word),
        }
    }

    /// The snake_case word, as serialized.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
            StopReason::Compacted => "compacted",
            StopReason::Error => "error",
            StopReason::Other(word) => word,
        }
    }
}

/// The inverse of [`StopReason::as_str`]: every word names its variant, any other is `Other`.
impl From<&str> for StopReason {
    fn from(word: &str) -> StopReason {
        match word {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "pause_turn" => StopReason::PauseTurn,
            "refusal" => StopReason::Refusal,
            "cancelled" => StopReason::Cancelled,
            "compacted" => StopReason::Compacted,
            "error" => StopReason::Error,
            other => StopReason::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Lets a test or a front end compare with the serialized word: `reason == "end_turn"`.
impl PartialEq<str> for StopReason {
    fn eq(&self, word: &str) -> bool {
        self.as_str() == word
    }
}

impl PartialEq<&str> for StopReason {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_reason_round_trips_through_its_word() {
        let named = [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::StopSequence,
            StopReason::PauseTurn,
            StopReason::Refusal,
            StopReason::Cancelled,
            StopReason::Compacted,
            StopReason::Error,
        ];
        for reason in named {
            assert_eq!(StopReason::from(reason.as_str()), reason);
        }
        assert_eq!(
            StopReason::from("content_filter"),
            StopReason::Other("content_filter".into())
        );
    }

    #[test]
    fn a_model_reason_is_read_without_taking_the_agents_words() {
        assert_eq!(StopReason::from_model(None), StopReason::EndTurn);
        assert_eq!(
            StopReason::from_model(Some("tool_use")),
            StopReason::ToolUse
        );
        assert_eq!(
            StopReason::from_model(Some("error")),
            StopReason::Other("error".into())
        );
        assert_eq!(StopReason::from_model(Some("refusal")), StopReason::Refusal);
        assert_eq!(
            StopReason::from_model(Some("compacted")),
            StopReason::Other("compacted".into())
        );
    }

    #[test]
    fn turn_done_serializes_the_reason_as_its_snake_case_word() {
        let done =
            |stop_reason| serde_json::to_value(AgentEvent::TurnDone { stop_reason }).unwrap();
        assert_eq!(
            done(StopReason::EndTurn),
            serde_json::json!({"event": "turn_done", "stop_reason": "end_turn"})
        );
        assert_eq!(done(StopReason::Cancelled)["stop_reason"], "cancelled");
        assert_eq!(
            done(StopReason::Other("content_filter".into()))["stop_reason"],
            "content_filter"
        );
    }
}
