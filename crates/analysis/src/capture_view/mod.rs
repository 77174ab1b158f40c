//! A capture's requests view (docs/capture.md, "The requests view"): one row per model
//! request the proxy recorded, with what changed since the thread's previous request
//! (`session::capture::changes`), the request by category, exact (`breakdown::request`),
//! the usage its response recorded, and what ctxlab's strategies would have sent instead
//! (`compare::beside`). `ctxlab inspect CAPTURE --requests` prints these rows and the
//! workbench's requests view (`R`) draws them, both from `of_file` and `text`, so the two
//! say the same numbers.
//!
//! Reads the capture (three times, a chunk at a time: its models, its exchanges, and as a
//! session for the replay) and nothing else; the replays write nothing (dry-run stores). Everything from the capture is clipped
//! here and sanitized by `text`.

pub mod text;

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use crate::breakdown::CallBreakdown;
use crate::breakdown::request::RequestSizer;
use crate::compact::Strategy;
use crate::compare::beside::{StrategyAt, strategies_beside};
use crate::message::Role;
use crate::session::capture::{
    ExactRequest, Exchange, RequestChange, RequestKind, ServerEdits, exact_request, headline,
    request_changes, request_kind, server_edits,
};
use crate::session::{
    MessageKind, Session, SessionError, SessionFormat, each_capture_exchange as each_exchange,
    load_session,
};
use crate::store::StoreError;

/// A model name longer than this is clipped: it comes from the capture.
const MODEL_CHARS: usize = 48;

/// One request of the capture.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRow {
    /// The exchange's number (the order requests arrived).
    pub n: u64,
    pub started: String,
    pub api: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Not the agent's main thread (a title, a quota probe, the agent's compaction request,
    /// a refused request): no diff, no strategies.
    pub side: bool,
    /// What the request is to the capture's fold (`session::capture::kind`).
    pub kind: RowKind,
    pub messages: usize,
    /// The messages in Python `str()` chars: the unit the strategies' sizes are in.
    pub size: usize,
    /// Every category's characters (system prompt and tool schemas included).
    pub chars: u64,
    /// The prompt tokens the response recorded (input, cache reads and writes), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_tokens: Option<u64>,
    /// What the changes since the previous request most likely were, in a few words.
    pub label: String,
    pub changes: Vec<RequestChange>,
    pub breakdown: CallBreakdown,
    /// Each strategy's request at the same point of the conversation, when it has one.
    pub strategies: Vec<StrategyAt>,
    /// What the server did to the context before the model read it (edits asked for and
    /// applied, its own compaction).
    #[serde(skip_serializing_if = "ServerEdits::is_empty")]
    pub server: ServerEdits,
}

/// What a request is: a call of the main thread, a side request, the agent's compaction
/// request, or a request refused (a 429: no answer, the client sent it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    Call,
    Side,
    CompactionRequest,
    Refused,
    /// Codex's prewarm: sent ahead for the cache, nothing generated.
    Prewarm,
}

/// Every request of a capture, and how its tokens were counted.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureRequests {
    /// `exact (o200k_base)` or the estimate's ratio.
    pub counting: String,
    pub rows: Vec<RequestRow>,
    /// Exchanges that are no model call with a readable body.
    pub other_exchanges: usize,
    /// Why the strategies are missing, when their replay failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategies_error: Option<String>,
    /// Lines of the capture that could not be read.
    pub warnings: Vec<String>,
}

/// The capture at `path` as rows, with what each strategy would have sent: `session` is
/// the same file read as a session (its conversation is replayed, the slow part).
pub fn of_file(path: &Path, session: &Session) -> Result<CaptureRequests, SessionError> {
    let thread: HashSet<usize> = session.calls.iter().map(|c| c.line).collect();
    let mut out = of_capture(path, &thread)?;
    if let Err(e) = attach_strategies(&mut out.rows, session) {
        out.strategies_error = Some(e.to_string());
    }
    Ok(out)
}

/// `of_file` for a file not read yet; a file that is no capture is refused, from its first
/// lines when they say what it is (a million-line session is not read to be refused).
pub fn of_capture_file(path: &Path) -> Result<CaptureRequests, NotACapture> {
    if let Some(format) = head_format(path)
        && format != SessionFormat::ProxyCapture
    {
        return Err(NotACapture::Format(format.name()));
    }
    let session = load_session(path).map_err(NotACapture::Read)?;
    if session.format != SessionFormat::ProxyCapture {
        return Err(NotACapture::Format(session.format.name()));
    }
    of_file(path, &session).map_err(NotACapture::Read)
}

/// The format the first lines of `path` say (its first 256 KiB, whatever its size), when
/// one of them says one.
fn head_format(path: &Path) -> Option<SessionFormat> {
    use std::io::Read;
    let opened = crate::session::open::open_regular_uncapped(path).ok()?;
    let mut head = Vec::new();
    opened.file.take(256 << 10).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(200)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| crate::session::format_of_line(&v))
}

/// Why a file's requests cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum NotACapture {
    #[error(transparent)]
    Read(SessionError),
    #[error("no ctxlab proxy capture (it is {0}): only a capture records its requests")]
    Format(&'static str),
}

/// What a row holds before the breakdown is finished: all it needs of its exchange, which
/// is dropped.
struct Pending {
    n: u64,
    started: String,
    api: &'static str,
    usage_tokens: Option<u64>,
    model: Option<String>,
    side: bool,
    kind: RowKind,
    messages: usize,
    size: usize,
    label: String,
    changes: Vec<RequestChange>,
    server: ServerEdits,
}

