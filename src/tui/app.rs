//! The TUI's state and its one mutator, `App::update`.
//!
//! `App` holds view state (focus, selections, scroll, overlays, filters) and the mirror of
//! the agent's history built from `AgentEvent`s; it never owns the history itself. `update`
//! takes one `Msg` (an agent event, a key, a mouse event, a resize, a tick, a refresh) and
//! returns effects as data (`Effect::Send`, `Effect::Quit`, `Effect::Refresh`) that the
//! loop performs, so it is tested without a terminal or an agent. It may read the
//! workspace's stored files when a message asks for it (refresh, open); it never reads the
//! clock (times come in messages or from the tick counter) and never draws.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui_textarea::TextArea;
use tiktoken_rs::CoreBPE;

use super::diff::{DiffLine, diff_rows};
use super::keys::{self, Action};
use super::layout::{self, Areas};
use super::replay::{Replay, replay};
use super::rows::{MessageInfo, wrap_lines};
use super::theme::Theme;
use crate::agent::events::{AgentEvent, ErrorKind, UserCommand};
use crate::compact::{Change, PipelineConfig, Stage, StageReport};
use crate::message::Message;
use crate::store::{Store, StoredFile};

/// How often the loop sends `Msg::Tick`.
pub const TICK: Duration = Duration::from_millis(100);
pub const TICKS_PER_SECOND: u64 = 1_000 / TICK.as_millis() as u64;
/// How many chars the tokenizer may chew per tick, so counting never stalls the UI.
const TOKEN_CHARS_PER_TICK: usize = 300_000;
/// How long a notice stays in the hint line.
const NOTICE_TICKS: u64 = 5 * TICKS_PER_SECOND;
/// Expanded rows' text is indented under the row's columns.
pub const EXPANDED_INDENT: usize = 6;
const WHEEL_ROWS: isize = 3;

/// Everything `update` reacts to. (No `Debug`: the tokenizer has none.)
pub enum Msg {
    Agent(AgentEvent),
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    Tick,
    /// Reload the browsers' file lists; `now` dates their ages.
    Refresh {
        now: SystemTime,
    },
    /// The tokenizer finished building (off the start-up path).
    Tokenizer(&'static CoreBPE),
    /// The agent's event channel closed.
    AgentGone,
}

/// What the loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(UserCommand),
    Quit,
    /// Send back `Msg::Refresh` with the current time.
    Refresh,
}

/// The focusable panes, numbered as the keys 1-5 select them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Conversation,
    Events,
    Outputs,
    Transcripts,
    Input,
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

/// A row of the mirrored history.
#[derive(Debug, Clone)]
pub struct HistRow {
    pub info: Arc<MessageInfo>,
    /// Index into `App::session` when this row is an appended message.
    pub session: Option<usize>,
    /// The last stage that touched this row.
    pub mark: Option<Stage>,
}

/// A message as it was appended, and whether the model still sees it.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub info: Arc<MessageInfo>,
    pub live: bool,
}

/// Selection and scroll of a list. `top` is the first row drawn.
#[derive(Debug, Clone, Default)]
pub struct ListState {
    pub selected: usize,
    pub top: usize,
    /// `MessageInfo::uid`s of expanded rows (ids survive index shifts).
    pub expanded: HashSet<u64>,
}

impl ListState {
    fn clamp(&mut self, len: usize) {
        if len == 0 {
            self.selected = 0;
            self.top = 0;
        } else {
            self.selected = self.selected.min(len - 1);
            self.top = self.top.min(self.selected);
        }
    }

    fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            return;
        }
        let s = self.selected as isize + delta;
        self.selected = s.clamp(0, len as isize - 1) as usize;
    }

    /// Moves `top` so the selected row fits in `viewport` lines, and pulls it back when
    /// rows below leave free space (after the list shrank or the screen grew).
    fn ensure_visible(&mut self, len: usize, viewport: usize, height: impl Fn(usize) -> usize) {
        let viewport = viewport.max(1);
        if len == 0 {
            self.top = 0;
            return;
        }
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected - self.top >= viewport {
            // Far below the screen: put the selection on the bottom line.
            self.top = self.selected;
            let mut used = height(self.selected);
            while self.top > 0 {
                let h = height(self.top - 1);
                if used + h > viewport {
                    break;
                }
                used += h;
                self.top -= 1;
            }
        } else {
            let mut used: usize = (self.top..=self.selected).map(&height).sum();
            while used > viewport && self.top < self.selected {
                used -= height(self.top);
                self.top += 1;
            }
        }
        // Rows from `top` to the end, counted only as far as the screen reaches.
        let mut used = 0;
        for i in self.top..len {
            used += height(i);
            if used >= viewport {
                return;
            }
        }
        while self.top > 0 {
            let h = height(self.top - 1);
            if used + h > viewport {
                break;
            }
            used += h;
            self.top -= 1;
        }
    }
}

/// One row of the events pane.
#[derive(Debug, Clone)]
pub struct EventRow {
    pub seq: usize,
    /// `App::tick` when the event arrived.
    pub tick: u64,
    pub kind: EventKind,
}

#[derive(Debug, Clone)]
pub enum EventKind {
    Stage {
        report: StageReport,
        /// Index into `App::diffs` when the stage changed the history.
        diff: Option<usize>,
    },
    /// The history was replaced outside a stage (e.g. cancel repair).
    Replaced {
        size_before: usize,
        size_after: usize,
        messages: usize,
        diff: usize,
    },
    Retry {
        attempt: u32,
        reason: String,
        wait: Duration,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    CompactRequested {
        focus: Option<String>,
    },
}

impl EventKind {
    pub fn diff(&self) -> Option<usize> {
        match self {
            EventKind::Stage { diff, .. } => *diff,
            EventKind::Replaced { diff, .. } => Some(*diff),
            _ => None,
        }
    }
}

/// The message list before and after one change.
#[derive(Debug, Clone)]
pub struct StageDiff {
    pub title: String,
    pub before: Vec<Arc<MessageInfo>>,
    pub after: Vec<Arc<MessageInfo>>,
}

/// A row of the persisted-outputs browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub relative: String,
    pub bytes: u64,
    pub age_secs: Option<u64>,
}

