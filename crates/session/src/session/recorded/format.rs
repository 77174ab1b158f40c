//! The line format of ctxlab's own session recordings (docs/architecture.md, "Session
//! recordings"): one JSON object per line, `type` first, a `header` line first of all that
//! names the format and its version. The writer (the `record` module) makes these lines from
//! the agent's events; the reader (`super::fold`) turns them back into a session. Both use
//! these types, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

use crate::compact::PipelineConfig;
use crate::message::Message;

/// The value of the header's `format`.
pub const RECORD_FORMAT: &str = "ctxlab-session";
/// The version this build writes and reads; a newer one is read as far as it is understood.
pub const RECORD_VERSION: u32 = 1;

/// Which front end recorded a session; written as `workbench` or `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontEnd {
    Workbench,
    Run,
}

/// One line of a recording. Unknown fields are ignored, so a later version may add some.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordLine {
    /// Always the first line.
    Header(Header),
    /// The user submitted a request (it becomes the active request).
    Turn {
        request: String,
    },
    /// A message joined the history (the request, an answer, tool results), in order.
    Appended {
        message: Message,
    },
    /// A stage ran before model call `call` (counted as the timeline counts them: every
    /// request of a turn, refused ones included).
    Stage(RecordedStageLine),
    /// A request went to the model: a turn's call `call`, or a summary request.
    Request {
        call: usize,
        summary: bool,
        estimate_chars: usize,
        messages: usize,
    },
    /// The server's token counts for the last request (`input_tokens` includes the cached
    /// part).
    Usage {
        call: usize,
        summary: bool,
        #[serde(default)]
        input_tokens: Option<u64>,
        #[serde(default)]
        output_tokens: Option<u64>,
        #[serde(default)]
        cached_input_tokens: Option<u64>,
    },
    /// The model called the `compact` tool.
    CompactTool {
        call: usize,
        #[serde(default)]
        focus: Option<String>,
    },
    /// The API refused the last request as too long, in its words.
    PromptTooLong {
        call: usize,
        /// A summary request was refused, not a turn's call.
        summary: bool,
        message: String,
        messages: usize,
        estimate_chars: usize,
    },
    /// The settings or the strategy changed; they apply from the next model call.
    Config {
        config: PipelineConfig,
    },
    Error {
        kind: String,
        message: String,
    },
    TurnDone {
        stop_reason: String,
    },
}

/// The first line: what recorded the session, where, and with which settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// `RECORD_FORMAT`.
    pub format: String,
    pub version: u32,
    /// ctxlab's version.
    pub ctxlab: String,
    pub front_end: FrontEnd,
    /// ISO 8601 UTC time the recording started.
    pub started: String,
    pub provider: String,
    pub workspace: String,
    /// The strategy and its numbers at the start.
    pub config: PipelineConfig,
}

/// A stage's run as recorded: the report's numbers and, for a summary, what replaced the
/// history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedStageLine {
    pub call: usize,
    /// The stage's name (`compact_history`, ...).
    pub stage: String,
    pub changed: bool,
    #[serde(default = "yes")]
    pub ran: bool,
    pub reason: String,
    pub size_before: usize,
    pub size_after: usize,
    pub messages_before: usize,
    pub messages_after: usize,
    /// For a summary: `over_limit`, `requested` or `prompt_too_long`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// For a summary: the history it left (the summary message, then what it kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
}

fn yes() -> bool {
    true
}

/// Whether a parsed line is a recording's header (the format detection's test).
pub(crate) fn is_header(v: &serde_json::Value) -> bool {
    v.get("type").and_then(serde_json::Value::as_str) == Some("header")
        && v.get("format").and_then(serde_json::Value::as_str) == Some(RECORD_FORMAT)
}

#[cfg(test)]
mod tests {
    use super::FrontEnd;

    #[test]
    fn front_ends_are_written_as_the_words_recordings_have_always_had() {
        for (front_end, word) in [
            (FrontEnd::Workbench, "\"workbench\""),
            (FrontEnd::Run, "\"run\""),
        ] {
            assert_eq!(serde_json::to_string(&front_end).unwrap(), word);
            assert_eq!(serde_json::from_str::<FrontEnd>(word).unwrap(), front_end);
        }
    }
}