/// The model request an exchange holds, if it is one with a readable body.
fn model_request(e: &Exchange) -> Option<ExactRequest> {
    if !e.api.is_model_call() {
        return None;
    }
    exact_request(e.api, e.request.body.as_ref()?)
}

/// The rows of the capture at `path`, without the strategies; `thread` holds the lines of
/// the main thread's calls as the capture reader's fold chose them (one rule: the view's
/// side requests are the fold's). The file is read twice, a chunk at a time (the models
/// first: they decide how tokens are counted), and each request is built, used and
/// dropped: a request repeats the whole history, so holding them all would cost requests x
/// history (issue 36). Requests are compared in the order they completed, as the fold
/// reads them; the rows come in the order the requests arrived.
pub fn of_capture(path: &Path, thread: &HashSet<usize>) -> Result<CaptureRequests, SessionError> {
    let mut models: Vec<Option<String>> = Vec::new();
    each_exchange(path, &mut |_, e| {
        if let Some(r) = model_request(&e) {
            models.push(r.model);
        }
    })?;
    let model_names: Vec<Option<&str>> = models.iter().map(Option::as_deref).collect();
    let mut sizer = RequestSizer::new(&model_names);
    let mut prev: Option<ExactRequest> = None;
    let mut pending = Vec::with_capacity(models.len());
    let mut other_exchanges = 0;
    let head = each_exchange(path, &mut |line, e| {
        let Some(r) = model_request(&e) else {
            other_exchanges += 1;
            return;
        };
        sizer.add(&r, usage_tokens(&e));
        let side = !thread.contains(&line);
        let (kind, side_label) = match (side, request_kind(&e, &r)) {
            (false, _) => (RowKind::Call, String::new()),
            (true, RequestKind::Refused { why }) => (RowKind::Refused, format!("refused ({why})")),
            (true, RequestKind::CompactionRequest { .. }) => {
                (RowKind::CompactionRequest, "compaction request".to_string())
            }
            (true, RequestKind::Prewarm) => {
                (RowKind::Prewarm, "prewarm (nothing generated)".to_string())
            }
            (true, RequestKind::Call) => (RowKind::Side, "side request".to_string()),
        };
        let (label, changes) = match (side, &prev) {
            (true, _) => (side_label, Vec::new()),
            (false, None) => ("first request".to_string(), Vec::new()),
            (false, Some(p)) => {
                let c = request_changes(p, &r);
                (headline(&c), c)
            }
        };
        let server = server_edits(&e);
        let label = match server.headline() {
            Some(h) => format!("{label}; {h}"),
            None => label,
        };
        pending.push(Pending {
            n: e.n,
            usage_tokens: usage_tokens(&e),
            api: e.api.name(),
            model: e
                .response
                .model
                .as_deref()
                .or(r.model.as_deref())
                .map(|m| crate::util::clip_chars(m, MODEL_CHARS)),
            side,
            kind,
            messages: r.messages.len(),
            size: crate::message::estimate_size(&r.messages),
            label,
            changes,
            server,
            started: e.started,
        });
        if !side {
            prev = Some(r);
        }
    })?;
    let (breakdown, chars) = sizer.finish();
    let mut rows = pending
        .into_iter()
        .zip(breakdown.calls)
        .zip(chars)
        .map(|((p, b), chars)| RequestRow {
            n: p.n,
            started: p.started,
            api: p.api,
            model: p.model,
            side: p.side,
            kind: p.kind,
            messages: p.messages,
            size: p.size,
            chars,
            usage_tokens: p.usage_tokens,
            label: p.label,
            changes: p.changes,
            breakdown: b,
            strategies: Vec::new(),
            server: p.server,
        })
        .collect::<Vec<_>>();
    rows.sort_by_key(|r| r.n);
    Ok(CaptureRequests {
        counting: breakdown.counting.describe(),
        rows,
        other_exchanges,
        strategies_error: None,
        warnings: head
            .warnings
            .iter()
            .map(|w| format!("line {}: {}", w.line, w.message))
            .collect(),
    })
}

fn usage_tokens(e: &Exchange) -> Option<u64> {
    let u = e.response.usage?;
    let t = u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens;
    (t > 0).then_some(t)
}

/// Fills each main-thread row's strategies: the session's call `i` is the main thread's
/// request `i`, and its answer message is the replay's call of the same number.
fn attach_strategies(rows: &mut [RequestRow], session: &Session) -> Result<(), StoreError> {
    let conversation = session.replay_messages();
    let runs = strategies_beside(&conversation, &Strategy::ALL)?;
    // The replay call each session message is the answer of (assistant messages in order).
    let mut call_of = vec![None; session.messages.len()];
    let mut calls = 0;
    for (k, (m, info)) in session.messages.iter().zip(&session.info).enumerate() {
        if info.kind == MessageKind::Conversation && m.role_kind() == Role::Assistant {
            calls += 1;
            call_of[k] = Some(calls);
        }
    }
    let main = rows.iter_mut().filter(|r| !r.side);
    for (row, call) in main.zip(&session.calls) {
        let Some(c) = call.message.and_then(|m| call_of.get(m).copied().flatten()) else {
            continue;
        };
        row.strategies = runs
            .iter()
            .filter_map(|run| run.get(c - 1).cloned())
            .collect();
    }
    Ok(())
}
