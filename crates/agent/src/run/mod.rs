//! The run model: the agent's event stream folded once (docs/architecture.md, "The run
//! model"). `Run::on_event` is the one place that reads what an `AgentEvent` means for the
//! run: which call a usage or a refusal belongs to (a summary request is no call), which
//! step a stage becomes, which entry an appended message is, which compaction a summary
//! makes, from which call new settings apply. It keeps one small record per id and hands
//! each event on as a `RunFact` carrying those ids; the timeline, the live record, the
//! conversation and the event rows read the facts and refer to each other by id only, so
//! none of them depends on the order in which the others took the event.
//!
//! It holds numbers and ids, never messages (the recorder's task folds the stream too, to
//! number its lines, and must not hold the history); it never draws or writes.

mod fact;
mod ids;
#[cfg(test)]
mod tests;

pub use fact::RunFact;
pub use ids::{CallRef, CompactionId, EntryId, StepId};

use crate::agent::events::AgentEvent;
use crate::compact::{Change, PipelineConfig, Stage};

/// A model call of the conversation (a summary request is not one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRecord {
    /// From 1, as the timeline numbers its calls.
    pub number: usize,
    /// The server's input tokens for it, once reported.
    pub input_tokens: Option<u64>,
    /// The API refused it as too long.
    pub refused: bool,
}

/// A stage that ran, changed or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRecord {
    pub id: StepId,
    pub stage: Stage,
    pub changed: bool,
    /// The call it ran before.
    pub before_call: usize,
    pub compaction: Option<CompactionId>,
}

/// A message appended to the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRecord {
    pub id: EntryId,
    /// The call it was appended before.
    pub before_call: usize,
}

/// A summary the pipeline made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionRecord {
    pub id: CompactionId,
    /// The stage step whose report holds it.
    pub step: StepId,
    pub before_call: usize,
}

/// Where a run starts counting: zero for a new agent; the kept part of an earlier run for
/// "continue from call N", so the continued run's ids go on from the timeline it continues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStart {
    pub calls: usize,
    pub steps: usize,
    pub entries: usize,
    pub compactions: usize,
}

/// The fold and its records, one per id handed out since `start`.
#[derive(Debug, Clone, Default)]
pub struct Run {
    start: RunStart,
    calls: Vec<CallRecord>,
    steps: Vec<StepRecord>,
    entries: Vec<EntryRecord>,
    compactions: Vec<CompactionRecord>,
    /// The request last sent; usage and refusals belong to it.
    last_request: Option<CallRef>,
    /// The settings the agent last said it applies.
    config: Option<PipelineConfig>,
}

impl Run {
    pub fn new() -> Run {
        Run::default()
    }

    /// A run whose ids go on after `start` (a continue keeps that much of the earlier run).
    pub fn continuing(start: RunStart) -> Run {
        Run {
            start,
            ..Run::default()
        }
    }

    /// Calls sent so far.
    pub fn calls_sent(&self) -> usize {
        self.start.calls + self.calls.len()
    }

    /// Stage steps so far.
    pub fn step_count(&self) -> usize {
        self.start.steps + self.steps.len()
    }

    /// Messages appended so far.
    pub fn entry_count(&self) -> usize {
        self.start.entries + self.entries.len()
    }

    /// Compactions so far.
    pub fn compaction_count(&self) -> usize {
        self.start.compactions + self.compactions.len()
    }

    /// The settings the agent last said it applies.
    pub fn config(&self) -> Option<PipelineConfig> {
        self.config
    }

    /// Call `number`, when this run sent it.
    pub fn call(&self, number: usize) -> Option<&CallRecord> {
        number
            .checked_sub(self.start.calls + 1)
            .and_then(|i| self.calls.get(i))
    }

    /// Step `id`, when this run ran it.
    pub fn step(&self, id: StepId) -> Option<&StepRecord> {
        id.index()
            .checked_sub(self.start.steps)
            .and_then(|i| self.steps.get(i))
    }

    /// Entry `id`, when this run appended it.
    pub fn entry(&self, id: EntryId) -> Option<&EntryRecord> {
        id.index()
            .checked_sub(self.start.entries)
            .and_then(|i| self.entries.get(i))
    }

    /// Compaction `id`, when this run made it.
    pub fn compaction(&self, id: CompactionId) -> Option<&CompactionRecord> {
        id.number()
            .checked_sub(self.start.compactions + 1)
            .and_then(|i| self.compactions.get(i))
    }

    /// The request usage and refusals belong to now: the last one sent (call 0 before any).
    fn current_request(&self) -> CallRef {
        self.last_request
            .unwrap_or(CallRef::Call(self.calls_sent()))
    }