/// A row of the transcripts browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    pub relative: String,
    pub bytes: u64,
    pub age_secs: Option<u64>,
    pub messages: usize,
}

/// An open transcript: its messages as a list, and a replay once asked for.
#[derive(Debug, Clone)]
pub struct TranscriptView {
    pub relative: String,
    pub rows: Vec<Arc<MessageInfo>>,
    pub list: ListState,
    pub replay: Option<Replay>,
    /// Lines that were not messages.
    pub bad_lines: usize,
}

/// The scrollable text viewer with search.
#[derive(Debug, Clone, Default)]
pub struct Viewer {
    pub title: String,
    pub lines: Vec<String>,
    pub top: usize,
    pub query: String,
    /// The search prompt is open.
    pub typing: bool,
    /// Lines holding a match.
    pub matches: Vec<usize>,
    pub current: usize,
}

#[derive(Debug, Clone)]
pub struct DiffView {
    pub title: String,
    pub lines: Vec<DiffLine>,
    pub top: usize,
}

#[derive(Debug, Clone, Default)]
pub struct ConfigPanel {
    pub selected: usize,
    /// The value being typed.
    pub editing: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Overlay {
    Help { top: usize },
    Config(ConfigPanel),
    Diff(DiffView),
    Viewer(Viewer),
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
    Tool {
        name: String,
        since: u64,
    },
}

/// The whole UI state.
pub struct App {
    pub workspace: PathBuf,
    pub provider: String,
    pub config: PipelineConfig,
    pub theme: Theme,
    pub size: (u16, u16),
    pub tick: u64,
    pub focus: Pane,
    /// What the main area shows: Conversation, Outputs or Transcripts.
    pub main: Pane,

    pub history: Vec<HistRow>,
    pub session: Vec<SessionRow>,
    pub conv_view: ConvView,
    pub conv: ListState,
    pub sess: ListState,
    /// Text streamed for the assistant message not yet appended.
    pub streaming: String,
    pub history_chars: usize,
    pub history_tokens: usize,
    /// Some rows are not counted yet (tokenizer not ready or still counting).
    pub tokens_pending: bool,
    pub api_input_tokens: Option<u64>,
    /// Request size (chars) at each non-summary `RequestSent`.
    pub request_sizes: Vec<u64>,

    pub events: Vec<EventRow>,
    pub show_unchanged: bool,
    pub events_list: ListState,
    pub diffs: Vec<StageDiff>,

    pub outputs: Vec<OutputFile>,
    pub outputs_list: ListState,
    pub transcripts: Vec<TranscriptFile>,
    pub transcripts_list: ListState,
    pub transcript: Option<TranscriptView>,

    pub input: TextArea<'static>,
    pub inputs: Vec<String>,
    recall: Option<usize>,
    draft: String,

    pub overlay: Option<Overlay>,
    pub run_state: RunState,
    /// `NextStep::describe()` of the pending pause.
    pub paused: Option<String>,
    pub step_mode: bool,
    pub agent_gone: bool,
    last_ctrl_c: Option<u64>,
    pub notice: Option<(String, u64)>,

    tokenizer: Option<&'static CoreBPE>,
    token_queue: VecDeque<Arc<MessageInfo>>,
    store: Store,
    event_seq: usize,
}

impl App {
    pub fn new(
        workspace: PathBuf,
        provider: String,
        config: PipelineConfig,
        no_color: bool,
    ) -> App {
        let mut app = App {
            store: Store::new(workspace.clone()),
            workspace,
            provider,
            config,
            theme: Theme::new(no_color),
            size: (120, 40),
            tick: 0,
            focus: Pane::Input,
            main: Pane::Conversation,
            history: Vec::new(),
            session: Vec::new(),
            conv_view: ConvView::Model,
            conv: ListState::default(),
            sess: ListState::default(),
            streaming: String::new(),
            history_chars: 2,
            history_tokens: 0,
            tokens_pending: false,
            api_input_tokens: None,
            request_sizes: Vec::new(),
            events: Vec::new(),
            show_unchanged: false,
            events_list: ListState::default(),
            diffs: Vec::new(),
            outputs: Vec::new(),
            outputs_list: ListState::default(),
            transcripts: Vec::new(),
            transcripts_list: ListState::default(),
            transcript: None,
            input: TextArea::default(),
            inputs: Vec::new(),
            recall: None,
            draft: String::new(),
            overlay: None,
            run_state: RunState::Idle,
            paused: None,
            step_mode: false,
            agent_gone: false,
            last_ctrl_c: None,
            notice: None,
            tokenizer: None,
            token_queue: VecDeque::new(),
            event_seq: 0,
        };
        app.style_input();
        app
    }

    // ----- derived views, shared with the panes -----

    pub fn areas(&self) -> Option<Areas> {
        layout::areas(
            Rect::new(0, 0, self.size.0, self.size.1),
            self.input.lines().len(),
        )
    }

