//! The agent task: the loop of spec section 8 on tokio channels.
//!
//! It owns the history. Before every model call it runs the chosen strategy's stages (for
//! s08: budget, snip, micro and, when over the limit, compact_history); it streams the
//! model's answer, runs the tools the model asked for, and reports every step as an
//! `AgentEvent`. Commands are read while a stream or a tool runs, so Cancel, step mode and
//! config changes (a new strategy included) act at once. Whatever happens, every
//! `tool_use` it appends gets a `tool_result` in the next message.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ErrorKind, NextStep, UserCommand};
use crate::compact::{CompactTrigger, PendingCompaction, Pipeline, PipelineConfig, estimate_size};
use crate::message::{Message, ToolSpec, block, block_type};
use crate::provider::{Model, ModelRequest, ModelResponse, ProviderError, StreamEvent};
use crate::store::{Store, StoreError};
use crate::tools::{ToolLimits, ToolOutcome, Workspace, run_tool};

/// The result text of a `compact` tool call under s08 (spec section 8); each strategy
/// has its own (`Strategy::compact_tool_result`).
pub const COMPACT_TOOL_RESULT: &str = crate::compact::strategy::COMPACT_TOOL_RESULT;
/// The result of a tool call that was never run because the user cancelled.
pub const CANCELLED_RESULT: &str = "Cancelled by user";
const DEFAULT_MAX_TOKENS: u32 = 8_000;

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
    /// Unix seconds for transcript names; a parameter so tests can pin it.
    pub clock: fn() -> u64,
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
            clock: crate::util::unix_now,
        }
    }
}

/// Why a turn stopped before its natural end.
#[derive(Debug)]
enum Stop {
    Cancelled,
    Quit,
    Failed(ErrorKind, String),
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Failed(ErrorKind::Store, e.to_string())
    }
}

fn error_kind(e: &ProviderError) -> ErrorKind {
    match e {
        ProviderError::ContextTooLong { .. } => ErrorKind::ContextTooLong,
        ProviderError::RateLimited { .. } => ErrorKind::RateLimited,
        ProviderError::Overloaded => ErrorKind::Overloaded,
        ProviderError::Server { .. } => ErrorKind::Server,
        ProviderError::Auth { .. } => ErrorKind::Auth,
        ProviderError::BadRequest { .. } => ErrorKind::BadRequest,
        ProviderError::Network { .. } => ErrorKind::Network,
        ProviderError::Timeout => ErrorKind::Timeout,
        ProviderError::StreamCut => ErrorKind::StreamCut,
    }
}

/// The running agent.
pub struct Agent {
    setup: AgentSetup,
    workspace: Arc<Workspace>,
    store: Store,
    pipeline: Pipeline,
    history: Vec<Message>,
    active_request: String,
    events: UnboundedSender<AgentEvent>,
    commands: UnboundedReceiver<UserCommand>,
    /// Submits and compacts that arrived while a turn was running.
    queued: VecDeque<UserCommand>,
}

/// Starts the agent on the current tokio runtime; returns its command sender and events.
pub fn spawn(
    setup: AgentSetup,
) -> (
    UnboundedSender<UserCommand>,
    UnboundedReceiver<AgentEvent>,
    tokio::task::JoinHandle<()>,
) {
    let (cmd_tx, cmd_rx) = unbounded_channel();
    let (ev_tx, ev_rx) = unbounded_channel();
    let agent = Agent::new(setup, ev_tx, cmd_rx);
    let handle = tokio::spawn(agent.run());
    (cmd_tx, ev_rx, handle)
}

impl Agent {
    pub fn new(
        setup: AgentSetup,
        events: UnboundedSender<AgentEvent>,
        commands: UnboundedReceiver<UserCommand>,
    ) -> Agent {
        let store = Store::new(setup.workspace.root());
        let pipeline = Pipeline::new(setup.config);
        let workspace = Arc::new(setup.workspace.clone());
        Agent {
            setup,
            workspace,
            store,
            pipeline,
            history: Vec::new(),
            active_request: String::new(),
            events,
            commands,
            queued: VecDeque::new(),
        }
    }

    fn emit(&self, event: AgentEvent) {
        // A front end that went away is not the agent's failure; it just stops reporting.
        let _ = self.events.send(event);
    }

    fn system_prompt(&self) -> String {
        self.pipeline
            .strategy()
            .system_prompt(&self.setup.system_prompt)
    }

    fn append(&mut self, message: Message) {
        self.emit(AgentEvent::MessageAppended {
            message: message.clone(),
        });
        self.history.push(message);
    }

