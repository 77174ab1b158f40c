//! Commands that arrive while the agent works, and step mode's pauses.
//!
//! Settings (config, step mode) apply at once; Cancel and Quit interrupt the work as a
//! `Stop`; a new request or compact is queued for after the turn. Nothing here calls the
//! model or a tool: the model call and the tool runner ask these functions what a command
//! means for them.

use super::events::{AgentEvent, NextStep, UserCommand};
use super::turn::{Agent, Stop};

impl Agent {
    /// Handles a command that does not need a turn; returns it back when it does.
    pub(super) fn apply_setting(&mut self, cmd: UserCommand) -> Option<UserCommand> {
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

    /// Reads one command while something runs; settings apply at once, work is queued.
    /// `None` (every front end gone) is a Quit.
    pub(super) fn on_command_during_work(&mut self, cmd: Option<UserCommand>) -> Option<Stop> {
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

    /// In step mode, waits for Step before `next` happens; turning step mode off also
    /// lets it go on.
    pub(super) async fn pause(&mut self, next: NextStep) -> Result<(), Stop> {
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
}
