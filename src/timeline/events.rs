//! The two sources of a timeline's facts: the agent's event stream (`on_event`) and a
//! replay of a recorded session through the one replay loop (`from_replay`). Both feed the
//! same builder methods, so a live session and a replayed one give the same kind of model.

use super::{Source, Timeline};
use crate::agent::events::AgentEvent;
use crate::message::Message;
use crate::pipeline_replay::{ReplayOptions, ReplayStep, ReplayTotals, replay_steps};
use crate::store::{Store, StoreError};

impl Timeline {
    /// Takes one agent event; events that say nothing about the history are ignored.
    pub fn on_event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Ready { config, .. } | AgentEvent::ConfigChanged { config } => {
                self.context_limit = config.context_limit;
                self.unit = config.strategy.unit();
            }
            AgentEvent::MessageAppended { message } => self.appended(message.clone()),
            AgentEvent::StageRan { report, history } => {
                self.stage_ran(report.clone(), history.as_deref().map(Vec::as_slice))
            }
            AgentEvent::HistoryReplaced { history, .. } => self.history_replaced(history),
            AgentEvent::RequestSent {
                summary,
                request,
                body,
                ..
            } => {
                self.request_sent(request.as_deref(), *summary);
                if let (false, Some(body)) = (*summary, body) {
                    self.body_sent(std::sync::Arc::clone(body));
                }
            }
            AgentEvent::Usage { input_tokens, .. } => self.usage(*input_tokens),
            AgentEvent::PromptTooLong { .. } => self.refused(),
            _ => {}
        }
    }

    /// Replays `session` (a recorded conversation) through the pipeline with `options`
    /// and builds its timeline. `store` decides file names; give it a dry-run store to
    /// write nothing.
    pub fn from_replay(
        name: &str,
        session: Vec<Message>,
        store: &Store,
        options: &ReplayOptions,
    ) -> Result<(Timeline, ReplayTotals), StoreError> {
        let mut timeline = Timeline::new(
            Source::Replay {
                name: name.to_string(),
            },
            options.config.context_limit,
        );
        timeline.unit = options.config.strategy.unit();
        let totals = replay_steps(session, store, options, |step| match step {
            ReplayStep::Appended(m) => timeline.appended(m.clone()),
            ReplayStep::Stage { report, history } => {
                timeline.stage_ran(report.clone(), report.changed.then_some(history))
            }
            ReplayStep::Call { record, .. } => {
                timeline.request_sent(None, false);
                // A recording's refused call is marked as the live run marked it.
                if record.refused.is_some() {
                    timeline.refused();
                }
            }
        })?;
        Ok((timeline, totals))
    }
}
