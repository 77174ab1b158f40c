//! The live view's data: a Claude Code or Codex session, or a `ctxlab proxy` capture,
//! followed as it is written (`ctxlab watch` in the workbench, `w` on a row of the sessions browser). The follower
//! (`follower`) runs `session::watch::follow` on a thread of its own and sends each
//! `WatchEvent` to the loop as a `LiveMsg`; `App::update` folds it here (`LiveView::fold`):
//! conversation rows, model calls with their context, tool calls, every compaction as one
//! row (updated in place when a later line adds to it), what happened to the file, the
//! headroom (`HeadroomTracker`, each figure with its source) and the context curve. Near
//! the agent's threshold the follower also reads what a compaction now would put at risk
//! (`forgot::at_risk`, the list `watch --text` prints) and sends it as `LiveMsg::AtRisk`.
//!
//! Plain data: nothing here touches `App`, the terminal or the disk
//! (docs/architecture.md, "Following a session").

pub mod follower;
mod options;
mod text;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::forgot::at_risk::AtRisk;
use crate::session::model::{Compaction, SessionFormat};
use crate::session::watch::{
    Chosen, FileEvent, Headroom, HeadroomTracker, LiveCall, LiveItem, LiveMessage, WatchEvent,
};

pub use options::LiveOptions;
pub use text::{file_text, row_full_text};

/// Rows kept at most: the oldest go first (and are counted), so a follow of a session of
/// any length holds a bounded view.
pub const MAX_ROWS: usize = 20_000;
/// Calls kept for the curve at most (the oldest go first).
pub const MAX_CURVE: usize = 20_000;

/// What the loop is asked to follow (`Effect::Follow`); `id` tells its events apart from
/// those of a follower it replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowRequest {
    id: u64,
    chosen: Chosen,
    poll: Duration,
    notify: bool,
    at_risk_within: Option<u64>,
}

impl FollowRequest {
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn chosen(&self) -> &Chosen {
        &self.chosen
    }

    /// Tokens from the threshold at which the follower reads the facts at risk.
    pub fn at_risk_within(&self) -> Option<u64> {
        self.at_risk_within
    }

    pub fn options(&self) -> crate::session::watch::FollowOptions {
        crate::session::watch::FollowOptions {
            poll: self.poll,
            notify: self.notify,
        }
    }
}

/// What the follower and the loop tell `App` about following.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveMsg {
    /// Before the loop: the settings, and the session to follow at start.
    Setup(LiveOptions),
    /// One event of the follower `id`.
    Event { id: u64, event: WatchEvent },
    /// The follower `id` stopped (`error`: why, when it was not asked to).
    Ended { id: u64, error: Option<String> },
    /// Near the threshold: what a compaction now would put at risk (`forgot::at_risk`).
    AtRisk { id: u64, risk: Box<AtRisk> },
}

/// One row of the live view.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveRow {
    Message(LiveMessage),
    /// A model call: `number` counts the main calls (1-based); a compaction's own call
    /// has none and stays off the curve.
    Call {
        call: LiveCall,
        number: Option<usize>,
    },
    /// A tool call, `subject` the path or command it names (`tool_subject`).
    Tool {
        line: usize,
        id: String,
        name: String,
        subject: String,
    },
    /// A compaction, `index` its number in the session (0-based), as the lines so far
    /// describe it.
    Compaction {
        index: usize,
        compaction: Box<Compaction>,
    },
    Skipped {
        line: usize,
        what: String,
    },
    /// What happened to the file (truncated, gone, another session followed).
    Notice(String),
}

/// The settings for following and the last follower id, `App`'s one field for following (the
/// followed session's `LiveView` is one of `App`'s layers).
#[derive(Debug, Default)]
pub struct LiveState {
    options: LiveOptions,
    /// The last follower id handed out.
    seq: u64,
}

impl LiveState {
    pub fn options(&self) -> &LiveOptions {
        &self.options
    }

    pub fn set_options(&mut self, options: LiveOptions) {
        self.options = options;
    }

    /// The session to follow at start, once (the loop runs by then).
    pub fn take_start(&mut self) -> Option<Chosen> {
        self.options.follow.take()
    }

    /// A fresh view for `chosen` (the workbench opens it as a layer) and the request that
    /// starts its follower.
    pub fn start(&mut self, chosen: Chosen) -> (LiveView, FollowRequest) {
        self.seq += 1;
        let view = LiveView::new(self.seq, &chosen);
        let request = FollowRequest {
            id: self.seq,
            chosen,
            poll: self.options.poll,
            notify: self.options.notify,
            at_risk_within: self.options.at_risk_within,
        };
        (view, request)
    }
}

