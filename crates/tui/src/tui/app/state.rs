//! The data `App` is made of that no pane owns (apart from lists, `list.rs`): the panes'
//! names, diffs, what the agent is doing and what
//! the screen is waiting for. Plain data with no behaviour beyond small lookups; each
//! pane's own state lives in its file (`transcripts.rs`, `timeline.rs`, `viewer.rs`, ...).

use std::sync::Arc;

use crate::compact::Stage;
pub use crate::tui::event_rows::{EventKind, EventRow};
use crate::tui::rows::MessageInfo;
use crate::tui::work::JobId;

/// The focusable panes, numbered as the keys 1-6 select them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Conversation,
    Events,
    Outputs,
    Transcripts,
    Input,
    /// The model-call timeline (6 or `t`); it takes the gauge's and the events' place while
    /// open, and the conversation shows the selected call's request.
    Timeline,
}

impl Pane {
    pub const ORDER: [Pane; 5] = [
        Pane::Conversation,
        Pane::Events,
        Pane::Outputs,
        Pane::Transcripts,
        Pane::Input,
    ];

    pub fn number(self) -> usize {
        if self == Pane::Timeline {
            return 6;
        }
        Pane::ORDER.iter().position(|p| *p == self).unwrap_or(0) + 1
    }
}

/// Which list the conversation pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvView {
    /// The history the model sees now.
    Model,
    /// Every message ever appended; the ones compacted away are dimmed.
    Session,
}

/// One row of the conversation pane as drawn: the message, the stage that last touched it,
/// whether it is dimmed (gone from the context), and a note saying where it went.
#[derive(Debug, Clone)]
pub struct ConvRow<'a> {
    pub info: &'a Arc<MessageInfo>,
    pub mark: Option<Stage>,
    pub dimmed: bool,
    pub note: Option<String>,
}

/// The message list before and after one change.
#[derive(Debug, Clone)]
pub struct StageDiff {
    pub title: String,
    pub before: Vec<Arc<MessageInfo>>,
    pub after: Vec<Arc<MessageInfo>>,
}

/// What the agent is doing, as far as events tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    Idle,
    /// A turn runs; waiting for the model.
    Waiting {
        since: u64,
    },
    Streaming {
        since: u64,
    },
    /// A summary request is with the model.
    Summarizing {
        since: u64,
    },
    Tool {
        name: String,
        since: u64,
    },
}

/// A job the screen waits for, drawn with the tick spinner until its `Done` arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loading {
    pub id: JobId,
    pub what: LoadKind,
    /// `App::tick` when it was asked for.
    pub since: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadKind {
    /// Reading and parsing a transcript; `then_replay` replays it once it is open.
    Transcript {
        relative: String,
        bytes: u64,
        then_replay: bool,
    },
    /// Replaying the open transcript through the pipeline.
    Replay { relative: String, messages: usize },
    /// Reading a persisted output for the viewer.
    Output { relative: String, bytes: u64 },
    /// Opening a recorded session (`relative` is its path); `progress` counts bytes read.
    /// `bytes`: its size when known from the listing.
    Session {
        relative: String,
        bytes: Option<u64>,
        progress: crate::tui::sessions::Progress,
    },
    /// Analysing an opened session or a replay for the forgot or context view (`what`
    /// says which, `relative` names the file or the strategy).
    Analysis {
        relative: String,
        what: &'static str,
    },
}

impl LoadKind {
    /// The file the job reads.
    pub fn relative(&self) -> &str {
        match self {
            LoadKind::Transcript { relative, .. }
            | LoadKind::Replay { relative, .. }
            | LoadKind::Output { relative, .. }
            | LoadKind::Session { relative, .. }
            | LoadKind::Analysis { relative, .. } => relative,
        }
    }
}
