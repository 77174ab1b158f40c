//! A replay's timeline beside the live run its file recorded (`LiveRun`): the recorded
//! usage goes on the replay's call that produced the same answer, and the recorded stage
//! events and compactions are kept to be shown next to the replay's own, with whether the
//! replay fired the same stages at the same calls. The figures stay the live run's: a
//! replay under another strategy sends other requests, so they are never mixed into the
//! replay's own sizes or its breakdown (docs/pipeline.md, "Replay").

use std::collections::BTreeMap;

use super::{StageStep, Timeline};
use crate::compact::{PipelineConfig, Stage};
use crate::pipeline_replay::NotApplied;
use crate::session::recorded_run::RecordedRun;

/// What the file recorded of its live run, and how the replay compares with it.
#[derive(Debug, Clone)]
pub struct LiveRun {
    pub run: RecordedRun,
    /// The strategy and settings the replay ran.
    pub replay_config: PipelineConfig,
    /// Recorded events the replay could not follow, as `ctxlab replay` says them.
    pub not_applied: Vec<String>,
    /// Calls where the replay's stage events differ from the recorded ones (a ctxlab
    /// recording only), in order.
    pub differing_calls: Vec<usize>,
}

impl LiveRun {
    /// The live run next to the replay whose steps are `steps`.
    pub fn new(
        run: RecordedRun,
        replay_config: PipelineConfig,
        not_applied: &[NotApplied],
        steps: &[StageStep],
    ) -> LiveRun {
        let differing_calls = if run.config.is_some() {
            differing_calls(&run, steps)
        } else {
            Vec::new()
        };
        LiveRun {
            replay_config,
            not_applied: not_applied.iter().map(NotApplied::describe).collect(),
            differing_calls,
            run,
        }
    }

    /// A ctxlab recording whose replay fired exactly the recorded stage events at the same
    /// calls and followed every recorded event: it reproduces the live run.
    pub fn reproduces(&self) -> bool {
        self.run.config.is_some() && self.differing_calls.is_empty() && self.not_applied.is_empty()
    }

    /// The recorded stage events by stage name, in order of first appearance:
    /// `micro_compact 22, snip_compact 4`.
    pub fn stage_counts(&self) -> Vec<(&'static str, usize)> {
        counts(self.run.stages.iter().map(|s| s.stage))
    }
}

/// Stage names with how often each occurs, in order of first appearance.
pub(super) fn counts(stages: impl Iterator<Item = Stage>) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    for stage in stages {
        let name = stage.name();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => e.1 += 1,
            None => out.push((name, 1)),
        }
    }
    out
}

/// Calls whose changed stages (in order) differ between the recording and the replay.
fn differing_calls(run: &RecordedRun, steps: &[StageStep]) -> Vec<usize> {
    let mut by_call: BTreeMap<usize, (Vec<Stage>, Vec<Stage>)> = BTreeMap::new();
    for s in steps.iter().filter(|s| s.report.changed) {
        by_call.entry(s.call).or_default().0.push(s.report.stage);
    }
    for s in &run.stages {
        by_call.entry(s.call).or_default().1.push(s.stage);
    }
    by_call
        .into_iter()
        .filter(|(_, (replayed, recorded))| replayed != recorded)
        .map(|(call, _)| call)
        .collect()
}

impl Timeline {
    /// The recording's figures of the live run, when this is a replay of a file that has
    /// some (`ctxlab export` of a session file).
    pub fn live_run(&self) -> Option<&LiveRun> {
        self.live_run.as_deref()
    }
}
