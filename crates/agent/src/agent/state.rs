//! The agent's setup and its running state: `AgentSetup`, `Agent` and `Stop`, the parts
//! that `turn`, `model_call`, `tools_batch`, `reactive` and `control` each extend with an
//! `impl Agent` block. They live in a leaf of their own so that those siblings import this
//! file instead of each other (no import circle inside `agent/`).

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::events::{AgentEvent, ErrorKind, StepTarget, UserCommand};
use crate::compact::{Pipeline, PipelineConfig};
use crate::message::{Message, ToolSpec};
use crate::provider::Model;
use crate::store::{Store, StoreError};
use crate::tools::{ToolLimits, Workspace};

pub(super) const DEFAULT_MAX_TOKENS: u32 = 8_000;

/// The agent's base instructions; the compaction note is always appended.
pub const BASE_SYSTEM_PROMPT: &str = "You are a coding agent working in a local workspace. Use the tools to inspect and change files and to run commands; keep answers short and factual.";

/// Everything the agent needs that is not a channel.
pub struct AgentSetup {
    pub model: Arc<dyn Model>,
    pub workspace: Workspace,
    pub config: PipelineConfig,
    pub tools: Vec<ToolSpec>,
    pub tool_limits: ToolLimits,
    pub system_prompt: String,
    pub max_tokens: u32,
    pub step_mode: bool,
    /// The model's context window in tokens, when configured (`context_window_tokens`).
    /// Summary requests are sized to fit it; a window the server names in an overflow
    /// error takes over from it.
    pub context_window_tokens: Option<u64>,
    /// Unix seconds for transcript names; a parameter so tests can pin it.
    pub clock: fn() -> u64,
    /// Start inside a turn with this history instead of empty ("continue from call N").
    pub resume: Option<Resume>,
}

/// Where a continued agent starts: the history before an earlier run's call N (its last
/// message the user's), the request that turn works on, and the tool calls made before
/// it, run again first (results dropped) so a fresh workspace holds the files they left.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resume {
    pub history: Vec<Message>,
    pub active_request: String,
    /// (tool name, input), in order; empty: the workspace is used as it is.
    pub rerun_tools: Vec<(String, serde_json::Value)>,
}

impl AgentSetup {
    /// A setup with the defaults: every tool, the base system prompt, step mode off.
    pub fn new(model: Arc<dyn Model>, workspace: Workspace, config: PipelineConfig) -> Self {
        AgentSetup {
            model,
            workspace,
            config,
            tools: crate::tools::tool_specs(),
            tool_limits: ToolLimits::default(),
            system_prompt: BASE_SYSTEM_PROMPT.to_string(),
            max_tokens: DEFAULT_MAX_TOKENS,
            step_mode: false,
            context_window_tokens: None,
            clock: crate::util::unix_now,
            resume: None,
        }
    }
}

/// Why a turn stopped before its natural end.
#[derive(Debug)]
pub(super) enum Stop {
    Cancelled,
    Quit,
    Failed(ErrorKind, String),
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Failed(ErrorKind::Store, e.to_string())
    }
}

/// The running agent. Its parts live in the sibling modules of `agent`, hence the
/// `pub(super)` fields.
pub struct Agent {
    pub(super) setup: AgentSetup,
    pub(super) workspace: Arc<Workspace>,
    pub(super) store: Store,
    pub(super) pipeline: Pipeline,
    pub(super) history: Vec<Message>,
    pub(super) active_request: String,
    /// The active request before the running turn's: restored if the turn's request is
    /// refused as too long on its own (`reactive`).
    pub(super) request_before_turn: String,
    pub(super) events: UnboundedSender<AgentEvent>,
    pub(super) commands: UnboundedReceiver<UserCommand>,
    /// Submits and compacts that arrived while a turn was running.
    pub(super) queued: VecDeque<UserCommand>,
    /// Model answers received so far (summaries excluded); numbers synthetic tool ids.
    pub(super) answers: u64,
    /// The window the server named in its last overflow error (`n_ctx`, `M maximum`).
    pub(super) learned_window_tokens: Option<u64>,
    /// The tail kept by the last reduction without a model in the running turn (or
    /// `/compact`): the next one keeps a shorter one (`compact::summary_refit`).
    pub(super) no_model_tail: Option<usize>,
    /// Step mode's "run to": pauses this target does not stop at go by (until the turn
    /// ends).
    pub(super) run_to: Option<StepTarget>,
    /// The kinds of stage pause shown so far (`control::stop_kind`): running to the next
    /// stage passes a pause of a kind already shown, so `s` stops once per lesson (the
    /// first micro_compact placeholder, not the eighteenth).
    pub(super) stops_seen: std::collections::HashSet<(crate::compact::Stage, usize)>,
    /// Set while a model call is being prepared (its stages, summaries, until its request is
    /// sent) or a compaction runs: a new config then waits in `pending_config`, so a switch
    /// of strategy never lands inside a running pipeline (`control::hold_config`).
    pub(super) config_held: bool,
    pub(super) pending_config: Option<PipelineConfig>,
}
