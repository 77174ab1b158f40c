//! What the workbench knows about the agent it shows, one of `App`'s parts: the workspace,
//! the model's label, the pipeline's settings as the agent last said them, what it is doing,
//! whether its channel closed, the run's fold (`crate::run::Run`: the one reading of the
//! agent's stream, whose facts every other part takes) and the live run's recorded events
//! (refusals, compact tool calls) that the compare view replays.

use std::path::PathBuf;

use super::state::RunState;
use crate::compact::PipelineConfig;
use crate::record::LiveRecord;
use crate::run::Run;

/// The agent's facts. Fields are visible to `App`'s own modules only.
#[derive(Debug)]
pub(super) struct AgentFacts {
    pub(super) workspace: PathBuf,
    /// The model's label (`scripted`, a provider and model).
    pub(super) provider: String,
    pub(super) config: PipelineConfig,
    pub(super) run_state: RunState,
    /// Whether the agent's event channel closed.
    pub(super) agent_gone: bool,
    /// The agent's stream folded once: the ids and call numbers every reader of a fact uses.
    pub(super) run: Run,
    /// Folded as a recording's reader folds them, so the compare view replays the live run
    /// as it ran.
    pub(super) live_record: LiveRecord,
}

impl AgentFacts {
    pub(super) fn new(workspace: PathBuf, provider: String, config: PipelineConfig) -> AgentFacts {
        AgentFacts {
            workspace,
            provider,
            config,
            run_state: RunState::Idle,
            agent_gone: false,
            run: Run::new(),
            live_record: LiveRecord::new(crate::session::recorded::format::FrontEnd::Workbench),
        }
    }
}