    /// Indices into `events` that the events pane shows.
    pub fn visible_events(&self) -> Vec<usize> {
        self.events
            .iter()
            .enumerate()
            .filter(|(_, e)| match &e.kind {
                EventKind::Stage { report, .. } => report.changed || self.show_unchanged,
                _ => true,
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The conversation pane's rows: (info, mark, dimmed).
    pub fn conv_len(&self) -> usize {
        match self.conv_view {
            ConvView::Model => self.history.len(),
            ConvView::Session => self.session.len(),
        }
    }

    pub fn conv_row(&self, i: usize) -> Option<(&Arc<MessageInfo>, Option<Stage>, bool)> {
        match self.conv_view {
            ConvView::Model => self.history.get(i).map(|r| (&r.info, r.mark, false)),
            ConvView::Session => self.session.get(i).map(|r| (&r.info, None, !r.live)),
        }
    }

    pub fn conv_list(&self) -> &ListState {
        match self.conv_view {
            ConvView::Model => &self.conv,
            ConvView::Session => &self.sess,
        }
    }

    pub fn notice_text(&self) -> Option<&str> {
        self.notice
            .as_ref()
            .filter(|(_, at)| self.tick.saturating_sub(*at) < NOTICE_TICKS)
            .map(|(s, _)| s.as_str())
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    fn input_is_empty(&self) -> bool {
        self.input.lines().iter().all(|l| l.is_empty())
    }

    /// Whether a tick changes what is drawn (spinner, elapsed time, notice expiry).
    pub fn animating(&self) -> bool {
        self.run_state != RunState::Idle
            || self.notice.is_some()
            || (self.tokenizer.is_some() && !self.token_queue.is_empty())
    }

    /// Shows `text` in the hint line for a few seconds.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.notice = Some((text.into(), self.tick));
    }

    // ----- the mutator -----

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Agent(ev) => self.on_agent(ev),
            Msg::Key(key) => self.on_key(key),
            Msg::Mouse(m) => {
                self.on_mouse(m);
                Vec::new()
            }
            Msg::Paste(text) => {
                if self.focus == Pane::Input && self.overlay.is_none() {
                    self.input.insert_str(text.replace('\r', ""));
                }
                Vec::new()
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.fix_scroll();
                Vec::new()
            }
            Msg::Tick => {
                self.tick += 1;
                if self.notice_text().is_none() {
                    self.notice = None;
                }
                self.count_some_tokens();
                Vec::new()
            }
            Msg::Refresh { now } => {
                self.refresh_files(now);
                Vec::new()
            }
            Msg::Tokenizer(bpe) => {
                self.tokenizer = Some(bpe);
                self.count_some_tokens();
                Vec::new()
            }
            Msg::AgentGone => {
                self.agent_gone = true;
                self.run_state = RunState::Idle;
                self.notify("the agent stopped; q quits");
                Vec::new()
            }
        }
    }

    // ----- agent events -----

    fn on_agent(&mut self, ev: AgentEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        match ev {
            AgentEvent::Ready {
                provider,
                workspace,
                config,
            } => {
                self.provider = provider;
                self.store = Store::new(workspace.clone());
                self.workspace = workspace;
                self.config = config;
                effects.push(Effect::Refresh);
            }
            AgentEvent::TurnStarted { .. } => {
                self.run_state = RunState::Waiting { since: self.tick };
                self.streaming.clear();
            }
            AgentEvent::MessageAppended { message } => {
                if message.role() == "assistant" {
                    self.streaming.clear();
                }
                self.append(message);
            }
            AgentEvent::StageRan { report, history } => {
                self.paused = None;
                let diff = match history {
                    Some(h) if report.changed => {
                        let title = report.summary();
                        Some(self.replace_history(&h, Some(&report), title))
                    }
                    _ => None,
                };
                if !report.files_written.is_empty() {
                    effects.push(Effect::Refresh);
                }
                self.push_event(EventKind::Stage { report, diff });
            }
            AgentEvent::HistoryReplaced { history, .. } => {
                if !self.mirror_equals(&history) {
                    let size_before = self.history_chars;
                    let diff = self.replace_history(&history, None, "history replaced".into());
                    self.push_event(EventKind::Replaced {
                        size_before,
                        size_after: self.history_chars,
                        messages: self.history.len(),
                        diff,
                    });
                }
            }
            AgentEvent::Paused { next } => self.paused = Some(next.describe()),
            AgentEvent::RequestSent {
                estimate_chars,
                summary,
                ..
            } => {
                self.paused = None;
                if !summary {
                    self.request_sizes.push(estimate_chars as u64);
                }
                self.run_state = RunState::Waiting { since: self.tick };
            }
            AgentEvent::TextDelta { text } => {
                self.paused = None;
                self.streaming.push_str(&text);
                if !matches!(self.run_state, RunState::Streaming { .. }) {
                    self.run_state = RunState::Streaming { since: self.tick };
                }
                self.follow_streaming();
            }
            AgentEvent::ToolStarted { name, .. } => {
                self.paused = None;
                self.run_state = RunState::Tool {
                    name,
                    since: self.tick,
                };
            }
            AgentEvent::ToolFinished { .. } => {
                self.run_state = RunState::Waiting { since: self.tick };
            }
            AgentEvent::Usage { input_tokens, .. } => {
                if input_tokens.is_some() {
                    self.api_input_tokens = input_tokens;
                }
            }
            AgentEvent::Retrying {
                attempt,
                reason,
                wait,
            } => self.push_event(EventKind::Retry {
                attempt,
                reason,
                wait,
            }),
            AgentEvent::CompactRequested { focus } => {
                self.push_event(EventKind::CompactRequested { focus })
            }
            AgentEvent::ConfigChanged { config } => self.config = config,
            AgentEvent::StepModeChanged { on } => {
                self.step_mode = on;
                if !on {
                    self.paused = None;
                }
            }
            AgentEvent::Error { kind, message } => {
                self.notify(format!("error: {message}"));
                self.push_event(EventKind::Error { kind, message });
            }
            AgentEvent::TurnDone { .. } => {
                self.run_state = RunState::Idle;
                self.paused = None;
                self.streaming.clear();
            }
        }
        effects
    }

    fn new_info(&mut self, m: Message) -> Arc<MessageInfo> {
        let info = MessageInfo::new(m);
        self.token_queue.push_back(info.clone());
        self.tokens_pending = true;
        info
    }

    fn append(&mut self, message: Message) {
        let follow_conv = self.conv.selected + 1 >= self.history.len();
        let follow_sess = self.sess.selected + 1 >= self.session.len();
        let info = self.new_info(message);
        self.session.push(SessionRow {
            info: info.clone(),
            live: true,
        });
        self.history.push(HistRow {
            info,
            session: Some(self.session.len() - 1),
            mark: None,
        });
        if follow_conv {
            self.conv.selected = self.history.len() - 1;
        }
        if follow_sess {
            self.sess.selected = self.session.len() - 1;
        }
        // Incremental, so a long session's appends stay O(1): `[a, b]` adds ", " per item.
        let n = self.history.len();
        if let Some(last) = self.history.last() {
            self.history_chars += last.info.chars + if n > 1 { 2 } else { 0 };
            match last.info.tokens() {
                Some(t) => self.history_tokens += t,
                None => self.tokens_pending = true,
            }
        }
        self.fix_scroll();
    }

    fn mirror_equals(&self, history: &[Message]) -> bool {
        history.len() == self.history.len()
            && history
                .iter()
                .zip(&self.history)
                .all(|(m, r)| r.info.chars == m.estimate_size() && r.info.message == *m)
    }

    /// Replaces the mirror, reusing the rows of equal messages (in order) so their session
    /// links, marks, token counts and expansion survive; marks the rows `report` touched.
    /// Returns the index of the diff kept for the change.
    fn replace_history(
        &mut self,
        new: &[Message],
        report: Option<&StageReport>,
        title: String,
    ) -> usize {
        let follow = self.conv.selected + 1 >= self.history.len();
        let old = std::mem::take(&mut self.history);
        let mut rows = Vec::with_capacity(new.len());
        let mut j = 0;
        for m in new {
            let size = m.estimate_size();
            let found =
                (j..old.len()).find(|&k| old[k].info.chars == size && old[k].info.message == *m);
            match found {
                Some(k) => {
                    rows.push(old[k].clone());
                    j = k + 1;
                }
                None => {
                    let info = self.new_info(m.clone());
                    rows.push(HistRow {
                        info,
                        session: None,
                        mark: None,
                    });
                }
            }
        }
        if let Some(report) = report {
            for c in &report.changes {
                let at = match c {
                    Change::Persisted { message, .. }
                    | Change::Placeholder { message, .. }
                    | Change::Saved { message, .. } => *message,
                    Change::Snipped { head_end, .. } | Change::Archived { head_end, .. } => {
                        *head_end
                    }
                    Change::Summarized { .. } => 0,
                };
                if let Some(r) = rows.get_mut(at) {
                    r.mark = Some(report.stage);
                }
            }
        }
        for r in &old {
            if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                s.live = false;
            }
        }
        for r in &rows {
            if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                s.live = true;
            }
        }
        self.diffs.push(StageDiff {
            title,
            before: old.iter().map(|r| r.info.clone()).collect(),
            after: rows.iter().map(|r| r.info.clone()).collect(),
        });
        self.history = rows;
        if follow {
            self.conv.selected = self.history.len().saturating_sub(1);
        }
        self.recompute_totals();
        self.fix_scroll();
        self.diffs.len() - 1
    }