    /// Handles a command that does not need a turn; returns it back when it does.
    fn apply_setting(&mut self, cmd: UserCommand) -> Option<UserCommand> {
        match cmd {
            UserCommand::SetConfig(config) => {
                self.pipeline.config = config;
                self.emit(AgentEvent::ConfigChanged { config });
                None
            }
            UserCommand::StepMode(on) => {
                self.setup.step_mode = on;
                self.emit(AgentEvent::StepModeChanged { on });
                None
            }
            other => Some(other),
        }
    }

    /// Runs until Quit or until every front end is gone.
    pub async fn run(mut self) {
        self.emit(AgentEvent::Ready {
            provider: self.setup.model.describe(),
            workspace: self.workspace.root().to_path_buf(),
            config: self.pipeline.config,
        });
        loop {
            let cmd = match self.queued.pop_front() {
                Some(c) => c,
                None => match self.commands.recv().await {
                    Some(c) => c,
                    None => return,
                },
            };
            let Some(cmd) = self.apply_setting(cmd) else {
                continue;
            };
            let outcome = match cmd {
                UserCommand::Submit(text) => self.turn(text).await,
                UserCommand::Compact { focus } => self.manual_compact(focus).await,
                UserCommand::Quit => return,
                // Nothing is running: there is nothing to cancel or step past.
                UserCommand::Cancel | UserCommand::Step => continue,
                UserCommand::SetConfig(_) | UserCommand::StepMode(_) => continue,
            };
            if let Err(Stop::Quit) = outcome {
                return;
            }
        }
    }

    /// Reads one command while something runs; settings apply at once, work is queued.
    fn on_command_during_work(&mut self, cmd: Option<UserCommand>) -> Option<Stop> {
        let Some(cmd) = cmd else {
            return Some(Stop::Quit);
        };
        match self.apply_setting(cmd)? {
            UserCommand::Cancel => Some(Stop::Cancelled),
            UserCommand::Quit => Some(Stop::Quit),
            UserCommand::Step => None,
            queued @ (UserCommand::Submit(_) | UserCommand::Compact { .. }) => {
                self.queued.push_back(queued);
                None
            }
            UserCommand::SetConfig(_) | UserCommand::StepMode(_) => None,
        }
    }

    /// In step mode, waits for Step before `next` happens.
    async fn pause(&mut self, next: NextStep) -> Result<(), Stop> {
        if !self.setup.step_mode {
            return Ok(());
        }
        self.emit(AgentEvent::Paused { next });
        loop {
            let cmd = self.commands.recv().await;
            match cmd {
                Some(UserCommand::Step) => return Ok(()),
                Some(UserCommand::StepMode(false)) => {
                    self.apply_setting(UserCommand::StepMode(false));
                    return Ok(());
                }
                other => {
                    if let Some(stop) = self.on_command_during_work(other) {
                        return Err(stop);
                    }
                }
            }
        }
    }

    /// One model call, streaming deltas out as events; Cancel drops the stream.
    async fn call_model(
        &mut self,
        request: ModelRequest,
        forward_text: bool,
    ) -> Result<Result<ModelResponse, ProviderError>, Stop> {
        let model = Arc::clone(&self.setup.model);
        let (tx, mut rx) = unbounded_channel();
        let call = async move { model.stream(&request, &tx).await };
        tokio::pin!(call);
        loop {
            tokio::select! {
                biased;
                Some(ev) = rx.recv() => self.forward(ev, forward_text),
                result = &mut call => {
                    while let Ok(ev) = rx.try_recv() {
                        self.forward(ev, forward_text);
                    }
                    return Ok(result);
                }
                cmd = self.commands.recv() => {
                    if let Some(stop) = self.on_command_during_work(cmd) {
                        return Err(stop);
                    }
                }
            }
        }
    }

