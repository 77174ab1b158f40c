//! The agent task: the loop of docs/pipeline.md "The loop and the compact tool", on tokio
//! channels.
//!
//! It owns the history. Before every model call it runs the chosen strategy's stages (for
//! s08: budget, snip, micro and, when over the limit, compact_history); then it calls the
//! model (`model_call`), runs the tools the model asked for (`tools_batch`) and reports
//! every step as an `AgentEvent`. Commands are read while a stream or a tool runs
//! (`control`), so Cancel, step mode and config changes (a new strategy included) act at
//! once. Whatever happens, every `tool_use` it appends gets a `tool_result` in the next
//! message. It never touches a terminal.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::events::{AgentEvent, ErrorKind, NextStep, StopReason, UserCommand};
use super::model_call::error_kind;
use super::supervise::supervise;
use super::tools_batch::{ToolBatch, prepare_tool_calls};
use crate::compact::report::limit_reason;
use crate::compact::{CompactTrigger, Pipeline, StageReport, compact_reason, estimate_size};
use crate::message::{Message, block};
use crate::provider::{ModelRequest, ProviderError, RequestKind};
use crate::store::Store;

use super::state::Stop;
pub use super::state::{Agent, AgentSetup, BASE_SYSTEM_PROMPT};

/// Starts the agent on the current tokio runtime; returns its command sender and events.
/// The agent runs [`supervise`]d: if it panics, the events end with an `Error` and a
/// `TurnDone { error }` instead of silence. Aborting the handle stops the agent.
pub fn spawn(
    setup: AgentSetup,
) -> (
    UnboundedSender<UserCommand>,
    UnboundedReceiver<AgentEvent>,
    tokio::task::JoinHandle<()>,
) {
    let (cmd_tx, cmd_rx) = unbounded_channel();
    let (ev_tx, ev_rx) = unbounded_channel();
    let agent = Agent::new(setup, ev_tx.clone(), cmd_rx);
    let handle = supervise(agent.run(), ev_tx);
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
            request_before_turn: String::new(),
            events,
            commands,
            queued: VecDeque::new(),
            answers: 0,
            learned_window_tokens: None,
            no_model_tail: None,
            run_to: None,
            stops_seen: Default::default(),
            config_held: false,
            pending_config: None,
        }
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        // A front end that went away is not the agent's failure; it just stops reporting.
        let _ = self.events.send(event);
    }

    fn system_prompt(&self) -> String {
        self.pipeline
            .strategy()
            .system_prompt(&self.setup.system_prompt)
    }

    fn append(&mut self, message: Message) {
        // The second line of defence for keys (README, "Security model"): whatever enters
        // the history (and so the transcripts and persisted outputs) has them replaced.
        let redactions = &self.setup.tool_limits.redactions;
        let message = if redactions.is_empty() {
            message
        } else {
            let mut value = message.into_value();
            redactions.value(&mut value);
            match Message::from_value(value) {
                Ok(m) => m,
                // Redaction only rewrites strings, so the shape stays a message.
                Err(_) => Message::user_text("[message dropped: it could not be redacted]"),
            }
        };
        self.emit(AgentEvent::MessageAppended {
            message: message.clone(),
        });
        self.history.push(message);
    }

    /// Runs until Quit or until every front end is gone.
    pub async fn run(mut self) {
        self.emit(AgentEvent::Ready {
            provider: self.setup.model.describe(),
            workspace: self.workspace.root().to_path_buf(),
            config: self.pipeline.config,
        });
        if self.setup.step_mode {
            // A front end started in step mode learns it from the agent, like any change.
            self.emit(AgentEvent::StepModeChanged { on: true });
        }
        if let Some(resume) = self.setup.resume.take()
            && let Err(Stop::Quit) = self.resume(resume).await
        {
            return;
        }
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
                UserCommand::Cancel | UserCommand::Step | UserCommand::RunTo(_) => continue,
                UserCommand::SetConfig(_) | UserCommand::StepMode(_) | UserCommand::SetPace(_) => {
                    continue;
                }
            };
            if let Err(Stop::Quit) = outcome {
                return;
            }
        }
    }

    async fn compact_now(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<String>,
    ) -> Result<(), Stop> {
        self.hold_config();
        let stage = self.pipeline.summarizing_stage();
        self.pause(NextStep::Summarize {
            stage,
            messages: self.history.len(),
            // The pause says chars; the reason compares in the strategy's unit.
            size: estimate_size(&self.history),
            reason: compact_reason(
                &trigger,
                focus.as_deref(),
                self.pipeline.size(&self.history),
                self.pipeline.config.context_limit,
            ),
            focus: focus.clone(),
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
        self.no_model_tail = None;
        let result = if self.history.is_empty() {
            Err(Stop::Failed(
                ErrorKind::Internal,
                "nothing to compact yet".into(),
            ))
        } else {
            self.compact_now(CompactTrigger::Requested, focus).await
        };
        if result.is_ok() {
            // The work the user asked for is over: front ends go back to idle.
            self.run_to = None;
            self.emit(AgentEvent::TurnDone {
                stop_reason: StopReason::Compacted,
            });
        }
        self.finish_turn(result)
    }

    /// Turns an interruption into the events that end the turn; only Quit goes further.
    fn finish_turn(&mut self, result: Result<(), Stop>) -> Result<(), Stop> {
        // A "run to" that was not reached ends with the turn: the next turn starts paused.
        self.run_to = None;
        self.release_config();
        match result {
            Ok(()) => Ok(()),
            Err(Stop::Cancelled) => {
                self.emit(AgentEvent::TurnDone {
                    stop_reason: StopReason::Cancelled,
                });
                Ok(())
            }
            Err(Stop::Failed(kind, message)) => {
                self.emit(AgentEvent::Error { kind, message });
                self.emit(AgentEvent::TurnDone {
                    stop_reason: StopReason::Error,
                });
                Ok(())
            }
            Err(Stop::Quit) => Err(Stop::Quit),
        }
    }

    /// The pre-call pipeline (docs/pipeline.md "The loop and the compact tool"), with pauses
    /// in step mode.
    async fn pre_call(&mut self) -> Result<(), Stop> {
        self.hold_config();
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
        } else {
            // The summarizing stage did not run: its report says why, like the cheap
            // stages' ("4,465 <= 50,000").
            let size = self.pipeline.size(&self.history);
            self.emit(AgentEvent::StageRan {
                report: StageReport::not_run(
                    self.pipeline.summarizing_stage(),
                    size,
                    self.history.len(),
                    limit_reason(size, self.pipeline.config.context_limit),
                    self.pipeline.unit(),
                ),
                history: None,
            });
        }
        Ok(())
    }

    async fn turn(&mut self, text: String) -> Result<(), Stop> {
        self.no_model_tail = None;
        self.request_before_turn = std::mem::replace(&mut self.active_request, text.clone());
        self.emit(AgentEvent::TurnStarted {
            request: text.clone(),
        });
        self.append(Message::user_text(text));
        let result = self.turn_loop().await;
        self.finish_turn(result)
    }

    /// Pipeline, model call, tools, until the model stops asking for tools.
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
            let request = Arc::new(ModelRequest {
                system: self.system_prompt(),
                messages: self.history.clone(),
                tools: self.pipeline.strategy().tools(&self.setup.tools),
                max_tokens: self.setup.max_tokens,
                kind: RequestKind::Turn,
            });
            let body = Arc::new(self.setup.model.encode(&request));
            self.emit(AgentEvent::RequestSent {
                estimate_chars: size,
                messages: self.history.len(),
                summary: false,
                request: Some(Arc::clone(&request)),
                body: Some(Arc::clone(&body)),
            });
            // This call's stages and request are done: a config that waited applies from
            // the next call.
            self.release_config();
            let response = match self.call_model(request, body, true).await? {
                Ok(r) => r,
                // The strategy decides how many reactive compactions may follow each other
                // (s08: one; s06: none; guarded: up to three, each with a shorter tail);
                // past that, or when a compaction cannot shrink the request, the error goes
                // to the user with the history intact (crates/agent/src/agent/reactive.rs).
                Err(e @ ProviderError::ContextTooLong { .. }) => {
                    if self.no_model_tail.is_some() {
                        // The history was reduced without a model in this turn and is
                        // still refused: a shorter tail, still without a model.
                        self.reduce_again_without_model(&e)?;
                        continue;
                    }
                    self.reactive_compact(&e, reactive_attempts).await?;
                    reactive_attempts += 1;
                    continue;
                }
                Err(e) => return Err(Stop::Failed(error_kind(&e), e.to_string())),
            };
            reactive_attempts = 0;
            self.answers += 1;
            let stop_reason = StopReason::from_model(response.stop_reason.as_deref());
            let mut content = response.content;
            if content.is_empty() {
                // The APIs reject an assistant message without content on the next call.
                content.push(block::text("(no content)"));
            }
            // Before the message is appended: a tool_use without an id gets one here, so the
            // history never holds a tool_use its tool_result cannot name.
            let calls = prepare_tool_calls(&mut content, self.answers);
            self.append(Message::assistant_blocks(content));
            if stop_reason == StopReason::MaxTokens {
                self.emit(AgentEvent::AnswerCut {
                    max_tokens: self.setup.max_tokens,
                    index: self.history.len() - 1,
                });
            }
            if calls.is_empty() {
                self.emit(AgentEvent::TurnDone { stop_reason });
                return Ok(());
            }
            let ToolBatch {
                results,
                compact,
                interrupted,
            } = self
                .run_tools(&calls, stop_reason == StopReason::ToolUse)
                .await;
            self.append(Message::user_blocks(results));
            if let Some(stop) = interrupted {
                return Err(stop);
            }
            if stop_reason != StopReason::ToolUse {
                self.emit(AgentEvent::TurnDone { stop_reason });
                return Ok(());
            }
            // Only after the whole batch's results are in: no tool_result is left behind.
            if let Some(request) = compact {
                self.compact_now(CompactTrigger::Requested, request.focus)
                    .await?;
                if self.pipeline.strategy().compact_ends_turn() {
                    // s06: the compact tool ends the turn once the history is compacted.
                    self.emit(AgentEvent::TurnDone {
                        stop_reason: StopReason::Compacted,
                    });
                    return Ok(());
                }
            }
        }
    }

    /// Continues a turn from an earlier run's history ("continue from call N"): the
    /// workspace is brought to where that run was, front ends get the history, and the
    /// turn goes on with the next model call, under this agent's settings.
    async fn resume(&mut self, resume: super::state::Resume) -> Result<(), Stop> {
        let cancel = tokio_util::sync::CancellationToken::new();
        for (name, input) in &resume.rerun_tools {
            // Their results are in the history already; only their effect on files counts.
            let _ = crate::tools::run_tool(
                &self.workspace,
                name,
                input,
                &self.setup.tool_limits,
                &cancel,
            )
            .await;
        }
        self.history = resume.history;
        self.active_request = resume.active_request;
        self.request_before_turn = self.active_request.clone();
        self.emit(AgentEvent::HistoryReplaced {
            history: Arc::new(self.history.clone()),
            messages: self.history.len(),
        });
        let result = self.turn_loop().await;
        self.finish_turn(result)
    }

    /// The history as the agent holds it (for tests and the headless front end).
    pub fn history(&self) -> &[Message] {
        &self.history
    }
}