    fn recompute_totals(&mut self) {
        let n = self.history.len();
        let items: usize = self.history.iter().map(|r| r.info.chars).sum();
        self.history_chars = 2 + items + 2 * n.saturating_sub(1);
        let mut total = 0;
        let mut pending = false;
        for r in &self.history {
            match r.info.tokens() {
                Some(t) => total += t,
                None => pending = true,
            }
        }
        self.history_tokens = total;
        self.tokens_pending = pending;
    }

    fn count_some_tokens(&mut self) {
        let Some(bpe) = self.tokenizer else {
            return;
        };
        let mut budget = TOKEN_CHARS_PER_TICK;
        let mut counted = false;
        while budget > 0 {
            let Some(info) = self.token_queue.pop_front() else {
                break;
            };
            // A row dropped from every list needs no count.
            if Arc::strong_count(&info) == 1 {
                continue;
            }
            info.count_tokens(|text| bpe.encode_ordinary(text).len());
            budget = budget.saturating_sub(info.chars);
            counted = true;
        }
        if counted {
            self.recompute_totals();
        }
    }

    fn push_event(&mut self, kind: EventKind) {
        let visible_before = self.visible_events().len();
        let follow = self.events_list.selected + 1 >= visible_before;
        self.event_seq += 1;
        self.events.push(EventRow {
            seq: self.event_seq,
            tick: self.tick,
            kind,
        });
        if follow {
            self.events_list.selected = self.visible_events().len().saturating_sub(1);
        }
        self.fix_scroll();
    }

    fn follow_streaming(&mut self) {
        if self.conv_view == ConvView::Model && self.conv.selected + 1 >= self.history.len() {
            self.fix_scroll();
        }
    }

    // ----- scrolling -----

    /// Lines the main pane's list may use.
    fn main_viewport(&self) -> (usize, usize) {
        let Some(a) = self.areas() else {
            return (1, 1);
        };
        let inner = layout::inner(a.main);
        (inner.width as usize, inner.height as usize)
    }

    fn transcript_viewport(&self) -> (usize, usize) {
        let Some(a) = self.areas() else {
            return (1, 1);
        };
        let has_replay = self.transcript.as_ref().is_some_and(|t| t.replay.is_some());
        let (list, _) = layout_transcript(a.main, has_replay);
        let inner = layout::inner(list);
        (inner.width as usize, inner.height as usize)
    }

    fn events_viewport(&self) -> usize {
        self.areas()
            .map(|a| layout::inner(a.events).height as usize)
            .unwrap_or(1)
    }

    fn list_viewport(&self) -> usize {
        // Browsers draw a header line under the border.
        self.main_viewport().1.saturating_sub(1)
    }

    fn overlay_viewport(&self) -> usize {
        let area = Rect::new(0, 0, self.size.0, self.size.1);
        layout::inner(layout::centered(area, 90, 85))
            .height
            .saturating_sub(1) as usize
    }

