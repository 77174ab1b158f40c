//! Reading recorded sessions: Claude Code's JSONL files, Codex rollouts (both layouts) and
//! ctxlab's own transcripts, message arrays and live-session recordings (`recorded`), into
//! one model (`model`): the messages in
//! the Anthropic shape, the compactions the recording tool performed, the usage of each
//! model call, subagent sidechains and metadata. The format is detected from the content.
//! `discover` finds session files in the tools' default folders. `ctxlab proxy`'s captures
//! (`capture`) read as sessions too: each model call with the exact messages it sent.
//!
//! Only ever reads: nothing is written next to a session file, and no file but the ones
//! named (plus a Claude Code session's own subagent files) is opened. The readers are
//! line-based and linear, so a 50 MB session opens in well under a second; parsing runs on
//! every core (`lines`).

mod assemble;
pub mod capture;
mod chunked;
pub use chunked::each_capture_exchange;
mod claude;
mod claude_kept;
pub(crate) mod claude_line;
pub mod claude_persisted;
pub mod claude_requests;
mod claude_rewind;
pub mod claude_windows;
mod codex;
mod codex_compaction;
mod codex_counted;
mod codex_items;
mod codex_sized;
mod codex_usage;
pub mod compressed;
pub mod detail;
pub mod discover;
mod fast_json;
mod full_read;
pub mod history_input;
pub mod holds;
pub mod kept_read;
mod lines;
pub mod model;
pub(crate) mod model_view;
pub mod numbers;
pub mod open;
pub mod recorded;
mod recorded_event;
pub mod recorded_run;
pub mod sized_read;
mod stream;
pub mod summary;
pub mod title;
mod transcript;
mod uuid_index;
pub mod watch;

use std::path::Path;

use serde_json::Value;

pub use model::{
    CLEARED_RESULT_TEXT, Compaction, CompactionKind, KeptMessage, LoadWarning, MessageKind,
    MessageOrigin, RecordedCall, RecordedUsage, Replacement, Session, SessionFormat, SessionMeta,
    Summary, TokenCount, TokenSource, Tool, Trigger,
};

use crate::compact::request::latest_request;
use crate::message::{Message, json_kind};
use history_input::{InputError, history_input_from_value};
use lines::{ParsedLine, parse_json_lines};
pub use stream::HistoryStream;
pub use transcript::load_transcript;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    #[error("{0}")]
    Array(InputError),
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    /// Nothing but white space: not a broken file, an empty one.
    #[error("no messages (the file is empty)")]
    Empty,
    /// A file that holds something, but no conversation to replay (`holds`).
    #[error("nothing to replay: the file holds {0}")]
    NoConversation(String),
    #[error("not a session file: it is {0}; only regular files are read")]
    NotRegular(&'static str),
    #[error(
        "the file is {bytes} bytes, over the cap of {max} bytes on one session \
         (the max_session_bytes setting or CTXLAB_MAX_SESSION_BYTES raises it)"
    )]
    TooLarge { bytes: u64, max: u64 },
    #[error(
        "the file decompresses to more than {max} bytes, over the cap on one session \
         (the max_session_bytes setting or CTXLAB_MAX_SESSION_BYTES raises it)"
    )]
    DecompressedTooLarge { max: u64 },
    #[error("line {line} is {bytes} bytes, over the cap of {max} bytes on one line")]
    LineTooLong {
        line: usize,
        bytes: usize,
        max: usize,
    },
    #[error("not enough memory for {0} bytes")]
    OutOfMemory(u64),
    #[error("cancelled")]
    Cancelled,
}

