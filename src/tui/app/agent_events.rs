//! What each `AgentEvent` does to the view: the mirror grows or is replaced, stage reports
//! become event rows with their diffs, the timeline takes every event, the run state
//! follows the turn, a pause becomes the
//! pause card and highlighted rows, summary calls, refusals and cancels become rows, and
//! stage writes ask for a file listing. Never sends commands back: events only inform.

use super::{App, Effect, EventKind, RunState};
use crate::agent::events::{AgentEvent, StopReason};
use crate::agent::{SummarySizes, answer_cut_text};
use crate::message::Role;

impl App {
    pub(super) fn on_agent(&mut self, ev: AgentEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        // The step this event became in the timeline, if it became one.
        let new_step = self.live_timeline_mut().on_event(&ev);
        self.agent.live_record.on_event(&ev);
        match ev {
            AgentEvent::Ready {
                provider,
                workspace,
                config,
            } => {
                self.agent.provider = provider;
                self.agent.workspace = workspace;
                self.agent.config = config;
                self.config_started(config);
                effects.push(self.refresh_files());
            }
            AgentEvent::TurnStarted { .. } => {
                self.agent.run_state = RunState::Waiting {
                    since: self.screen.tick,
                };
                self.conversation.turn_started();
            }
            AgentEvent::MessageAppended { message } => {
                if message.role_kind() == Role::Assistant {
                    self.conversation.clear_streaming();
                }
                self.append(message);
            }
            AgentEvent::StageRan { report, history } => {
                self.clear_pause();
                let diff = match history {
                    Some(h) if report.changed => {
                        let title = report.summary();
                        Some(self.replace_history(&h, Some(&report), title))
                    }
                    _ => None,
                };
                if !report.files_written.is_empty() {
                    effects.push(self.refresh_files());
                }
                self.push_event(EventKind::Stage {
                    report,
                    diff,
                    step: new_step,
                });
            }
            AgentEvent::HistoryReplaced { history, .. } => {
                if !self.conversation.mirror_equals(&history) {
                    let size_before = self.conversation.chars();
                    let diff = self.replace_history(&history, None, "history replaced".into());
                    self.push_event(EventKind::Replaced {
                        size_before,
                        size_after: self.conversation.chars(),
                        messages: self.conversation.history().len(),
                        diff,
                    });
                }
            }
            AgentEvent::Paused { next } => self.set_pause(next),
            AgentEvent::RequestSent {
                estimate_chars,
                summary,
                request,
                ..
            } => {
                self.clear_pause();
                self.conversation.request_sent(summary, estimate_chars);
                if summary {
                    // Named sizes, so the row agrees with the stage reason's history size.
                    let (chars, history_chars) = match request.as_deref().map(SummarySizes::of) {
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
            // A call's usage follows its `RequestSent`: a summary call's is shown apart, so
            // the gauge's "API" figure is always the main request's.
            AgentEvent::Usage {
                input_tokens: Some(tokens),
                cached_input_tokens,
                ..
            } => {
                if self.conversation.usage(tokens, cached_input_tokens) {
                    self.events.summary_tokens(tokens);
                }
            }
            AgentEvent::Usage { .. } => {}
            AgentEvent::Retrying {
                attempt,
                reason,
                wait,
            } => self.push_event(EventKind::Retry {
                attempt,
                reason,
                wait,
            }),
            AgentEvent::CompactRequested { focus } => {
                self.push_event(EventKind::CompactRequested { focus })
            }
            AgentEvent::PromptTooLong { message, .. } if self.conversation.summary_in_flight() => {
                self.notify(format!("the API refused the summary request: {message}"));
                self.push_event(EventKind::SummaryRefused { message });
            }
            AgentEvent::PromptTooLong { message, .. } => {
                self.notify(format!("the API refused the request: {message}"));
                self.push_event(EventKind::PromptTooLong { message });
            }
            AgentEvent::PaceChanged { pace_ms, applied } => self.notify(if applied {
                format!("pace: {pace_ms} ms between streamed pieces")
            } else {
                "this model streams at its own pace (/pace is for the scripted model)".into()
            }),
            AgentEvent::ConfigChanged { config } => self.config_applied(config),
            AgentEvent::StepModeChanged { on } => self.step_mode_changed(on),
            AgentEvent::Error { kind, message } => {
                self.notify(format!("error: {message}"));
                self.push_event(EventKind::Error { kind, message });
            }
            AgentEvent::AnswerCut { max_tokens, index } => {
                self.notify(answer_cut_text(max_tokens, index));
                self.conversation.answer_was_cut(max_tokens, index);
                self.push_event(EventKind::AnswerCut { max_tokens, index });
            }
            AgentEvent::TurnDone { stop_reason } => {
                self.agent.run_state = RunState::Idle;
                self.conversation.turn_done();
                self.turn_ended();
                if stop_reason == StopReason::Cancelled {
                    self.push_event(EventKind::Cancelled);
                }
            }
        }
        effects
    }
}