    /// Keeps every list's selection in range and on screen.
    fn fix_scroll(&mut self) {
        let (w, h) = self.main_viewport();
        let len = self.history.len();
        self.conv.clamp(len);
        let expanded = self.conv.expanded.clone();
        let history = &self.history;
        self.conv.ensure_visible(len, h, |i| {
            history
                .get(i)
                .map(|r| row_height(&r.info, &expanded, w, h))
                .unwrap_or(1)
        });
        let expanded = self.sess.expanded.clone();
        let session = &self.session;
        self.sess.clamp(session.len());
        self.sess.ensure_visible(session.len(), h, |i| {
            session
                .get(i)
                .map(|r| row_height(&r.info, &expanded, w, h))
                .unwrap_or(1)
        });
        let ev_len = self.visible_events().len();
        let ev_h = self.events_viewport();
        self.events_list.clamp(ev_len);
        self.events_list.ensure_visible(ev_len, ev_h, |_| 1);
        let lh = self.list_viewport();
        self.outputs_list.clamp(self.outputs.len());
        self.outputs_list
            .ensure_visible(self.outputs.len(), lh, |_| 1);
        self.transcripts_list.clamp(self.transcripts.len());
        self.transcripts_list
            .ensure_visible(self.transcripts.len(), lh, |_| 1);
        let (tw, th) = self.transcript_viewport();
        if let Some(t) = &mut self.transcript {
            let expanded = t.list.expanded.clone();
            let rows = &t.rows;
            t.list.clamp(rows.len());
            t.list.ensure_visible(rows.len(), th, |i| {
                rows.get(i)
                    .map(|r| row_height(r, &expanded, tw, th))
                    .unwrap_or(1)
            });
        }
    }

    // ----- keys -----

    fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if keys::is_ctrl_c(&key) {
            return self.ctrl_c();
        }
        if self.overlay.is_some() {
            return self.overlay_key(key);
        }
        if self.focus == Pane::Input {
            return self.input_key(key);
        }
        let Some(action) = keys::action(&key) else {
            return Vec::new();
        };
        match action {
            Action::Quit => return vec![Effect::Quit],
            Action::Help => self.overlay = Some(Overlay::Help { top: 0 }),
            Action::NextPane => return self.cycle_pane(1),
            Action::PrevPane => return self.cycle_pane(-1),
            Action::FocusPane(n) => {
                if let Some(p) = Pane::ORDER.get(usize::from(n).saturating_sub(1)) {
                    return self.focus_pane(*p);
                }
            }
            Action::Step => return self.step(),
            Action::Type => self.focus_pane_noeffect(Pane::Input),
            Action::Refresh => return vec![Effect::Refresh],
            _ => match self.focus {
                Pane::Conversation => self.conversation_action(action),
                Pane::Events => self.events_action(action),
                Pane::Outputs => self.outputs_action(action),
                Pane::Transcripts => return self.transcripts_action(action),
                Pane::Input => {}
            },
        }
        Vec::new()
    }

    fn ctrl_c(&mut self) -> Vec<Effect> {
        if let Some(at) = self.last_ctrl_c
            && self.tick.saturating_sub(at) <= TICKS_PER_SECOND
        {
            return vec![Effect::Quit];
        }
        self.last_ctrl_c = Some(self.tick);
        self.notify("cancel sent; Ctrl-C again within 1 s quits");
        vec![Effect::Send(UserCommand::Cancel)]
    }

    fn step(&mut self) -> Vec<Effect> {
        if self.paused.is_some() || self.step_mode {
            self.paused = None;
            vec![Effect::Send(UserCommand::Step)]
        } else {
            self.notify("Space steps only in step mode (/step)");
            Vec::new()
        }
    }

    fn cycle_pane(&mut self, delta: isize) -> Vec<Effect> {
        let i = self.focus.number() as isize - 1 + delta;
        let n = Pane::ORDER.len() as isize;
        let p = Pane::ORDER[i.rem_euclid(n) as usize];
        self.focus_pane(p)
    }

    fn focus_pane_noeffect(&mut self, p: Pane) {
        self.focus = p;
        if matches!(p, Pane::Conversation | Pane::Outputs | Pane::Transcripts) {
            self.main = p;
        }
        self.style_input();
    }

    fn focus_pane(&mut self, p: Pane) -> Vec<Effect> {
        self.focus_pane_noeffect(p);
        if matches!(p, Pane::Outputs | Pane::Transcripts) {
            vec![Effect::Refresh]
        } else {
            Vec::new()
        }
    }

    /// The input box shows its cursor only while focused.
    fn style_input(&mut self) {
        self.input.set_cursor_line_style(Style::default());
        if self.focus == Pane::Input {
            self.input
                .set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        } else {
            self.input.set_cursor_style(Style::default());
        }
        self.input.set_placeholder_text(
            "type a request; Enter sends, Alt-Enter new line, /compact /config /step",
        );
        self.input.set_placeholder_style(self.theme.dim());
    }

    fn page(&self) -> isize {
        (self.main_viewport().1.saturating_sub(1)).max(1) as isize
    }

    fn move_list(list: &mut ListState, action: Action, len: usize, page: isize) -> bool {
        match action {
            Action::Up => list.move_by(-1, len),
            Action::Down => list.move_by(1, len),
            Action::PageUp => list.move_by(-page, len),
            Action::PageDown => list.move_by(page, len),
            Action::Top => list.selected = 0,
            Action::Bottom => list.selected = len.saturating_sub(1),
            _ => return false,
        }
        true
    }

    fn conversation_action(&mut self, action: Action) {
        let page = self.page();
        let len = self.conv_len();
        let view = self.conv_view;
        let list = match view {
            ConvView::Model => &mut self.conv,
            ConvView::Session => &mut self.sess,
        };
        if Self::move_list(list, action, len, page) {
            self.fix_scroll();
            return;
        }
        match action {
            Action::Enter => {
                let uid = self
                    .conv_row(self.conv_list().selected)
                    .map(|(i, _, _)| i.uid);
                if let Some(uid) = uid {
                    let list = match view {
                        ConvView::Model => &mut self.conv,
                        ConvView::Session => &mut self.sess,
                    };
                    if !list.expanded.remove(&uid) {
                        list.expanded.insert(uid);
                    }
                }
                self.fix_scroll();
            }
            Action::ToggleView => {
                self.conv_view = match view {
                    ConvView::Model => ConvView::Session,
                    ConvView::Session => ConvView::Model,
                };
                self.fix_scroll();
            }
            Action::OpenFull => {
                if let Some((info, _, _)) = self.conv_row(self.conv_list().selected) {
                    let title = format!("message {} ({})", self.conv_list().selected, info.role());
                    let text = info.full_text();
                    self.open_viewer(title, &text);
                }
            }
            Action::Search => {
                self.focus_pane_noeffect(Pane::Input);
                self.input.insert_char('/');
            }
            _ => {}
        }
    }

    fn events_action(&mut self, action: Action) {
        let visible = self.visible_events();
        let page = self.events_viewport().max(1) as isize;
        if Self::move_list(&mut self.events_list, action, visible.len(), page) {
            self.fix_scroll();
            return;
        }
        match action {
            Action::ToggleUnchanged => {
                // Keep the same event selected across the filter change.
                let current = visible.get(self.events_list.selected).copied();
                self.show_unchanged = !self.show_unchanged;
                let now = self.visible_events();
                self.events_list.selected = current
                    .and_then(|c| now.iter().position(|&i| i >= c))
                    .unwrap_or(now.len().saturating_sub(1));
                self.fix_scroll();
            }
            Action::Enter => {
                let diff = visible
                    .get(self.events_list.selected)
                    .and_then(|&i| self.events.get(i))
                    .and_then(|e| e.kind.diff());
                match diff.and_then(|d| self.diffs.get(d)) {
                    Some(d) => {
                        self.overlay = Some(Overlay::Diff(DiffView {
                            title: d.title.clone(),
                            lines: diff_rows(&d.before, &d.after),
                            top: 0,
                        }))
                    }
                    None => self.notify("no diff: this row changed no messages"),
                }
            }
            _ => {}
        }
    }

    fn outputs_action(&mut self, action: Action) {
        let page = self.page();
        if Self::move_list(&mut self.outputs_list, action, self.outputs.len(), page) {
            self.fix_scroll();
            return;
        }
        let Some(file) = self.outputs.get(self.outputs_list.selected).cloned() else {
            return;
        };
        match action {
            Action::Enter => match std::fs::read(self.store.root().join(&file.relative)) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    self.open_viewer(file.relative.clone(), &text);
                }
                Err(e) => self.notify(format!("cannot read {}: {e}", file.relative)),
            },
            Action::JumpToMarker => self.jump_to_marker(&file.relative),
            _ => {}
        }
    }

    /// Selects the conversation row whose `<persisted-output>` marker names `relative`.
    pub fn jump_to_marker(&mut self, relative: &str) {
        let found = self
            .history
            .iter()
            .position(|r| r.info.persisted_paths.iter().any(|p| p == relative));
        match found {
            Some(i) => {
                self.conv_view = ConvView::Model;
                self.conv.selected = i;
                self.focus_pane_noeffect(Pane::Conversation);
                self.fix_scroll();
            }
            None => self.notify(format!("no message in the context points at {relative}")),
        }
    }

    fn transcripts_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.page();
        if let Some(t) = &mut self.transcript {
            let len = t.rows.len();
            if Self::move_list(&mut t.list, action, len, page) {
                self.fix_scroll();
                return Vec::new();
            }
            match action {
                Action::Back => self.transcript = None,
                Action::Enter => {
                    let uid = t.rows.get(t.list.selected).map(|r| r.uid);
                    if let Some(uid) = uid
                        && !t.list.expanded.remove(&uid)
                    {
                        t.list.expanded.insert(uid);
                    }
                    self.fix_scroll();
                }
                Action::Replay => {
                    let messages: Vec<Message> = t.rows.iter().map(|r| r.message.clone()).collect();
                    t.replay = Some(replay(&messages, self.config, &self.store));
                    self.fix_scroll();
                }
                Action::OpenFull => {
                    if let Some(r) = t.rows.get(t.list.selected) {
                        let title = format!("{} message {}", t.relative, t.list.selected);
                        let text = r.full_text();
                        self.open_viewer(title, &text);
                    }
                }
                _ => {}
            }
            return Vec::new();
        }
        if Self::move_list(
            &mut self.transcripts_list,
            action,
            self.transcripts.len(),
            page,
        ) {
            self.fix_scroll();
            return Vec::new();
        }
        let Some(file) = self
            .transcripts
            .get(self.transcripts_list.selected)
            .cloned()
        else {
            return Vec::new();
        };
        match action {
            Action::Enter => self.open_transcript(&file.relative, false),
            Action::Replay => self.open_transcript(&file.relative, true),
            _ => {}
        }
        Vec::new()
    }

    /// Opens a transcript (and replays it when asked).
    pub fn open_transcript(&mut self, relative: &str, replay_now: bool) {
        let text = match std::fs::read(self.store.root().join(relative)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                self.notify(format!("cannot read {relative}: {e}"));
                return;
            }
        };
        let mut rows = Vec::new();
        let mut bad_lines = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| Message::from_value(v).ok())
            {
                Some(m) => {
                    let info = MessageInfo::new(m);
                    self.token_queue.push_back(info.clone());
                    rows.push(info);
                }
                None => bad_lines += 1,
            }
        }
        let replay = replay_now.then(|| {
            let messages: Vec<Message> = rows.iter().map(|r| r.message.clone()).collect();
            replay(&messages, self.config, &self.store)
        });
        self.transcript = Some(TranscriptView {
            relative: relative.to_string(),
            rows,
            list: ListState::default(),
            replay,
            bad_lines,
        });
        self.fix_scroll();
    }

    fn refresh_files(&mut self, now: SystemTime) {
        let age = |f: &StoredFile| {
            f.modified
                .and_then(|m| now.duration_since(m).ok())
                .map(|d| d.as_secs())
        };
        self.outputs = self
            .store
            .list_tool_results()
            .iter()
            .map(|f| OutputFile {
                relative: f.relative.clone(),
                bytes: f.bytes,
                age_secs: age(f),
            })
            .collect();
        self.transcripts = self
            .store
            .list_transcripts()
            .iter()
            .map(|f| TranscriptFile {
                relative: f.relative.clone(),
                bytes: f.bytes,
                age_secs: age(f),
                messages: std::fs::read(&f.path)
                    .map(|b| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).count())
                    .unwrap_or(0),
            })
            .collect();
        self.fix_scroll();
    }

    /// Sets the browsers' lists directly (tests and snapshots use fixed ages).
    pub fn set_files(&mut self, outputs: Vec<OutputFile>, transcripts: Vec<TranscriptFile>) {
        self.outputs = outputs;
        self.transcripts = transcripts;
        self.fix_scroll();
    }

    fn open_viewer(&mut self, title: String, text: &str) {
        self.overlay = Some(Overlay::Viewer(Viewer {
            title,
            lines: text.lines().map(|l| l.replace('\t', "    ")).collect(),
            ..Viewer::default()
        }));
    }

    // ----- overlays -----

    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let page = self.overlay_viewport().max(1);
        let Some(overlay) = &mut self.overlay else {
            return Vec::new();
        };
        match overlay {
            Overlay::Help { top } => match keys::action(&key) {
                Some(Action::Back | Action::Help | Action::Quit) => self.overlay = None,
                Some(a) => scroll(top, a, keys::HELP.len(), page),
                None => {}
            },
            Overlay::Diff(d) => match keys::action(&key) {
                Some(Action::Back | Action::Quit) => self.overlay = None,
                Some(a) => scroll(&mut d.top, a, d.lines.len(), page),
                None => {}
            },
            Overlay::Viewer(v) => {
                if v.typing {
                    match key.code {
                        KeyCode::Esc => v.typing = false,
                        KeyCode::Enter => {
                            v.typing = false;
                            v.search();
                        }
                        KeyCode::Backspace => {
                            v.query.pop();
                        }
                        KeyCode::Char(c) => v.query.push(c),
                        _ => {}
                    }
                    return Vec::new();
                }
                match keys::action(&key) {
                    Some(Action::Back | Action::Quit) => self.overlay = None,
                    Some(Action::Search) => {
                        v.typing = true;
                        v.query.clear();
                    }
                    Some(Action::SearchNext) => v.next_match(true),
                    Some(Action::SearchPrev) => v.next_match(false),
                    Some(a) => scroll(&mut v.top, a, v.lines.len(), page),
                    None => {}
                }
            }
            Overlay::Config(_) => return self.config_key(key),
        }
        Vec::new()
    }

    fn config_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(Overlay::Config(panel)) = &mut self.overlay else {
            return Vec::new();
        };
        let keys_n = PipelineConfig::KEYS.len();
        if let Some(buf) = &mut panel.editing {
            match key.code {
                KeyCode::Esc => {
                    panel.editing = None;
                    panel.error = None;
                }
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Char(c) if c.is_ascii_digit() || c == '_' || c == ',' => buf.push(c),
                KeyCode::Enter => {
                    let key_name = PipelineConfig::KEYS[panel.selected.min(keys_n - 1)];
                    let value: String = buf.chars().filter(|c| *c != '_' && *c != ',').collect();
                    let mut config = self.config;
                    match config.set(key_name, &value) {
                        Ok(()) => {
                            panel.editing = None;
                            panel.error = None;
                            self.config = config;
                            self.notify(format!(
                                "{key_name} = {value} (applies from the next call)"
                            ));
                            return vec![Effect::Send(UserCommand::SetConfig(config))];
                        }
                        Err(e) => panel.error = Some(e.to_string()),
                    }
                }
                _ => {}
            }
            return Vec::new();
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => self.overlay = None,
            Some(Action::Up) => panel.selected = panel.selected.saturating_sub(1),
            Some(Action::Down) => panel.selected = (panel.selected + 1).min(keys_n - 1),
            Some(Action::Top) => panel.selected = 0,
            Some(Action::Bottom) => panel.selected = keys_n - 1,
            Some(Action::Enter) => {
                let key_name = PipelineConfig::KEYS[panel.selected.min(keys_n - 1)];
                panel.editing = Some(
                    self.config
                        .get(key_name)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                );
                panel.error = None;
            }
            _ => {}
        }
        Vec::new()
    }

    // ----- input -----

    fn input_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.focus_pane_noeffect(self.main),
            KeyCode::Tab => return self.cycle_pane(1),
            KeyCode::BackTab => return self.cycle_pane(-1),
            KeyCode::Enter if alt || shift => self.input.insert_newline(),
            // Terminals that cannot tell Shift-Enter apart send Ctrl-J for a new line.
            KeyCode::Char('j') if ctrl => self.input.insert_newline(),
            KeyCode::Enter => return self.submit(),
            KeyCode::Up if self.input.cursor().0 == 0 => self.recall(-1),
            KeyCode::Down if self.input.cursor().0 + 1 >= self.input.lines().len() => {
                self.recall(1)
            }
            KeyCode::Char(' ') if self.input_is_empty() && self.paused.is_some() => {
                return self.step();
            }
            _ => {
                self.input.input(key);
            }
        }
        Vec::new()
    }

    fn set_input(&mut self, text: &str) {
        self.input = TextArea::new(text.split('\n').map(str::to_string).collect());
        self.input.move_cursor(ratatui_textarea::CursorMove::Bottom);
        self.input.move_cursor(ratatui_textarea::CursorMove::End);
        self.style_input();
    }

    /// Walks the earlier inputs: -1 older, +1 newer (past the newest: the draft).
    fn recall(&mut self, dir: isize) {
        if self.inputs.is_empty() {
            return;
        }
        let next = match (self.recall, dir < 0) {
            (None, true) => {
                self.draft = self.input_text();
                Some(self.inputs.len() - 1)
            }
            (None, false) => return,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < self.inputs.len() => Some(i + 1),
            (Some(_), false) => None,
        };
        self.recall = next;
        let text = match next {
            Some(i) => self.inputs[i].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.set_input(&text);
    }

    fn submit(&mut self) -> Vec<Effect> {
        let text = self.input_text();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        if self.inputs.last().map(String::as_str) != Some(text.as_str()) {
            self.inputs.push(text.clone());
        }
        self.recall = None;
        self.draft.clear();
        self.set_input("");
        if let Some(cmd) = trimmed.strip_prefix('/') {
            let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
            let rest = rest.trim();
            return match name {
                "compact" => vec![Effect::Send(UserCommand::Compact {
                    focus: (!rest.is_empty()).then(|| rest.to_string()),
                })],
                "config" => {
                    self.overlay = Some(Overlay::Config(ConfigPanel::default()));
                    Vec::new()
                }
                "step" => {
                    self.step_mode = !self.step_mode;
                    vec![Effect::Send(UserCommand::StepMode(self.step_mode))]
                }
                "help" => {
                    self.overlay = Some(Overlay::Help { top: 0 });
                    Vec::new()
                }
                "quit" => vec![Effect::Quit],
                _ => {
                    self.notify(format!(
                        "unknown command /{name}: /compact [focus], /config, /step, /help, /quit"
                    ));
                    Vec::new()
                }
            };
        }
        vec![Effect::Send(UserCommand::Submit(text))]
    }

    // ----- mouse -----

    fn on_mouse(&mut self, m: MouseEvent) {
        let delta = match m.kind {
            MouseEventKind::ScrollUp => -WHEEL_ROWS,
            MouseEventKind::ScrollDown => WHEEL_ROWS,
            MouseEventKind::Down(_) => {
                self.click(m.column, m.row);
                return;
            }
            _ => return,
        };
        let action = if delta < 0 { Action::Up } else { Action::Down };
        if self.overlay.is_some() {
            for _ in 0..delta.unsigned_abs() {
                self.overlay_key(KeyEvent::new(
                    if delta < 0 {
                        KeyCode::Up
                    } else {
                        KeyCode::Down
                    },
                    KeyModifiers::NONE,
                ));
            }
            return;
        }
        let Some(a) = self.areas() else {
            return;
        };
        let pane = if layout::contains(a.main, m.column, m.row) {
            self.main
        } else if layout::contains(a.events, m.column, m.row) {
            Pane::Events
        } else {
            return;
        };
        for _ in 0..delta.unsigned_abs() {
            match pane {
                Pane::Conversation => self.conversation_action(action),
                Pane::Events => self.events_action(action),
                Pane::Outputs => self.outputs_action(action),
                Pane::Transcripts => {
                    self.transcripts_action(action);
                }
                Pane::Input => {}
            }
        }
    }

    fn click(&mut self, x: u16, y: u16) {
        if self.overlay.is_some() {
            return;
        }
        let Some(a) = self.areas() else {
            return;
        };
        if layout::contains(a.main, x, y) {
            self.focus_pane_noeffect(self.main);
        } else if layout::contains(a.events, x, y) {
            self.focus_pane_noeffect(Pane::Events);
        } else if layout::contains(a.input, x, y) {
            self.focus_pane_noeffect(Pane::Input);
        }
    }
}

