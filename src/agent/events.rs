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
    Quit,
}

/// What the agent is about to do when it pauses in step mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NextStep {
    /// A stage that would change the history, with what it would do.
    Stage { stage: Stage, preview: StageReport },
    /// compact_history is due (the summary is requested next).
    Summarize {
        stage: Stage,
        messages: usize,
        size: usize,
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
            } => format!(
                "next: {} will summarize {messages} messages ({size} chars)",
                stage.name()
            ),
            NextStep::ModelCall { messages, size } => {
                format!("next: model call with {messages} messages ({size} chars)")
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
    /// A request went to the model (`summary` for a summarizer call).
    RequestSent {
        estimate_chars: usize,
        messages: usize,
        summary: bool,
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
    Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
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
    /// The turn ended (`stop_reason` from the model, or `cancelled` / `error`).
    TurnDone {
        stop_reason: String,
    },
}
