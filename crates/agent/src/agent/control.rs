//! Commands that arrive while the agent works, and step mode's pauses.
//!
//! Settings (config, step mode, pace) apply at once, except a config that arrives while a
//! model call is prepared or a compaction runs: it waits until that call's request is sent
//! (or the turn ends), so a new strategy never takes over half-way through a pipeline.
//! Cancel and Quit interrupt the work as a `Stop`; a new request or compact is queued for
//! after the turn. In step mode the agent
//! pauses before each stage that changes the history, before compact_history and
//! reactive_compact, before each summary call and before each model call; "run to" skips
//! pauses until one its target stops at. Nothing here calls the model or a tool: the model
//! call and the tool runner ask these functions what a command means for them.

use std::time::Duration;

use super::events::{AgentEvent, NextStep, StepTarget, UserCommand};
use super::state::{Agent, Stop};
use crate::compact::{PipelineConfig, Stage, estimate_size};

impl Agent {
    /// Handles a command that does not need a turn; returns it back when it does.
    pub(super) fn apply_setting(&mut self, cmd: UserCommand) -> Option<UserCommand> {
        match cmd {
            UserCommand::SetConfig(config) => {
                if self.config_held {
                    self.pending_config = Some(config);
                } else {
                    self.apply_config(config);
                }
                None
            }
            UserCommand::StepMode(on) => {
                self.setup.step_mode = on;
                if !on {
                    self.run_to = None;
                }
                self.emit(AgentEvent::StepModeChanged { on });
                None
            }
            UserCommand::SetPace(pace) => {
                let applied = self.setup.model.set_pace(pace);
                self.emit(AgentEvent::PaceChanged {
                    pace_ms: millis(pace),
                    applied,
                });
                None
            }
            other => Some(other),
        }
    }

    /// A new config (a new strategy included) takes over; front ends and the recording
    /// hear it now, so the next model call is the first it applies to.
    fn apply_config(&mut self, config: PipelineConfig) {
        self.pipeline.config = config;
        self.emit(AgentEvent::ConfigChanged { config });
    }

    /// From here until `release_config`, a new config waits: a model call is being
    /// prepared or a compaction runs.
    pub(super) fn hold_config(&mut self) {
        self.config_held = true;
    }

    /// The held part is over: the config that waited (the last one sent) applies now.
    pub(super) fn release_config(&mut self) {
        self.config_held = false;
        if let Some(config) = self.pending_config.take() {
            self.apply_config(config);
        }
    }

    /// Reads one command while something runs; settings apply at once, work is queued.
    /// `None` (every front end gone) is a Quit.
    pub(super) fn on_command_during_work(&mut self, cmd: Option<UserCommand>) -> Option<Stop> {
        let Some(cmd) = cmd else {
            return Some(Stop::Quit);
        };
        match self.apply_setting(cmd)? {
            UserCommand::Cancel => Some(Stop::Cancelled),
            UserCommand::Quit => Some(Stop::Quit),
            // Nothing is paused: a single step has nothing to pass, a target waits for
            // the pauses to come.
            UserCommand::Step => None,
            UserCommand::RunTo(target) => {
                self.run_to = Some(target);
                None
            }
            queued @ (UserCommand::Submit(_) | UserCommand::Compact { .. }) => {
                self.queued.push_back(queued);
                None
            }
            UserCommand::SetConfig(_) | UserCommand::StepMode(_) | UserCommand::SetPace(_) => None,
        }
    }

    /// In step mode, waits for Step (or a "run to") before `next` happens; turning step
    /// mode off also lets it go on. A pending "run to" lets every pause its target does not
    /// stop at go by, and running to a stage also every stage pause of a kind already shown
    /// (`stop_kind`): the tour's eighteen one-result micro_compacts are one stop.
    pub(super) async fn pause(&mut self, next: NextStep) -> Result<(), Stop> {
        if !self.setup.step_mode {
            return Ok(());
        }
        let kind = stop_kind(&next);
        if let Some(target) = self.run_to {
            // Running to a stage: a change of a kind shown before is no new lesson.
            let seen =
                target == StepTarget::Stage && kind.is_some_and(|k| self.stops_seen.contains(&k));
            if !next.stops(target) || seen {
                return Ok(());
            }
            self.run_to = None;
        }
        if let Some(k) = kind {
            self.stops_seen.insert(k);
        }
        self.emit(AgentEvent::Paused { next });
        loop {
            let cmd = self.commands.recv().await;
            match cmd {
                Some(UserCommand::Step) => return Ok(()),
                Some(UserCommand::RunTo(target)) => {
                    self.run_to = Some(target);
                    return Ok(());
                }
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

    /// The API refused the request as too long, in its words: the moment that may trigger
    /// reactive compaction (the strategy decides).
    pub(super) fn prompt_too_long(&mut self, api_message: &str) {
        self.emit(AgentEvent::PromptTooLong {
            message: api_message.to_string(),
            messages: self.history.len(),
            estimate_chars: estimate_size(&self.history),
        });
    }

    /// In step mode, pauses before reactive compaction summarizes the first `replaced`
    /// messages (nothing is written yet: the transcript, then the summary call, follow).
    pub(super) async fn before_reactive(
        &mut self,
        stage: Stage,
        replaced: usize,
        api_message: String,
    ) -> Result<(), Stop> {
        let messages = self.history.len();
        self.pause(NextStep::Reactive {
            stage,
            api_message,
            messages,
            size: estimate_size(&self.history),
            replaced,
            kept: messages.saturating_sub(replaced),
        })
        .await
    }
}

/// A pace in whole milliseconds, for events.
fn millis(pace: Duration) -> u64 {
    u64::try_from(pace.as_millis()).unwrap_or(u64::MAX)
}

/// What makes a stage pause a new lesson: its stage and how many changes it makes (one
/// placeholder, three placeholders, one snipped run). Summaries and reactive compactions
/// always stop (None): each is a lesson of its own.
pub(super) fn stop_kind(next: &NextStep) -> Option<(Stage, usize)> {
    match next {
        NextStep::Stage { stage, preview } => Some((*stage, preview.changes.len())),
        _ => None,
    }
}