fn scroll(top: &mut usize, action: Action, len: usize, page: usize) {
    let max = len.saturating_sub(1);
    *top = match action {
        Action::Up => top.saturating_sub(1),
        Action::Down => (*top + 1).min(max),
        Action::PageUp => top.saturating_sub(page),
        Action::PageDown => (*top + page).min(max),
        Action::Top => 0,
        Action::Bottom => len.saturating_sub(page),
        _ => *top,
    };
}

impl Viewer {
    fn search(&mut self) {
        let q = self.query.to_lowercase();
        self.matches = if q.is_empty() {
            Vec::new()
        } else {
            self.lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.to_lowercase().contains(&q))
                .map(|(i, _)| i)
                .collect()
        };
        self.current = self
            .matches
            .iter()
            .position(|&l| l >= self.top)
            .unwrap_or(0);
        if let Some(&l) = self.matches.get(self.current) {
            self.top = l;
        }
    }

    fn next_match(&mut self, forward: bool) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        self.current = if forward {
            (self.current + 1) % n
        } else {
            (self.current + n - 1) % n
        };
        self.top = self.matches[self.current];
    }
}

/// The transcript view's split of the main area: the message list, and the replay panel.
pub fn layout_transcript(main: Rect, replay: bool) -> (Rect, Option<Rect>) {
    if !replay {
        return (main, None);
    }
    // The replay needs more room than the list it summarizes.
    let (list, rest) = crate::tui::layout::split_top(main, (main.height / 3).max(3));
    (list, Some(rest))
}

/// Lines an expanded row's text may take so the selected row always fits on screen.
pub fn expanded_cap(viewport: usize) -> usize {
    viewport.saturating_sub(2).max(1)
}

/// The expanded text of a row, wrapped, and whether more was cut.
pub fn expanded_lines(info: &MessageInfo, width: usize, viewport: usize) -> (Vec<String>, bool) {
    wrap_lines(
        &info.full_text(),
        width.saturating_sub(EXPANDED_INDENT).max(1),
        expanded_cap(viewport),
    )
}

/// Lines a row takes: one collapsed; expanded, its text plus a "more" line when cut.
pub fn row_height(
    info: &MessageInfo,
    expanded: &HashSet<u64>,
    width: usize,
    viewport: usize,
) -> usize {
    if !expanded.contains(&info.uid) {
        return 1;
    }
    let (lines, more) = expanded_lines(info, width, viewport);
    1 + lines.len() + usize::from(more)
}
