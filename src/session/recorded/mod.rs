//! ctxlab's own session recordings (`<data dir>/sessions/*.jsonl`): the line format
//! (`format`), the fold that reads them into the session model (`fold`), and the recorded
//! events a replay honours (`RecordedEvent`: the compact tool, `/compact`, the API's
//! refusals, a change of settings), each at the place in the conversation it happened.
//! Only reads; `crate::record` writes.

pub mod fold;
pub mod format;

use serde::Serialize;

use super::SessionError;
use super::lines::ParsedLine;
use super::model::{LoadWarning, Session};
use crate::compact::{PipelineConfig, Stage};
pub use fold::RecordFold;
pub use format::{Header, RECORD_FORMAT, RECORD_VERSION, RecordLine, RecordedStageLine};

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
    /// New settings (or a new strategy) from this call on.
    Config { config: PipelineConfig },
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
            RecordedKind::Config { config } => {
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

/// Reads a recording's parsed lines. A line that is not one of the format's is skipped
/// and counted; the first must be the header.
pub(crate) fn read_recorded(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let mut fold = RecordFold::new(true);
    let mut skipped = 0usize;
    let mut warnings = Vec::new();
    for ParsedLine { number, value } in lines {
        let parsed =
            value.and_then(|v| serde_json::from_value::<RecordLine>(v).map_err(|e| e.to_string()));
        match parsed {
            Ok(line) => fold.line(number, line),
            Err(e) => {
                skipped += 1;
                if warnings.len() < 20 {
                    warnings.push(LoadWarning {
                        line: number,
                        message: e,
                    });
                }
            }
        }
    }
    let mut session = fold.finish();
    if skipped > 0 {
        session
            .skipped
            .insert("line not in the recording format".to_string(), skipped);
    }
    session.warnings.extend(warnings);
    Ok(session)
}
