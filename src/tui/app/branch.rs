//! Settings applied and branches continued: the events row each change of settings gets
//! when the agent applies it ("strategy s08 -> guarded, from call 12"), and "continue from
//! call N" (docs/architecture.md, "Continue from call N"): the confirmation, the branch the
//! continue left (kept whole for comparison) and which of the two the timeline shows.

use super::{App, EventKind};
use crate::compact::PipelineConfig;

/// What this file owns: the settings the agent last applied, the kept branch, the asked
/// confirmation.
#[derive(Debug, Default)]
pub struct BranchState {
    /// The settings the agent last said it applies (`Ready`, `ConfigChanged`), which can
    /// differ from `App::config` (what `/config` last sent) until the agent applies them.
    applied: Option<PipelineConfig>,
}

impl App {
    /// The agent started with `config`.
    pub(super) fn config_started(&mut self, config: PipelineConfig) {
        self.branch.applied = Some(config);
    }

    /// The agent applies `config` from its next model call: the events pane says so, with
    /// that call's number.
    pub(super) fn config_applied(&mut self, config: PipelineConfig) {
        self.config = config;
        let from = self.branch.applied.replace(config);
        if let Some(from) = from
            && from != config
        {
            // The agent applies a config between calls: the next one is the first under it.
            let call = self.timeline.calls.len() + 1;
            self.push_event(EventKind::Settings {
                from,
                to: config,
                call,
            });
        }
    }
}