/// The followed session as far as it is read.
#[derive(Debug, Clone)]
pub struct LiveView {
    id: u64,
    path: PathBuf,
    why: String,
    /// How changes reach the follower (notifications, or polling only).
    waiting: String,
    format: Option<SessionFormat>,
    /// The lines there when it was opened are read: rows now come as they are written.
    caught_up: bool,
    rows: VecDeque<LiveRow>,
    /// Rows dropped from the front (`MAX_ROWS`).
    dropped: usize,
    /// Each compaction's row, by its index in the session.
    compaction_rows: Vec<usize>,
    /// The context of each main call (input + cache tokens), oldest first.
    curve: VecDeque<u64>,
    window: Option<u64>,
    tracker: HeadroomTracker,
    calls: usize,
    summary_calls: usize,
    messages: usize,
    tool_calls: usize,
    warnings: usize,
    skipped: usize,
    /// Times the file was read again from its start (truncated, replaced, back, switched).
    restarts: usize,
    /// The last thing that happened to the file, for the header.
    notice: Option<String>,
    /// Why following stopped, when it did.
    ended: Option<String>,
    /// The facts a compaction now would put at risk, as last read near the threshold.
    at_risk: Option<AtRisk>,
    /// The selected row (an index into all rows ever added), or None: the newest, kept
    /// in view as rows arrive.
    selected: Option<usize>,
    /// `ctxlab watch`'s own view, with nothing beneath it: Esc quits rather than closes.
    root: bool,
}

impl LiveView {
    fn new(id: u64, chosen: &Chosen) -> LiveView {
        LiveView {
            id,
            path: chosen.path.clone(),
            why: chosen.why.clone(),
            waiting: String::new(),
            format: None,
            caught_up: false,
            rows: VecDeque::new(),
            dropped: 0,
            compaction_rows: Vec::new(),
            curve: VecDeque::new(),
            window: None,
            tracker: HeadroomTracker::new(),
            calls: 0,
            summary_calls: 0,
            messages: 0,
            tool_calls: 0,
            warnings: 0,
            skipped: 0,
            restarts: 0,
            notice: None,
            ended: None,
            at_risk: None,
            selected: None,
            root: false,
        }
    }

    /// Marks the view as `ctxlab watch`'s own (Esc quits).
    pub fn set_root(&mut self) {
        self.root = true;
    }

