//! What a session file says about its own live run, kept beside the conversation a replay
//! works on: each call's API input tokens (tied to the answer the call produced, so a
//! replay can put it on the call that produced the same answer), the recording tool's
//! compactions as `inspect` lists them, and, for a ctxlab recording, the stage events that
//! changed the history and the settings it started with. `ctxlab export` shows them beside
//! the replay's own figures (docs/pipeline.md, "Replay"). Every figure comes from the
//! function `inspect` uses for it (`SessionNumbers`, `RecordedCall::prompt_tokens`,
//! `CompactionLine::describe`), so the page and `inspect` cannot disagree.

use std::collections::BTreeMap;

use super::model::{MessageKind, Session, Tool};
use super::numbers::SessionNumbers;
use super::recorded_event::RecordedStage;
use super::summary::CompactionLine;
use crate::compact::PipelineConfig;

/// A session's record of its live run.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRun {
    pub tool: Tool,
    /// Calls, compactions and the peak, as every view counts them.
    pub numbers: SessionNumbers,
    /// Calls whose usage the file records.
    pub calls_with_usage: usize,
    /// The API's input tokens of each call with recorded usage, keyed by the index of the
    /// answer it produced among the replayed messages (`Session::replay_messages`).
    pub input_tokens: BTreeMap<usize, u64>,
    /// The recording tool's compactions, each as `inspect` lists it.
    pub compactions: Vec<String>,
    /// A ctxlab recording: the stage events that changed the history, with their calls.
    pub stages: Vec<RecordedStage>,
    /// A ctxlab recording: the strategy and numbers it started with.
    pub config: Option<PipelineConfig>,
}

impl RecordedRun {
    pub fn of(s: &Session) -> RecordedRun {
        // Index among the replayed messages (the conversation alone) of each message of
        // the full session that is part of it.
        let mut replay_index = Vec::with_capacity(s.messages.len());
        let mut next = 0usize;
        for info in &s.info {
            if info.kind == MessageKind::Conversation {
                replay_index.push(Some(next));
                next += 1;
            } else {
                replay_index.push(None);
            }
        }
        let input_tokens = s
            .calls
            .iter()
            .filter_map(|c| {
                let answer = replay_index.get(c.message?).copied().flatten()?;
                Some((answer, c.prompt_tokens()?))
            })
            .collect();
        RecordedRun {
            tool: s.tool(),
            numbers: SessionNumbers::of(s),
            calls_with_usage: s.calls.len(),
            input_tokens,
            compactions: s
                .compactions
                .iter()
                .enumerate()
                .map(|(i, c)| CompactionLine::of(c).describe(i))
                .collect(),
            stages: s.recorded_stages.clone(),
            config: s.recorded_config,
        }
    }

    /// The API's input tokens of the call whose answer is replayed message `answer`.
    pub fn input_tokens_for(&self, answer: usize) -> Option<u64> {
        self.input_tokens.get(&answer).copied()
    }

    /// Whether the file records anything of its live run a replay does not remake.
    pub fn is_empty(&self) -> bool {
        self.config.is_none()
            && self.input_tokens.is_empty()
            && self.compactions.is_empty()
            && self.stages.is_empty()
    }
}