    fn forward(&self, ev: StreamEvent, forward_text: bool) {
        match ev {
            StreamEvent::TextDelta(text) if forward_text => {
                self.emit(AgentEvent::TextDelta { text })
            }
            StreamEvent::TextDelta(_) | StreamEvent::ToolUseStarted { .. } => {}
            StreamEvent::Usage(u) => self.emit(AgentEvent::Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }),
            StreamEvent::Retrying {
                attempt,
                reason,
                wait,
            } => self.emit(AgentEvent::Retrying {
                attempt,
                reason,
                wait,
            }),
        }
    }

    /// Runs one tool; Cancel kills it (the tool reports `Cancelled by user`).
    async fn call_tool(&mut self, name: &str, input: &Value) -> (ToolOutcome, Option<Stop>) {
        let token = CancellationToken::new();
        let workspace = Arc::clone(&self.workspace);
        let limits = self.setup.tool_limits.clone();
        let (name, input, tool_token) = (name.to_string(), input.clone(), token.clone());
        let run = async move { run_tool(&workspace, &name, &input, &limits, &tool_token).await };
        tokio::pin!(run);
        let mut stop = None;
        loop {
            tokio::select! {
                outcome = &mut run => return (outcome, stop),
                cmd = self.commands.recv(), if stop.is_none() => {
                    // The tool must see the cancel and kill its processes before we go on,
                    // so the future is awaited to the end rather than dropped.
                    if let Some(s) = self.on_command_during_work(cmd) {
                        stop = Some(s);
                        token.cancel();
                    }
                }
            }
        }
    }

    /// Step 2 of a compaction: ask the model for the summary and install the new history.
    async fn summarize(&mut self, pending: PendingCompaction) -> Result<(), Stop> {
        let request = ModelRequest {
            system: pending.request().system.clone(),
            messages: vec![Message::user_text(pending.request().user_text.clone())],
            tools: Vec::new(),
            max_tokens: u32::try_from(pending.request().max_tokens).unwrap_or(u32::MAX),
        };
        self.emit(AgentEvent::RequestSent {
            estimate_chars: estimate_size(&request.messages),
            messages: 1,
            summary: true,
        });
        let response = self.call_model(request, false).await?;
        let response = response.map_err(|e| {
            Stop::Failed(
                error_kind(&e),
                format!(
                    "the summary request failed: {e}; the transcript was saved to {}",
                    pending.transcript().path
                ),
            )
        })?;
        let texts: Vec<&str> = response
            .content
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let active = self.active_request.clone();
        let (history, report) = pending.finish(&texts, &active);
        self.history = history;
        let snapshot = Arc::new(self.history.clone());
        self.emit(AgentEvent::StageRan {
            report,
            history: Some(Arc::clone(&snapshot)),
        });
        self.emit(AgentEvent::HistoryReplaced {
            history: snapshot,
            messages: self.history.len(),
        });
        Ok(())
    }

    async fn compact_now(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<String>,
    ) -> Result<(), Stop> {
        let stage = self.pipeline.summarizing_stage();
        self.pause(NextStep::Summarize {
            stage,
            messages: self.history.len(),
            size: estimate_size(&self.history),
        })
        .await?;
        let pending = self.pipeline.begin_compact(
            &self.history,
            &self.store,
            focus.as_deref(),
            trigger,
            (self.setup.clock)(),
        )?;
        match pending {
            Some(pending) => self.summarize(pending).await,
            // The strategy found nothing it may summarize (guarded: only unseen results).
            None => Ok(()),
        }
    }

    async fn manual_compact(&mut self, focus: Option<String>) -> Result<(), Stop> {
        let result = if self.history.is_empty() {
            Err(Stop::Failed(
                ErrorKind::Internal,
                "nothing to compact yet".into(),
            ))
        } else {
            self.compact_now(CompactTrigger::Requested, focus).await
        };
        self.finish_turn(result)
    }

    fn finish_turn(&mut self, result: Result<(), Stop>) -> Result<(), Stop> {
        match result {
            Ok(()) => Ok(()),
            Err(Stop::Cancelled) => {
                self.emit(AgentEvent::TurnDone {
                    stop_reason: "cancelled".into(),
                });
                Ok(())
            }
            Err(Stop::Failed(kind, message)) => {
                self.emit(AgentEvent::Error { kind, message });
                self.emit(AgentEvent::TurnDone {
                    stop_reason: "error".into(),
                });
                Ok(())
            }
            Err(Stop::Quit) => Err(Stop::Quit),
        }
    }

    /// The pre-call pipeline (spec section 8), with pauses in step mode.
    async fn pre_call(&mut self) -> Result<(), Stop> {
        for &stage in self.pipeline.stages() {
            if self.setup.step_mode {
                let preview = self
                    .pipeline
                    .preview_stage(stage, &self.history, &self.store)?;
                if preview.changed {
                    self.pause(NextStep::Stage { stage, preview }).await?;
                }
            }
            let report = self
                .pipeline
                .run_stage(stage, &mut self.history, &self.store)?;
            let history = report.changed.then(|| Arc::new(self.history.clone()));
            self.emit(AgentEvent::StageRan { report, history });
        }
        if self.pipeline.over_limit(&self.history) {
            self.compact_now(CompactTrigger::OverLimit, None).await?;
        }
        Ok(())
    }

    async fn turn(&mut self, text: String) -> Result<(), Stop> {
        self.active_request = text.clone();
        self.emit(AgentEvent::TurnStarted {
            request: text.clone(),
        });
        self.append(Message::user_text(text));
        let result = self.turn_loop().await;
        self.finish_turn(result)
    }

    async fn turn_loop(&mut self) -> Result<(), Stop> {
        // Reactive compactions since the last successful call (the strategy allows 0-3).
        let mut reactive_attempts = 0;
        loop {
            self.pre_call().await?;
            let size = estimate_size(&self.history);
            self.pause(NextStep::ModelCall {
                messages: self.history.len(),
                size,
            })
            .await?;
            let request = ModelRequest {
                system: self.system_prompt(),
                messages: self.history.clone(),
                tools: self.pipeline.strategy().tools(&self.setup.tools),
                max_tokens: self.setup.max_tokens,
            };
            self.emit(AgentEvent::RequestSent {
                estimate_chars: size,
                messages: self.history.len(),
                summary: false,
            });
            let response = match self.call_model(request, true).await? {
                Ok(r) => r,
                Err(ProviderError::ContextTooLong { message }) => {
                    let pending = self.pipeline.begin_reactive(
                        &self.history,
                        &self.store,
                        (self.setup.clock)(),
                        reactive_attempts,
                        Some(&message),
                    )?;
                    let Some(pending) = pending else {
                        // No (further) retry in this strategy: the user sees the error.
                        let e = ProviderError::ContextTooLong { message };
                        return Err(Stop::Failed(error_kind(&e), e.to_string()));
                    };
                    reactive_attempts += 1;
                    self.summarize(pending).await?;
                    continue;
                }
                Err(e) => return Err(Stop::Failed(error_kind(&e), e.to_string())),
            };
            reactive_attempts = 0;
            let mut content = response.content;
            if content.is_empty() {
                // The APIs reject an assistant message without content on the next call.
                content.push(block::text("(no content)"));
            }
            let assistant = Message::assistant_blocks(content);
            let uses: Vec<Value> = assistant.tool_uses().cloned().collect();
            self.append(assistant);
            let stop_reason = response.stop_reason.unwrap_or_else(|| "end_turn".into());
            if uses.is_empty() {
                self.emit(AgentEvent::TurnDone { stop_reason });
                return Ok(());
            }
            let (results, compact_focus, interrupted) =
                self.run_tools(&uses, stop_reason == "tool_use").await;
            self.append(Message::user_blocks(results));
            if let Some(stop) = interrupted {
                return Err(stop);
            }
            if stop_reason != "tool_use" {
                self.emit(AgentEvent::TurnDone { stop_reason });
                return Ok(());
            }
            if let Some(focus) = compact_focus {
                self.compact_now(CompactTrigger::Requested, focus).await?;
                if self.pipeline.strategy().compact_ends_turn() {
                    // s06: the compact tool ends the turn once the history is compacted.
                    self.emit(AgentEvent::TurnDone {
                        stop_reason: "compacted".into(),
                    });
                    return Ok(());
                }
            }
        }
    }

    /// Runs every tool_use in order; after a cancel the rest are answered, not run.
    async fn run_tools(
        &mut self,
        uses: &[Value],
        complete: bool,
    ) -> (Vec<Value>, Option<Option<String>>, Option<Stop>) {
        let mut results = Vec::with_capacity(uses.len());
        let mut compact_focus = None;
        let mut interrupted = None;
        for u in uses {
            let id = u
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let name = u
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let input = u.get("input").cloned().unwrap_or(Value::Null);
            if interrupted.is_some() {
                results.push(block::tool_error(id, CANCELLED_RESULT));
                continue;
            }
            if !complete {
                results.push(block::tool_error(
                    id,
                    "Not run: the response ended before the tool call was complete.",
                ));
                continue;
            }
            self.emit(AgentEvent::ToolStarted {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            });
            let started = Instant::now();
            let (outcome, stop) = self.call_tool(&name, &input).await;
            let (text, is_error) = match outcome {
                ToolOutcome::Output { content, is_error } => (content, is_error),
                ToolOutcome::CompactRequested { focus } => {
                    self.emit(AgentEvent::CompactRequested {
                        focus: focus.clone(),
                    });
                    compact_focus = Some(focus);
                    let text = self.pipeline.strategy().compact_tool_result();
                    (text.to_string(), false)
                }
            };
            self.emit(AgentEvent::ToolFinished {
                id: id.clone(),
                name,
                is_error,
                chars: text.chars().count(),
                elapsed: started.elapsed(),
            });
            results.push(if is_error {
                block::tool_error(id, text)
            } else {
                block::tool_result(id, text)
            });
            if stop.is_some() {
                interrupted = stop;
            }
        }
        (results, compact_focus, interrupted)
    }

    /// The history as the agent holds it (for tests and the headless front end).
    pub fn history(&self) -> &[Message] {
        &self.history
    }
}
