//! What one agent event did to the run, as the run's fold (`Run::on_event`) read it: the
//! event's content (borrowed from the event, never copied) with the ids it got and the
//! request it belongs to. Every reader of the run (the timeline, the live record, the
//! conversation mirror, the event rows) takes these facts, so none of them counts calls,
//! steps or messages, tells a summary request's usage from a call's, or reads another
//! reader's state to learn an id.

use std::path::Path;
use std::sync::Arc;

use super::ids::{CallRef, CompactionId, EntryId, StepId};
use crate::agent::events::{ErrorKind, StopReason};
use crate::compact::{PipelineConfig, StageReport};
use crate::message::Message;
use crate::provider::{ModelRequest, SentRequest};

/// One fact of the run. Events that change no record of the run (streamed text, a tool's
/// progress, a pause, a retry's wait, the pace) are not facts: a front end shows them as
/// they come.
#[derive(Debug, Clone, Copy)]
pub enum RunFact<'e> {
    /// The agent started (`Ready`).
    Started {
        provider: &'e str,
        workspace: &'e Path,
        config: PipelineConfig,
    },
    /// A turn began with the user's request.
    Turn {
        request: &'e str,
    },
    /// A message joined the history and the full session as entry `entry`, before call
    /// `before_call`.
    Appended {
        entry: EntryId,
        before_call: usize,
        message: &'e Message,
    },
    /// A stage ran before call `before_call` and became step `step`; `compaction` when its
    /// report holds a summary. `history` is the history after it, when it changed.
    Stage {
        step: StepId,
        before_call: usize,
        compaction: Option<CompactionId>,
        report: &'e StageReport,
        history: Option<&'e Arc<Vec<Message>>>,
    },
    /// The history was replaced wholesale (after a summary, a cancel's repair, a continue).
    Replaced {
        history: &'e Arc<Vec<Message>>,
    },
    /// A request went to the model: call `call`, or a summary request.
    Request {
        call: CallRef,
        estimate_chars: usize,
        messages: usize,
        request: Option<&'e Arc<ModelRequest>>,
        body: Option<&'e Arc<SentRequest>>,
    },
    /// The server's token counts for request `call`.
    Usage {
        call: CallRef,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        cached_input_tokens: Option<u64>,
    },
    /// The answer of call `call` called the compact tool.
    CompactTool {
        call: usize,
        focus: Option<&'e str>,
    },
    /// The API refused request `call` as too long, in its words.
    Refused {
        call: CallRef,
        message: &'e str,
        messages: usize,
        estimate_chars: usize,
    },
    /// The agent applies `config` from call `from_call` on.
    Settings {
        config: PipelineConfig,
        from_call: usize,
    },
    Error {
        kind: ErrorKind,
        message: &'e str,
    },
    /// The answer at `index` in the history stopped at `max_tokens`.
    AnswerCut {
        max_tokens: u32,
        index: usize,
    },
    TurnDone {
        stop_reason: &'e StopReason,
    },
}
