//! The events a ctxlab recording holds that a replay must honour (a refusal, a compaction
//! someone asked for, a change of settings), as data: the session model carries them, the
//! recording's reader (`recorded`) makes them, the replay loop follows them. A leaf.

use serde::Serialize;

use crate::compact::{PipelineConfig, Stage, Strategy};

/// Who asked for a recorded compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactBy {
    /// The model called the `compact` tool.
    Tool,
    /// The user typed `/compact`.
    User,
}

/// What the live run met that the pipeline alone does not decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordedKind {
    /// The API refused the turn's request as too long (its words): reactive compaction
    /// followed, if the strategy has it.
    Refusal { message: String },
    /// A compaction someone asked for.
    Compact {
        focus: Option<String>,
        by: CompactBy,
    },
    /// New settings (or a new strategy) from this call on; `from` is the strategy that ran
    /// until then, so a replay that has followed the live run so far can switch with it.
    Config {
        config: PipelineConfig,
        from: Strategy,
    },
}

/// A recorded event and where it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedEvent {
    /// How many conversation messages (the replay's messages) came before it.
    pub at: usize,
    /// The turn's model call it concerns, counted as the timeline counts them (a refused
    /// request is a call): the refused call, or the call a compaction ran before.
    pub call: usize,
    #[serde(flatten)]
    pub kind: RecordedKind,
}

impl RecordedEvent {
    /// `call 30: the API refused the request (prompt too long)`, as every front end says it.
    pub fn describe(&self) -> String {
        let what = match &self.kind {
            RecordedKind::Refusal { .. } => "the API refused the request as too long".to_string(),
            RecordedKind::Compact {
                by: CompactBy::Tool,
                ..
            } => "the model called the compact tool".to_string(),
            RecordedKind::Compact {
                by: CompactBy::User,
                ..
            } => "/compact".to_string(),
            RecordedKind::Config { config, from } if *from != config.strategy => {
                format!("strategy {from} -> {}", config.strategy)
            }
            RecordedKind::Config { config, .. } => {
                format!("settings changed (strategy {})", config.strategy)
            }
        };
        format!("call {}: {what}", self.call)
    }
}

/// A stage that changed the history in the live run, with the call it ran before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecordedStage {
    pub call: usize,
    pub stage: Stage,
}