    /// Folds one event into the run; returns what it did, with its ids, or None for an event
    /// that changes no record of the run (streamed text, tool progress, pauses, retries,
    /// pace, step mode).
    pub fn on_event<'e>(&mut self, event: &'e AgentEvent) -> Option<RunFact<'e>> {
        let next_call = self.calls_sent() + 1;
        Some(match event {
            AgentEvent::Ready {
                provider,
                workspace,
                config,
            } => {
                self.config = Some(*config);
                RunFact::Started {
                    provider,
                    workspace,
                    config: *config,
                }
            }
            AgentEvent::TurnStarted { request } => RunFact::Turn { request },
            AgentEvent::MessageAppended { message } => {
                let entry = EntryId::new(self.entry_count());
                self.entries.push(EntryRecord {
                    id: entry,
                    before_call: next_call,
                });
                RunFact::Appended {
                    entry,
                    before_call: next_call,
                    message,
                }
            }
            AgentEvent::StageRan { report, history } => {
                let step = StepId::new(self.step_count());
                let summarized = report
                    .changes
                    .iter()
                    .any(|c| matches!(c, Change::Summarized { .. }));
                let compaction = (report.changed && summarized).then(|| {
                    let id = CompactionId::new(self.compaction_count() + 1);
                    self.compactions.push(CompactionRecord {
                        id,
                        step,
                        before_call: next_call,
                    });
                    id
                });
                self.steps.push(StepRecord {
                    id: step,
                    stage: report.stage,
                    changed: report.changed,
                    before_call: next_call,
                    compaction,
                });
                RunFact::Stage {
                    step,
                    before_call: next_call,
                    compaction,
                    report,
                    history: history.as_ref(),
                }
            }
            AgentEvent::HistoryReplaced { history, .. } => RunFact::Replaced { history },
            AgentEvent::RequestSent {
                estimate_chars,
                messages,
                summary,
                request,
                body,
            } => {
                let call = if *summary {
                    CallRef::Summary {
                        after: self.calls_sent(),
                    }
                } else {
                    self.calls.push(CallRecord {
                        number: next_call,
                        input_tokens: None,
                        refused: false,
                    });
                    CallRef::Call(next_call)
                };
                self.last_request = Some(call);
                RunFact::Request {
                    call,
                    estimate_chars: *estimate_chars,
                    messages: *messages,
                    request: request.as_ref(),
                    body: body.as_ref(),
                }
            }
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => {
                let call = self.current_request();
                if let (CallRef::Call(n), Some(t)) = (call, input_tokens)
                    && let Some(c) = self.call_mut(n)
                {
                    c.input_tokens = Some(*t);
                }
                RunFact::Usage {
                    call,
                    input_tokens: *input_tokens,
                    output_tokens: *output_tokens,
                    cached_input_tokens: *cached_input_tokens,
                }
            }
            AgentEvent::CompactRequested { focus } => RunFact::CompactTool {
                call: self.calls_sent(),
                focus: focus.as_deref(),
            },
            AgentEvent::PromptTooLong {
                message,
                messages,
                estimate_chars,
            } => {
                let call = self.current_request();
                if let CallRef::Call(n) = call
                    && let Some(c) = self.call_mut(n)
                {
                    c.refused = true;
                }
                RunFact::Refused {
                    call,
                    message,
                    messages: *messages,
                    estimate_chars: *estimate_chars,
                }
            }
            AgentEvent::ConfigChanged { config } => {
                self.config = Some(*config);
                // The agent applies settings between calls: the next one is the first.
                RunFact::Settings {
                    config: *config,
                    from_call: next_call,
                }
            }
            AgentEvent::Error { kind, message } => RunFact::Error {
                kind: *kind,
                message,
            },
            AgentEvent::AnswerCut { max_tokens, index } => RunFact::AnswerCut {
                max_tokens: *max_tokens,
                index: *index,
            },
            AgentEvent::TurnDone { stop_reason } => RunFact::TurnDone { stop_reason },
            AgentEvent::Paused { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ToolStarted { .. }
            | AgentEvent::ToolFinished { .. }
            | AgentEvent::Retrying { .. }
            | AgentEvent::PaceChanged { .. }
            | AgentEvent::StepModeChanged { .. } => return None,
        })
    }

    fn call_mut(&mut self, number: usize) -> Option<&mut CallRecord> {
        number
            .checked_sub(self.start.calls + 1)
            .and_then(|i| self.calls.get_mut(i))
    }
}