    /// Whether it is `ctxlab watch`'s own view (Esc quits).
    pub fn root(&self) -> bool {
        self.root
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why this file is the one followed.
    pub fn why(&self) -> &str {
        &self.why
    }

    pub fn waiting(&self) -> &str {
        &self.waiting
    }

    pub fn format(&self) -> Option<SessionFormat> {
        self.format
    }

    pub fn caught_up(&self) -> bool {
        self.caught_up
    }

    /// The rows kept, oldest first; `dropped()` went before them.
    pub fn rows(&self) -> &VecDeque<LiveRow> {
        &self.rows
    }

    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The context of each main call kept, oldest first.
    pub fn curve(&self) -> &VecDeque<u64> {
        &self.curve
    }

    /// The window the file records with its calls (Codex), for the curve's line.
    pub fn window(&self) -> Option<u64> {
        self.window
    }

    pub fn headroom(&self) -> Headroom {
        self.tracker.headroom()
    }

    pub fn calls(&self) -> usize {
        self.calls
    }

    pub fn summary_calls(&self) -> usize {
        self.summary_calls
    }

    pub fn messages(&self) -> usize {
        self.messages
    }

    pub fn tool_calls(&self) -> usize {
        self.tool_calls
    }

    pub fn warnings(&self) -> usize {
        self.warnings
    }

    /// Lines of kinds the reader does not know, passed over (the opened view's count).
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    pub fn restarts(&self) -> usize {
        self.restarts
    }

    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// What a compaction now would put at risk, once the session came near its threshold;
    /// gone again after a compaction (its facts are then the next window's).
    pub fn at_risk(&self) -> Option<&AtRisk> {
        self.at_risk.as_ref()
    }

    /// The follower read the facts at risk.
    pub fn set_at_risk(&mut self, risk: AtRisk) {
        self.at_risk = Some(risk);
    }

    /// The selected row among `rows()`, the newest when none was chosen.
    pub fn selected(&self) -> Option<usize> {
        match self.selected {
            Some(s) => Some(
                s.saturating_sub(self.dropped)
                    .min(self.rows.len().checked_sub(1)?),
            ),
            None => self.rows.len().checked_sub(1),
        }
    }

    /// Whether the view keeps the newest row in view.
    pub fn at_tail(&self) -> bool {
        self.selected.is_none()
    }

    /// Moves the selection by `delta` rows; past the last row it follows the tail again.
    pub fn move_by(&mut self, delta: isize) {
        let Some(last) = self.rows.len().checked_sub(1) else {
            return;
        };
        let now = self.selected().unwrap_or(last) as isize;
        let to = (now + delta).clamp(0, last as isize) as usize;
        self.select(to);
    }

    /// Selects the `k`th row kept (the last one: the tail again).
    pub fn select(&mut self, k: usize) {
        let last = self.rows.len().saturating_sub(1);
        self.selected = (k < last).then_some(k + self.dropped);
    }

    /// The follower `id` stopped.
    pub fn end(&mut self, error: Option<String>) {
        self.ended = Some(error.unwrap_or_else(|| "the follower stopped".into()));
    }

    /// Folds one of the follower's events; true when it is a compaction written while
    /// following (the bell's moment: not one already in the file when it was opened).
    pub fn fold(&mut self, event: WatchEvent) -> bool {
        match event {
            WatchEvent::Following { path, why, waiting } => {
                if self.caught_up || !self.rows.is_empty() {
                    // Read again from its start: the session so far is replaced.
                    self.restart();
                }
                self.path = path;
                self.why = why;
                self.waiting = waiting;
                false
            }
            WatchEvent::Item {
                item, caught_up, ..
            } => self.item(item, caught_up),
            WatchEvent::CaughtUp {
                format,
                skipped,
                unknown_format,
                ..
            } => {
                self.caught_up = true;
                self.format = format;
                if let Some(f) = format {
                    self.tracker.set_format(f);
                }
                self.skipped = skipped;
                if unknown_format {
                    self.notice = Some(
                        "not a Claude Code or Codex session nor a proxy capture: nothing to show"
                            .into(),
                    );
                }
                false
            }
            WatchEvent::File { event, .. } => {
                let text = file_text(&event);
                if !matches!(event, FileEvent::LineTooLong { .. } | FileEvent::NotUtf8) {
                    self.notice = Some(text.clone());
                }
                self.push(LiveRow::Notice(text));
                false
            }
            WatchEvent::Recognised { format } => {
                self.format = Some(format);
                // The agent's rule with its defaults: the view reads no settings files.
                self.tracker.set_format(format);
                false
            }
            WatchEvent::Error { message, .. } => {
                let text = format!("cannot read on: {message}");
                self.push(LiveRow::Notice(text.clone()));
                self.ended = Some(text);
                false
            }
        }
    }

    fn restart(&mut self) {
        let notices: Vec<LiveRow> = self
            .rows
            .iter()
            .rev()
            .take_while(|r| matches!(r, LiveRow::Notice(_)))
            .cloned()
            .collect();
        self.dropped += self.rows.len();
        self.rows.clear();
        self.selected = None;
        for n in notices.into_iter().rev() {
            self.push(n);
        }
        self.compaction_rows.clear();
        self.curve.clear();
        self.window = None;
        self.tracker = HeadroomTracker::new();
        self.calls = 0;
        self.summary_calls = 0;
        self.messages = 0;
        self.tool_calls = 0;
        self.warnings = 0;
        self.skipped = 0;
        self.caught_up = false;
        self.at_risk = None;
        self.restarts += 1;
    }

    fn item(&mut self, item: LiveItem, caught_up: bool) -> bool {
        self.tracker.push(&item);
        match item {
            LiveItem::Call(call) => {
                let number = if call.summary {
                    self.summary_calls += 1;
                    None
                } else {
                    self.calls += 1;
                    if self.curve.len() == MAX_CURVE {
                        self.curve.pop_front();
                    }
                    self.curve.push_back(call.context_tokens);
                    if call.context_window.is_some() {
                        self.window = call.context_window;
                    }
                    Some(self.calls)
                };
                self.push(LiveRow::Call { call, number });
                false
            }
            LiveItem::Compaction {
                index,
                compaction,
                update,
                ..
            } => {
                if update
                    && let Some(at) = self.compaction_rows.get(index).copied()
                    && let Some(k) = at.checked_sub(self.dropped)
                    && let Some(LiveRow::Compaction { compaction: c, .. }) = self.rows.get_mut(k)
                {
                    *c = compaction;
                    return false;
                }
                if update && index < self.compaction_rows.len() {
                    // Its row was dropped (MAX_ROWS): nothing left to update.
                    return false;
                }
                self.compaction_rows.push(self.dropped + self.rows.len());
                self.push(LiveRow::Compaction { index, compaction });
                self.at_risk = None;
                caught_up && !update
            }
            LiveItem::Message(m) => {
                self.messages += 1;
                // A message with nothing to read (an answer of tool calls only, whose own
                // rows say them) is counted, not shown as an empty row.
                if !m.preview.trim().is_empty() || m.tool_results > 0 {
                    self.push(LiveRow::Message(m));
                }
                false
            }
            LiveItem::ToolCall {
                line,
                id,
                name,
                subject,
            } => {
                self.tool_calls += 1;
                self.push(LiveRow::Tool {
                    line,
                    id,
                    name,
                    subject,
                });
                false
            }
            LiveItem::Skipped { line, what } => {
                self.skipped += 1;
                self.push(LiveRow::Skipped { line, what });
                false
            }
            LiveItem::Warning(_) => {
                self.warnings += 1;
                false
            }
        }
    }

    fn push(&mut self, row: LiveRow) {
        if self.rows.len() == MAX_ROWS {
            self.rows.pop_front();
            self.dropped += 1;
        }
        self.rows.push_back(row);
    }
}

#[cfg(test)]
mod tests;
