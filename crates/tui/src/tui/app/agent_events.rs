//! What each `AgentEvent` does to the view. The run's fold (`crate::run::Run`) reads the
//! event once; its fact goes to every reader of the run: the timeline, the live record, the
//! mirror (which grows or is replaced, each row keeping its entry's id), the event rows
//! (a stage's row keeps its step's id, with its diff). None reads another's state to learn
//! an id, so the order they take the fact in is free. Events that change no record of the
//! run (streamed text, tool progress, pauses, retries, pace) only move the view. Never sends
//! commands back: events only inform.

use super::{App, Effect, EventKind, RunState};
use crate::agent::events::{AgentEvent, StopReason};
use crate::agent::{SummarySizes, answer_cut_text};
use crate::message::Role;
use crate::run::{CallRef, RunFact};

impl App {
    pub(super) fn on_agent(&mut self, ev: AgentEvent) -> Vec<Effect> {
        let Some(fact) = self.agent.run.on_event(&ev) else {
            self.on_progress(ev);
            return Vec::new();
        };
        self.live_timeline_mut().on_fact(&fact);
        self.agent.live_record.on_fact(&fact);
        self.on_fact(fact)
    }

    /// The conversation's and the event rows' side of a fact, and the view around them.
    fn on_fact(&mut self, fact: RunFact<'_>) -> Vec<Effect> {
        let mut effects = Vec::new();
        match fact {
            RunFact::Started {
                provider,
                workspace,
                config,
            } => {
                self.agent.provider = provider.to_string();
                self.agent.workspace = workspace.to_path_buf();
                self.agent.config = config;
                self.config_started(config);
                effects.push(self.refresh_files());
            }
            RunFact::Turn { .. } => {
                self.agent.run_state = RunState::Waiting {
                    since: self.screen.tick,
                };
                self.conversation.turn_started();
            }
            RunFact::Appended { entry, message, .. } => {
                if message.role_kind() == Role::Assistant {
                    self.conversation.clear_streaming();
                }
                self.append(message.clone(), entry);
            }
            RunFact::Stage {
                step,
                report,
                history,
                ..
            } => {
                self.clear_pause();
                let diff = match history {
                    Some(h) if report.changed => {
                        let title = report.summary();
                        Some(self.replace_history(h, Some(report), title))
                    }
                    _ => None,
                };
                if !report.files_written.is_empty() {
                    effects.push(self.refresh_files());
                }
                self.push_event(EventKind::Stage {
                    report: report.clone(),
                    diff,
                    step: Some(step),
                });
            }
            RunFact::Replaced { history } => {
                if !self.conversation.mirror_equals(history) {
                    let size_before = self.conversation.chars();
                    let messages_before = self.conversation.history().len();
                    let diff = self.replace_history(history, None, "history replaced".into());
                    self.push_event(EventKind::Replaced {
                        size_before,
                        size_after: self.conversation.chars(),
                        messages_before,
                        messages: self.conversation.history().len(),
                        diff,
                    });
                }
            }
            RunFact::Request {
                call,
                estimate_chars,
                request,
                ..
            } => {
                self.clear_pause();
                self.conversation
                    .request_sent(call.is_summary(), estimate_chars);
                if call.is_summary() {
                    // Named sizes, so the row agrees with the stage reason's history size.
                    let (chars, history_chars) = match request.map(|r| SummarySizes::of(r)) {
                        Some(s) => (s.with_instructions, Some(s.history_chars)),
                        None => (estimate_chars, None),
                    };
                    self.push_event(EventKind::SummaryCall {
                        chars,
                        history_chars,
                        input_tokens: None,
                    });
                    self.agent.run_state = RunState::Summarizing {
                        since: self.screen.tick,
                    };
                } else {
                    self.timeline_grew();
                    self.agent.run_state = RunState::Waiting {
                        since: self.screen.tick,
                    };
                }
            }
            // A summary call's usage is shown apart, so the gauge's "API" figure is always
            // the main request's.
            RunFact::Usage {
                call,
                input_tokens: Some(tokens),
                cached_input_tokens,
                ..
            } => {
                if call.is_summary() {
                    self.conversation.summary_usage(tokens);
                    self.events.summary_tokens(tokens);
                } else {
                    self.conversation.call_usage(tokens, cached_input_tokens);
                }
            }
            RunFact::Usage { .. } => {}
            RunFact::CompactTool { focus, .. } => self.push_event(EventKind::CompactRequested {
                focus: focus.map(str::to_string),
            }),
            RunFact::Refused {
                call: CallRef::Summary { .. },
                message,
                ..
            } => {
                self.notify(format!("the API refused the summary request: {message}"));
                self.push_event(EventKind::SummaryRefused {
                    message: message.to_string(),
                });
            }
            RunFact::Refused { message, .. } => {
                self.notify(format!("the API refused the request: {message}"));
                self.push_event(EventKind::PromptTooLong {
                    message: message.to_string(),
                });
            }
            RunFact::Settings { config, from_call } => self.config_applied(config, from_call),
            RunFact::Error { kind, message } => {
                self.notify(format!("error: {message}"));
                self.push_event(EventKind::Error {
                    kind,
                    message: message.to_string(),
                });
            }
            RunFact::AnswerCut { max_tokens, index } => {
                self.notify(answer_cut_text(max_tokens, index));
                self.conversation.answer_was_cut(max_tokens, index);
                self.push_event(EventKind::AnswerCut { max_tokens, index });
            }
            RunFact::TurnDone { stop_reason } => {
                self.agent.run_state = RunState::Idle;
                self.conversation.turn_done();
                self.turn_ended();
                if *stop_reason == StopReason::Cancelled {
                    self.push_event(EventKind::Cancelled);
                }
            }
        }
        effects
    }

    /// An event that changes no record of the run: what the agent is doing right now.
    fn on_progress(&mut self, ev: AgentEvent) {
        match ev {
            AgentEvent::Paused { next } => self.set_pause(next),
            AgentEvent::TextDelta { text } => {
                self.clear_pause();
                self.conversation.stream(&text);
                if !matches!(self.agent.run_state, RunState::Streaming { .. }) {
                    self.agent.run_state = RunState::Streaming {
                        since: self.screen.tick,
                    };
                }
                self.follow_streaming();
            }
            AgentEvent::ToolStarted { name, .. } => {
                self.clear_pause();
                self.agent.run_state = RunState::Tool {
                    name,
                    since: self.screen.tick,
                };
            }
            AgentEvent::ToolFinished { .. } => {
                self.agent.run_state = RunState::Waiting {
                    since: self.screen.tick,
                };
            }
            AgentEvent::Retrying {
                attempt,
                reason,
                wait,
            } => self.push_event(EventKind::Retry {
                attempt,
                reason,
                wait,
            }),
            AgentEvent::PaceChanged { pace_ms, applied } => self.notify(if applied {
                format!("pace: {pace_ms} ms between streamed pieces")
            } else {
                "this model streams at its own pace (/pace is for the scripted model)".into()
            }),
            AgentEvent::StepModeChanged { on } => self.step_mode_changed(on),
            // Every other event is a fact of the run (`on_fact`).
            _ => {}
        }
    }
}
