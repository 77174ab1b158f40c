//! What each `AgentEvent` does to the view: the mirror grows or is replaced, stage reports
//! become event rows with their diffs, the run state follows the turn, and stage writes ask
//! for a file listing. Never sends commands back: events only inform.

use super::{App, Effect, EventKind, RunState};
use crate::agent::events::AgentEvent;

impl App {
    pub(super) fn on_agent(&mut self, ev: AgentEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        match ev {
            AgentEvent::Ready {
                provider,
                workspace,
                config,
            } => {
                self.provider = provider;
                self.workspace = workspace;
                self.config = config;
                effects.push(self.refresh_files());
            }
            AgentEvent::TurnStarted { .. } => {
                self.run_state = RunState::Waiting { since: self.tick };
                self.streaming.clear();
            }
            AgentEvent::MessageAppended { message } => {
                if message.role() == "assistant" {
                    self.streaming.clear();
                }
                self.append(message);
            }
            AgentEvent::StageRan { report, history } => {
                self.paused = None;
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
                self.push_event(EventKind::Stage { report, diff });
            }
            AgentEvent::HistoryReplaced { history, .. } => {
                if !self.mirror_equals(&history) {
                    let size_before = self.history_chars;
                    let diff = self.replace_history(&history, None, "history replaced".into());
                    self.push_event(EventKind::Replaced {
                        size_before,
                        size_after: self.history_chars,
                        messages: self.history.len(),
                        diff,
                    });
                }
            }
            AgentEvent::Paused { next } => self.paused = Some(next.describe()),
            AgentEvent::RequestSent {
                estimate_chars,
                summary,
                ..
            } => {
                self.paused = None;
                if !summary {
                    self.request_sizes.push(estimate_chars as u64);
                }
                self.run_state = RunState::Waiting { since: self.tick };
            }
            AgentEvent::TextDelta { text } => {
                self.paused = None;
                self.streaming.push_str(&text);
                if !matches!(self.run_state, RunState::Streaming { .. }) {
                    self.run_state = RunState::Streaming { since: self.tick };
                }
                self.follow_streaming();
            }
            AgentEvent::ToolStarted { name, .. } => {
                self.paused = None;
                self.run_state = RunState::Tool {
                    name,
                    since: self.tick,
                };
            }
            AgentEvent::ToolFinished { .. } => {
                self.run_state = RunState::Waiting { since: self.tick };
            }
            AgentEvent::Usage {
                input_tokens,
                cached_input_tokens,
                ..
            } => {
                if input_tokens.is_some() {
                    self.api_input_tokens = input_tokens;
                    self.api_cached_tokens = cached_input_tokens;
                }
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
            AgentEvent::CompactRequested { focus } => {
                self.push_event(EventKind::CompactRequested { focus })
            }
            AgentEvent::ConfigChanged { config } => self.config = config,
            AgentEvent::StepModeChanged { on } => {
                self.step_mode = on;
                if !on {
                    self.paused = None;
                }
            }
            AgentEvent::Error { kind, message } => {
                self.notify(format!("error: {message}"));
                self.push_event(EventKind::Error { kind, message });
            }
            AgentEvent::TurnDone { .. } => {
                self.run_state = RunState::Idle;
                self.paused = None;
                self.streaming.clear();
            }
        }
        effects
    }
}