/// Claude Code's line types, for recognising its files.
const CLAUDE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "attachment",
    "progress",
    "queue-operation",
];
/// Codex's envelope types.
const CODEX_TYPES: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
];
/// Bare item types of the 2025 Codex layout.
const CODEX_ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// What one parsed line says about the file's format, if anything.
pub fn format_of_line(v: &Value) -> Option<SessionFormat> {
    let o = v.as_object()?;
    let kind = o.get("type").and_then(Value::as_str);
    if recorded::format::is_header(v) {
        return Some(SessionFormat::CtxlabSession);
    }
    if capture::is_header(v) || is_capture_exchange(o) {
        return Some(SessionFormat::ProxyCapture);
    }
    if o.contains_key("payload") && kind.is_some_and(|k| CODEX_TYPES.contains(&k)) {
        return Some(SessionFormat::Codex);
    }
    if o.contains_key("record_type") {
        return Some(SessionFormat::CodexLegacy);
    }
    if kind.is_none()
        && o.contains_key("id")
        && o.contains_key("timestamp")
        && (o.contains_key("instructions") || o.contains_key("git"))
    {
        return Some(SessionFormat::CodexLegacy);
    }
    if o.contains_key("sessionId")
        || o.contains_key("parentUuid")
        || (kind.is_some_and(|k| CLAUDE_TYPES.contains(&k)) && !o.contains_key("role"))
    {
        return Some(SessionFormat::ClaudeCode);
    }
    if kind.is_some_and(|k| CODEX_ITEM_TYPES.contains(&k)) {
        return Some(SessionFormat::CodexLegacy);
    }
    if transcript::is_message_line(v) {
        return Some(SessionFormat::CtxlabTranscript);
    }
    None
}

/// A capture's exchange line (a capture whose header was lost still reads as one).
fn is_capture_exchange(o: &serde_json::Map<String, Value>) -> bool {
    o.get("type").and_then(Value::as_str) == Some("exchange")
        && o.contains_key("request")
        && o.contains_key("response")
}

/// The format of a JSON-lines file, from its first lines that say.
fn detect_lines(lines: &[ParsedLine]) -> Option<SessionFormat> {
    lines
        .iter()
        .take(200)
        .filter_map(|l| l.value.as_ref().ok())
        .find_map(format_of_line)
}

/// The format of the session file at `path` from its first 64 KiB (None: not known yet,
/// or not readable): for a follower that must know the agent before the file is read.
pub fn sniff_format(path: &std::path::Path) -> Option<SessionFormat> {
    use std::io::Read;
    let opened = open::open_regular_any_size(path).ok()?;
    let mut head = Vec::new();
    opened.file.take(64 << 10).read_to_end(&mut head).ok()?;
    // The last line may be cut: only whole lines are looked at.
    let end = head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    detect_text(&String::from_utf8_lossy(&head[..end]))
}

/// The format of a JSON-lines text, from its first lines that say.
fn detect_text(text: &str) -> Option<SessionFormat> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(200)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| format_of_line(&v))
}

fn read_lines(format: SessionFormat, lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    match format {
        SessionFormat::ClaudeCode => Ok(claude::read_claude(claude_line::of_values(lines))),
        SessionFormat::Codex | SessionFormat::CodexLegacy => {
            Ok(codex::read_codex(lines, format, detail::Detail::Full))
        }
        SessionFormat::CtxlabTranscript | SessionFormat::MessageArray => {
            transcript::read_transcript(lines)
        }
        SessionFormat::CtxlabSession => recorded::read_recorded(lines),
        SessionFormat::ProxyCapture => Ok(capture::read_capture(lines)),
    }
}

/// A session from the text of a file, with the active request the file names (only
/// `ctxlab pipeline`'s input object names one).
fn parse_text(text: &str) -> Result<(Session, Option<String>), SessionError> {
    if text.trim().is_empty() {
        return Err(SessionError::Empty);
    }
    if text.trim_start().starts_with('[') {
        return transcript::read_array(text);
    }
    // One JSON document: `ctxlab pipeline`'s input object, or a one-line session.
    let whole = serde_json::from_str::<Value>(text);
    if let Ok(value) = &whole
        && value.get("messages").is_some()
    {
        let input = match whole {
            Ok(v) => history_input_from_value(v).map_err(SessionError::Array)?,
            Err(e) => return Err(SessionError::Array(InputError::Json(e))),
        };
        let given = Some(input.active_request.clone());
        return Ok(transcript::from_input(input, given));
    }
    match detect_text(text) {
        Some(SessionFormat::ClaudeCode) => {
            let lines = claude_line::parse_claude_lines(text, 1);
            return Ok((claude::read_claude(lines), None));
        }
        Some(format) => return Ok((read_lines(format, parse_json_lines(text, 1))?, None)),
        None => {}
    }
    let lines = parse_json_lines(text, 1);
    match detect_lines(&lines) {
        Some(format) => Ok((read_lines(format, lines)?, None)),
        None => match whole {
            // Not a format ctxlab knows: say why in `ctxlab pipeline`'s words.
            Ok(value) => Err(SessionError::Array(InputError::Shape(json_kind(&value)))),
            Err(e) if lines.len() <= 1 || text.trim_start().starts_with('{') => {
                Err(SessionError::Array(InputError::Json(e)))
            }
            Err(_) => read_lines(SessionFormat::CtxlabTranscript, lines).map(|s| (s, None)),
        },
    }
}

