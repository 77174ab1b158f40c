//! The two sources of a timeline's facts: the run's facts (`on_fact`, the agent's stream as
//! `crate::run::Run` folded it) and a replay of a recorded session through the one replay
//! loop (`from_replay`). Both feed the same builder methods, so a live session and a
//! replayed one give the same kind of model.

use super::recorded::LiveRun;
use super::{Source, Timeline};
use crate::agent::events::AgentEvent;
use crate::message::Message;
use crate::pipeline_replay::{ReplayOptions, ReplayStep, ReplayTotals, replay_steps};
use crate::run::{CallRef, Run, RunFact};
use crate::session::recorded_run::RecordedRun;
use crate::store::{Store, StoreError};

impl Timeline {
    /// Takes one fact of the run; facts that say nothing about the history are ignored.
    /// The ids are the run's: a stage becomes the step the fact names (`Timeline::step`).
    pub fn on_fact(&mut self, fact: &RunFact<'_>) {
        match *fact {
            RunFact::Started { config, .. } | RunFact::Settings { config, .. } => {
                self.settings_from_next_call(Some(config.strategy), config.context_limit);
            }
            RunFact::Appended { message, .. } => self.appended(message.clone()),
            RunFact::Stage {
                report, history, ..
            } => {
                self.stage_ran(report.clone(), history.map(|h| h.as_slice()));
            }
            RunFact::Replaced { history } => self.history_replaced(history),
            // A summary request, its usage and its refusal are its stage's, not a call's.
            RunFact::Request {
                call: CallRef::Call(_),
                request,
                body,
                ..
            } => {
                self.request_sent(request.map(|r| &**r));
                if let Some(body) = body {
                    self.body_sent(std::sync::Arc::clone(body));
                }
            }
            RunFact::Usage {
                call: CallRef::Call(n),
                input_tokens,
                ..
            } => self.usage(n, input_tokens),
            RunFact::Refused {
                call: CallRef::Call(n),
                message,
                ..
            } => self.refused(n, message),
            _ => {}
        }
    }

    /// The timeline of a whole event stream (`ctxlab export`, tests): the stream folded by a
    /// run of its own, each fact taken as the workbench takes it.
    pub fn from_events<'e>(
        source: Source,
        context_limit: usize,
        events: impl IntoIterator<Item = &'e AgentEvent>,
    ) -> Timeline {
        let mut timeline = Timeline::new(source, context_limit);
        let mut run = Run::new();
        for event in events {
            if let Some(fact) = run.on_event(event) {
                timeline.on_fact(&fact);
            }
        }
        timeline
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
        Timeline::from_recorded_replay(name, session, None, store, options)
    }

    /// `from_replay` of a session file that recorded its live run (`RecordedRun`): each
    /// call also gets the recorded input tokens of the live run's call that produced the
    /// same answer, and the timeline keeps the recorded stage events and compactions
    /// beside its own (`recorded::LiveRun`).
    pub fn from_recorded_replay(
        name: &str,
        session: Vec<Message>,
        recorded: Option<&RecordedRun>,
        store: &Store,
        options: &ReplayOptions,
    ) -> Result<(Timeline, ReplayTotals), StoreError> {
        let mut timeline = Timeline::new(
            Source::Replay {
                name: name.to_string(),
            },
            options.config.context_limit,
        );
        timeline
            .settings_from_next_call(Some(options.config.strategy), options.config.context_limit);
        // Messages entered so far: a call is made just before its answer enters, so this
        // is the index of the answer it produces.
        let mut entered = 0usize;
        let totals = replay_steps(session, store, options, |step| match step {
            ReplayStep::Appended(m) => {
                entered += 1;
                timeline.appended(m.clone());
            }
            ReplayStep::Stage { report, history } => {
                timeline.stage_ran(report.clone(), report.changed.then_some(history));
            }
            ReplayStep::Call { record, .. } => {
                timeline.request_sent(None);
                // A recording's refused call is marked as the live run marked it.
                if let Some(words) = &record.refused {
                    timeline.refused(timeline.calls.len(), words);
                } else if let (Some(run), Some(c)) = (recorded, timeline.calls.last_mut()) {
                    c.live_input_tokens = run.input_tokens_for(entered);
                }
            }
        })?;
        if let Some(run) = recorded.filter(|r| !r.is_empty()) {
            timeline.live_run = Some(Box::new(LiveRun::new(
                run.clone(),
                options.config,
                &totals.not_applied,
                &timeline.steps,
            )));
        }
        Ok((timeline, totals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::{Stage, StageReport};
    use crate::run::StepId;

    fn stage(stage: Stage, size: usize) -> AgentEvent {
        AgentEvent::StageRan {
            report: StageReport::unchanged(stage, size, 1),
            history: None,
        }
    }

    /// Each stage's fact names the step it becomes in the timeline, whatever the events
    /// between them (a summary call, usage, appends) did or did not add: a consumer keys its
    /// rows by that id instead of counting steps before and after.
    #[test]
    fn a_stage_fact_names_its_own_step() {
        let mut t = Timeline::new(Source::Live, 1_000);
        let mut run = Run::new();
        let ignored = [
            AgentEvent::MessageAppended {
                message: Message::user_text("hello"),
            },
            AgentEvent::RequestSent {
                estimate_chars: 10,
                messages: 1,
                summary: true,
                request: None,
                body: None,
            },
            AgentEvent::Usage {
                input_tokens: Some(5),
                output_tokens: None,
                cached_input_tokens: None,
            },
        ];
        let mut take = |ev: &AgentEvent| -> Option<StepId> {
            let fact = run.on_event(ev)?;
            t.on_fact(&fact);
            match fact {
                RunFact::Stage { step, .. } => Some(step),
                _ => None,
            }
        };
        for ev in &ignored {
            assert_eq!(take(ev), None, "{ev:?} adds no step");
        }
        let first = take(&stage(Stage::MicroCompact, 111));
        for ev in &ignored {
            assert_eq!(take(ev), None);
        }
        let second = take(&stage(Stage::CompactHistory, 222));
        let (Some(first), Some(second)) = (first, second) else {
            panic!("both stages became steps: {first:?} {second:?}");
        };
        assert_ne!(first, second);
        let report = |id| t.step(id).map(|s| (s.report.stage, s.report.size_before));
        assert_eq!(report(first), Some((Stage::MicroCompact, 111)));
        assert_eq!(report(second), Some((Stage::CompactHistory, 222)));
        let ids: Vec<StepId> = t.steps_by_id().map(|(id, _)| id).collect();
        assert_eq!(ids, vec![first, second]);
    }
}