/// Reads a session from text (the format is detected).
pub fn parse_session_text(text: &str) -> Result<Session, SessionError> {
    parse_text(text).map(|(s, _)| s)
}

fn read_file_text(path: &Path) -> Result<(String, Option<LoadWarning>), SessionError> {
    text_of_bytes(open::read_file(path)?)
}

/// A file's bytes as text; invalid UTF-8 is replaced, with a warning that says so.
pub fn text_of_bytes(bytes: Vec<u8>) -> Result<(String, Option<LoadWarning>), SessionError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, None)),
        Err(e) => {
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            Ok((text, Some(stream::lossy_warning())))
        }
    }
}

/// Opens a session file. For a Claude Code session this also reads its subagents' files
/// (`<session>/subagents/agent-*.jsonl`, or older `agent-*.jsonl` beside it that name the
/// session) as sidechains.
pub fn load_session(path: &Path) -> Result<Session, SessionError> {
    load_session_with(path, &|_| {}, &|| false)
}

/// `load_session` with how far the read got (`progress`, in bytes) and a cancel asked
/// between reads (the workbench's open). A Claude Code or Codex file is read and parsed a
/// chunk at a time (`chunked`), so its text is never held whole; a Codex rollout's
/// history items are converted once each (`full_read`).
pub fn load_session_with(
    path: &Path,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<Session, SessionError> {
    if let Some(session) = full_read::read_codex_full(path, progress, cancelled)? {
        return Ok(session);
    }
    load_session_chunked(path, progress, cancelled)
}

/// `load_session_with` as it reads every file but a Codex rollout: each history item
/// built where it appears (`full_read`'s tests compare the two reads).
fn load_session_chunked(
    path: &Path,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<Session, SessionError> {
    let (mut session, _, warning) =
        chunked::read_session_file(path, detail::Detail::Full, progress, cancelled)?;
    session.warnings.extend(warning);
    with_subagents(path, session, detail::Detail::Full)
}

/// `load_session` for a command that prints figures (`inspect`): each message is held as
/// its sized outline and a Codex compaction's new history is counted, not held
/// (`detail::Detail::Numbers`), so a session of gigabytes is read in memory that follows
/// its numbers, not its size.
pub fn load_session_numbers(path: &Path) -> Result<Session, SessionError> {
    let (mut session, _, warning) =
        chunked::read_session_file(path, detail::Detail::Numbers, &|_| {}, &|| false)?;
    session.warnings.extend(warning);
    with_subagents(path, session, detail::Detail::Numbers)
}

/// A session with its project folder noted and, for Claude Code, its subagents' files.
fn with_subagents(
    path: &Path,
    mut session: Session,
    detail: detail::Detail,
) -> Result<Session, SessionError> {
    numbers::note_project_folder(&mut session, path);
    if session.format == SessionFormat::ClaudeCode {
        for file in discover::claude_subagent_files(path, session.meta.session_id.as_deref()) {
            match chunked::read_session_file(&file, detail, &|_| {}, &|| false) {
                Ok((mut side, _, _)) if side.format == SessionFormat::ClaudeCode => {
                    if side.meta.agent_id.is_none() {
                        side.meta.agent_id = agent_id_of(&file);
                    }
                    let id = side.meta.agent_id.clone();
                    session
                        .sidechains
                        .retain(|s| id.is_none() || s.meta.agent_id != id);
                    session.sidechains.push(side);
                }
                Ok(_) => {}
                Err(e) => session.warnings.push(LoadWarning {
                    line: 0,
                    message: format!("subagent file {}: {e}", file.display()),
                }),
            }
        }
    }
    Ok(session)
}

fn agent_id_of(file: &Path) -> Option<String> {
    let stem = file.file_stem()?.to_str()?;
    Some(stem.strip_prefix("agent-").unwrap_or(stem).to_string())
}

/// A session ready for the pipeline: its conversation and the request it works on.
#[derive(Debug)]
pub struct LoadedHistory {
    pub format: SessionFormat,
    pub messages: Vec<Message>,
    /// The request the file names, or the latest user request in the conversation.
    pub active_request: String,
    pub warnings: Vec<LoadWarning>,
    pub skipped: usize,
    /// What the file holds when it holds no conversation (`holds::without_conversation`).
    pub without_conversation: Option<String>,
    /// A ctxlab recording's events a replay honours (`recorded`); empty otherwise.
    pub recorded: Vec<recorded::RecordedEvent>,
    /// A ctxlab recording's strategy and numbers at its start.
    pub recorded_config: Option<crate::compact::PipelineConfig>,
    /// What the file records of its live run (usage, compactions, stage events), for a
    /// replay to show beside its own figures (`ctxlab export`).
    pub recorded_run: Box<recorded_run::RecordedRun>,
}

impl LoadedHistory {
    /// The history, or why there is nothing to replay: what `replay` and `export` ask.
    pub fn require_conversation(self) -> Result<LoadedHistory, SessionError> {
        match self.without_conversation {
            Some(holds) => Err(SessionError::NoConversation(holds)),
            None => Ok(self),
        }
    }
}

/// The one loader behind `ctxlab replay` and `ctxlab pipeline`: any format ctxlab reads,
/// as the conversation the lesson's pipeline works on.
pub fn load_history(path: &Path) -> Result<LoadedHistory, SessionError> {
    // The messages whole, each Codex compaction's new history counted, not held: a
    // replay never reads it, and most of a gigabyte rollout is those copies (issue 36).
    let (session, given, warning) =
        chunked::read_session_file(path, detail::Detail::Conversation, &|_| {}, &|| false)?;
    let format = session.format;
    let mut warnings = session.warnings.clone();
    warnings.extend(warning);
    let skipped = session.skipped.values().sum();
    let without_conversation = holds::without_conversation(&session);
    let recorded = session.recorded.clone();
    let recorded_config = session.recorded_config;
    let recorded_run = Box::new(recorded_run::RecordedRun::of(&session));
    let messages = session.into_replay_messages();
    // The pipeline asks every message's size before the first call: compute them now, on
    // every core (arrays already did while parsing).
    lines::warm_caches(&messages);
    let active_request = given
        .or_else(|| latest_request(&messages))
        .unwrap_or_default();
    Ok(LoadedHistory {
        format,
        messages,
        active_request,
        warnings,
        skipped,
        without_conversation,
        recorded,
        recorded_config,
        recorded_run,
    })
}

/// A history as `open_history` hands it over.
pub enum OpenedHistory {
    /// A JSON array of messages, still being parsed: replay it as it comes.
    Streamed(HistoryStream),
    /// Any other file, read whole.
    Loaded(LoadedHistory),
}

/// `load_history` for a consumer that takes the messages in order (`ctxlab replay`): a
/// non-empty JSON array of messages comes as a stream, read and parsed on another thread
/// (`stream`); anything else as `load_history` reads it.
pub fn open_history(path: &Path) -> Result<OpenedHistory, SessionError> {
    match HistoryStream::open(path)? {
        Some(stream) => Ok(OpenedHistory::Streamed(stream)),
        None => load_history(path).map(OpenedHistory::Loaded),
    }
}

#[cfg(test)]
mod codex_counted_tests;
#[cfg(test)]
mod codex_tests;
#[cfg(test)]
pub(crate) mod test_rollouts;
#[cfg(test)]
mod tests;
