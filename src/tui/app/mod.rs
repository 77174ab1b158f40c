//! The TUI's state and its one mutator, `App::update`.
//!
//! `App` holds view state (focus, selections, scroll, overlays, filters, what is loading)
//! and the mirror of the agent's history built from `AgentEvent`s; it never owns the
//! history itself. `update` takes one `Msg` (an agent event, a key, a mouse event, a
//! resize, a tick, a finished job) and returns effects as data (`Effect::Send`,
//! `Effect::Quit`, `Effect::Work`, `Effect::Restart`) that the loop performs, so it is
//! tested without a terminal or an agent. It performs no I/O: reading the workspace's files,
//! replaying a transcript and remembering that the legend was seen are `Work` the loop runs
//! off the UI task (see `tui::work`); a restart is the loop's. It never reads the clock
//! (times come in messages or from the tick counter) and never draws.
//!
//! Panes own their state, private fields behind methods, and `App` routes messages to
//! them: `conversation` (`ConversationState`: the mirror, the full session, selections,
//! streaming text, totals, usage), `tokens` (`TokenCounter`), `events` (`EventsState`:
//! rows, filter, selection, diffs), `outputs` (`OutputsState`), `transcripts`
//! (`TranscriptsState`), `sessions` (`SessionsState`), `timeline` (`TimelineView`, over the
//! `Timeline` fold `App` keeps), `compare` (`CompareView`), `viewer` (`Viewer`), `input`
//! (`InputState`) and `step` (`StepState`). Every field of `App` is private; the panes
//! read through methods. A new view adds one field and its messages.
//!
//! One concern per file: `state` (the data types), `list` (selection and scrolling),
//! `history` (routing the agent's history to the conversation), `agent_events`, `navigation` (keys outside the input), `pane_actions`
//! (conversation, events, outputs actions), `transcripts`, `sessions` (the sessions
//! browser and an opened session), `jobs` (asking for work and
//! taking its results), `overlays`, `input` (input box and slash commands), `mouse`,
//! `step` (step mode's keys, the pause's highlighted rows, the first-run legend, restart),
//! `compare` (the compare view: strategies side by side on one session).

mod agent_events;
mod compare;
mod context_view;
mod conversation;
mod diff_view;
mod events;
mod forgot;
mod help_at;
mod history;
mod input;
mod jobs;
mod list;
mod mouse;
mod navigation;
mod outputs;
mod overlays;
mod pane_actions;
mod search;
mod sessions;
mod state;
mod step;
mod timeline;
mod tokens;
mod transcripts;
mod viewer;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use tiktoken_rs::CoreBPE;

use super::layout::{self, Areas};
use super::theme::Theme;
use super::work::{Done, JobId, Work};
use crate::agent::events::{AgentEvent, UserCommand};
use crate::compact::PipelineConfig;
use crate::timeline::{Source, StepId, Timeline};

pub use super::work::{OutputFile, TranscriptFile};
pub use compare::{CompareView, default_strategies, parse_strategies};
pub use context_view::ContextView;
pub use conversation::{ConversationState, HistRow, SessionRow};
pub use events::EventsState;
pub use input::{InputState, SlashCommand};
pub use list::{
    EXPANDED_INDENT, ListState, expanded_cap, expanded_lines, layout_transcript, row_height,
};
pub use outputs::OutputsState;
pub use search::{Hit, Search, event_text as search_event_text};
pub use sessions::SessionsState;
pub use state::ConvRow;
pub use state::{
    ConfigPanel, ConvView, DIFF_CONTEXT, DiffView, EventKind, EventRow, LoadKind, Loading, Overlay,
    Pane, RunState, StageDiff,
};
pub use step::StepState;
pub use timeline::TimelineView;
use tokens::TokenCounter;
pub use transcripts::{TranscriptView, TranscriptsState};
pub use viewer::{TextMatch, Viewer, ViewerKey};

/// How often the loop sends `Msg::Tick`.
pub const TICK: Duration = Duration::from_millis(100);
pub const TICKS_PER_SECOND: u64 = 1_000 / TICK.as_millis() as u64;
/// How long a notice stays in the hint line, at least.
const NOTICE_TICKS: u64 = 5 * TICKS_PER_SECOND;
/// A notice wider than the hint line is shown a page at a time, each page this long.
pub const NOTICE_PAGE_TICKS: u64 = 4 * TICKS_PER_SECOND;

/// Everything `update` reacts to. (No `Debug`: the tokenizer has none.)
pub enum Msg {
    Agent(AgentEvent),
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    Tick,
    /// A job asked for with `Effect::Work` finished.
    Done(Done),
    /// The tokenizer finished building (off the start-up path).
    Tokenizer(&'static CoreBPE),
    /// The agent's event channel closed.
    AgentGone,
    /// `/restart` started a fresh agent (its events follow): `provider` is its label,
    /// `notices` its start-up notices.
    Restarted {
        provider: String,
        notices: Vec<String>,
    },
    /// `/restart` could not start a fresh agent.
    RestartFailed(String),
    /// What the caller knows before the loop starts (start-up notices, where scratch
    /// stores go, sessions to open, a legend not seen yet). Its jobs are asked for by
    /// `LoopStarted`, once the loop can run them.
    Start(Box<Startup>),
    /// The loop is running: the jobs to do first (clear old scratch stores, list the
    /// sessions, open the session `ctxlab open` named).
    LoopStarted,
}

/// The start-up facts `Msg::Start` carries (the loop's caller read them; `App` reads no disk).
#[derive(Debug, Clone, Default)]
pub struct Startup {
    pub notices: Vec<String>,
    /// Where scratch stores go (`tui::sessions::scratch::scratch_root`).
    pub scratch_root: Option<PathBuf>,
    pub sessions: Option<StartSessions>,
    /// The file that says the first-run legend was seen, when it does not exist yet: the
    /// legend shows, and closing it asks for the file.
    pub unseen_legend: Option<PathBuf>,
}

/// Sessions to show at start.
#[derive(Debug, Clone)]
pub enum StartSessions {
    /// The browser over these files and folders (the default places when empty).
    Browse(Vec<PathBuf>),
    /// One session file, opened at once (`bytes`: its size when known).
    File { path: PathBuf, bytes: Option<u64> },
}

/// What the loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(UserCommand),
    Quit,
    /// Run this job off the UI task and send back `Msg::Done` with its result.
    Work(Work),
    /// Replace the agent with a fresh one (the scenario from the start, in a fresh
    /// workspace); the loop answers `Msg::Restarted` or `Msg::RestartFailed`.
    Restart,
}

/// The whole UI state: a router of owned parts. Each pane or feature keeps its state
/// behind methods (`conversation`, `events`, `timeline_view`, `compare`, `outputs`,
/// `transcripts`, `sessions`, `input`, `step`, `tokens`); the rest is the screen's own
/// (size, focus, overlays, notices) and the agent's facts (workspace, provider, config).
pub struct App {
    workspace: PathBuf,
    provider: String,
    config: PipelineConfig,
    theme: Theme,
    size: (u16, u16),
    tick: u64,
    focus: Pane,
    /// What the main area shows: Conversation, Outputs or Transcripts.
    main: Pane,

    /// The conversation pane: the mirror, the full session, totals, streaming text.
    conversation: ConversationState,
    /// Rows waiting for a token count and the batch being counted.
    tokens: TokenCounter,
    /// The events pane: its rows, filter, selection and the diffs behind them.
    events: EventsState,
    /// Every model call, the stages before it and where each message went, built from the
    /// same events as the mirror (`crate::timeline`).
    timeline: Timeline,
    /// The timeline pane, when open; the conversation then shows its selected call.
    timeline_view: Option<TimelineView>,
    /// The last search across the conversation, the full session and the events.
    search: Option<Search>,
    /// The compare view (`C`, `/compare`), when open: it covers the panes.
    compare: Option<CompareView>,
    /// Where the context goes (`w` in the timeline), when open: it covers the panes.
    context: Option<ContextView>,
    /// The live run's recorded events (refusals, compact tool calls), folded as a
    /// recording's reader folds them, so the compare view replays the live run as it ran.
    live_record: crate::record::LiveRecord,

    /// The outputs pane: persisted outputs and the selection.
    outputs: OutputsState,
    /// The transcripts pane: the listing, its selection, the open transcript.
    transcripts: TranscriptsState,
    /// The job the screen is waiting for (a transcript, a replay, an output), if any.
    loading: Option<Loading>,
    /// The sessions browser (a mode of the transcripts pane) and the opened session.
    sessions: SessionsState,

    /// The input box: its text and the inputs sent before.
    input: InputState,

    overlay: Option<Overlay>,
    /// Overlays under the open one (a diff under the viewer it opened).
    overlay_stack: Vec<Overlay>,
    run_state: RunState,
    /// Step mode: on or off, the pending pause, a "run to" not reached yet.
    step: StepState,
    agent_gone: bool,
    last_ctrl_c: Option<u64>,
    notice: Option<(String, u64)>,
    /// Notices waiting for the hint line, shown one after the other.
    notices_queued: VecDeque<String>,
    /// The file whose existence says the first-run legend was seen (None: not remembered).
    legend_marker: Option<PathBuf>,
    /// The last job id handed out.
    job_seq: JobId,
}

impl App {
    pub fn new(
        workspace: PathBuf,
        provider: String,
        config: PipelineConfig,
        no_color: bool,
    ) -> App {
        let mut app = App {
            workspace,
            provider,
            config,
            theme: Theme::new(no_color),
            size: (120, 40),
            tick: 0,
            // Outside the input: `q` and `?` are keys from the first second; `i` types.
            focus: Pane::Conversation,
            main: Pane::Conversation,
            conversation: ConversationState::default(),
            tokens: TokenCounter::default(),
            events: EventsState::default(),
            timeline: Timeline::new(Source::Live, config.context_limit),
            timeline_view: None,
            search: None,
            compare: None,
            context: None,
            live_record: crate::record::LiveRecord::new("workbench"),
            outputs: OutputsState::default(),
            transcripts: TranscriptsState::default(),
            loading: None,
            sessions: Default::default(),
            input: InputState::default(),
            overlay: None,
            overlay_stack: Vec::new(),
            run_state: RunState::Idle,
            step: StepState::default(),
            agent_gone: false,
            last_ctrl_c: None,
            notice: None,
            notices_queued: VecDeque::new(),
            legend_marker: None,
            job_seq: 0,
        };
        app.style_input();
        app
    }

    // ----- what the panes read -----

    /// The agent's workspace.
    pub fn workspace(&self) -> &std::path::Path {
        &self.workspace
    }

    /// The model's label (`scripted`, a provider and model).
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The pipeline's settings as the agent last said them.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// The terminal's size (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        self.size
    }

    /// Ticks since the start (the clock a spinner and elapsed times read).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    pub fn focus(&self) -> Pane {
        self.focus
    }

    /// What the main area shows: Conversation, Outputs or Transcripts.
    pub fn main(&self) -> Pane {
        self.main
    }

    /// The conversation pane's state.
    pub fn conversation(&self) -> &ConversationState {
        &self.conversation
    }

    /// The last search, if any.
    pub fn search(&self) -> Option<&Search> {
        self.search.as_ref()
    }

    /// The job the screen is waiting for, if any.
    pub fn loading(&self) -> Option<&Loading> {
        self.loading.as_ref()
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    /// What the agent is doing.
    pub fn run_state(&self) -> &RunState {
        &self.run_state
    }

    /// Whether the agent's event channel closed.
    pub fn agent_gone(&self) -> bool {
        self.agent_gone
    }

    /// The notice in the hint line and the tick it was shown at (expired or not).
    pub fn notice(&self) -> Option<(&str, u64)> {
        self.notice.as_ref().map(|(s, at)| (s.as_str(), *at))
    }

    // ----- derived views, shared with the panes -----

    pub fn areas(&self) -> Option<Areas> {
        layout::areas_for(
            Rect::new(0, 0, self.size.0, self.size.1),
            self.input_rows(),
            self.timeline_view.is_some(),
        )
    }

    /// The `EventRow::seq` of the stage event that became timeline step `step`.
    pub fn event_for_step(&self, step: StepId) -> Option<usize> {
        self.events.rows().iter().find_map(|e| match e.kind {
            EventKind::Stage { step: Some(s), .. } if s == step => Some(e.seq),
            _ => None,
        })
    }

    /// The outputs pane's state.
    pub fn outputs(&self) -> &OutputsState {
        &self.outputs
    }

    /// The events pane's state.
    pub fn events_state(&self) -> &EventsState {
        &self.events
    }

    /// The events pane's rows, oldest first.
    pub fn events(&self) -> &[EventRow] {
        self.events.rows()
    }

    /// The before/after lists behind the events' `Δ`, oldest first (`EventKind::diff`
    /// names one).
    pub fn diffs(&self) -> &[StageDiff] {
        self.events.diffs()
    }

    /// Whether the events pane shows stages that changed nothing (`u`).
    pub fn show_unchanged(&self) -> bool {
        self.events.show_unchanged()
    }

    /// Indices into `events()` that the events pane shows.
    pub fn visible_events(&self) -> Vec<usize> {
        self.events.visible()
    }

    /// How many rows the conversation pane's current view has (the selected call's
    /// request while the timeline is open).
    pub fn conv_len(&self) -> usize {
        if let Some(v) = &self.timeline_view {
            return v.rows().len();
        }
        match self.conversation.view() {
            ConvView::Model => self.conversation.history().len(),
            ConvView::Session => self.conversation.session().len(),
        }
    }

    /// A conversation pane row: the message, the stage that last touched it, whether it is
    /// dimmed (gone from the context) and, in the full session, where it went.
    pub fn conv_row(&self, i: usize) -> Option<ConvRow<'_>> {
        if let Some(v) = &self.timeline_view {
            return v.rows().get(i).map(|info| ConvRow {
                info,
                mark: v.mark(i),
                dimmed: false,
                note: None,
            });
        }
        let c = &self.conversation;
        match c.view() {
            ConvView::Model => c.history().get(i).map(|r| ConvRow {
                info: r.info(),
                mark: r.mark(),
                dimmed: false,
                note: c.cut_note(r.info(), None),
            }),
            ConvView::Session => c.session().get(i).map(|r| ConvRow {
                info: r.info(),
                mark: None,
                dimmed: !r.live(),
                note: c.cut_note(r.info(), (!r.live()).then(|| self.fate_note(i)).flatten()),
            }),
        }
    }

    pub fn conv_list(&self) -> &ListState {
        if let Some(v) = &self.timeline_view {
            return v.list();
        }
        self.conversation.list(self.conversation.view())
    }

    pub fn notice_text(&self) -> Option<&str> {
        self.notice
            .as_ref()
            .filter(|(s, at)| self.tick.saturating_sub(*at) < notice_ticks(s, self.size.0))
            .map(|(s, _)| s.as_str())
    }

    /// The start-up notices, in full (the legend lists them).
    pub fn notices(&self) -> Vec<&str> {
        self.events
            .rows()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Notice { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn input_text(&self) -> String {
        self.input.text()
    }

    /// Whether a tick changes what is drawn (spinner, elapsed time, notice expiry).
    pub fn animating(&self) -> bool {
        self.run_state != RunState::Idle
            || self.notice.is_some()
            || !self.notices_queued.is_empty()
            || self.loading.is_some()
            || self.compare.as_ref().is_some_and(|c| c.job().is_some())
            || self.tokens.busy()
    }

    /// Shows `text` in the hint line for a few seconds (longer when it is long).
    pub fn notify(&mut self, text: impl Into<String>) {
        self.notice = Some((text.into(), self.tick));
    }

    /// Shows `text` after the notices already waiting, each in turn: start-up notices are
    /// read one by one instead of being cut off together.
    pub fn notify_queued(&mut self, text: impl Into<String>) {
        if self.notice_text().is_none() && self.notices_queued.is_empty() {
            self.notify(text);
        } else {
            self.notices_queued.push_back(text.into());
        }
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
                    self.input.insert_str(&text.replace('\r', ""));
                }
                Vec::new()
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.fix_scroll();
                self.reshow_pause_rows();
                Vec::new()
            }
            Msg::Tick => {
                self.tick += 1;
                if self.notice_text().is_none() {
                    self.notice = None;
                    if let Some(next) = self.notices_queued.pop_front() {
                        self.notify(next);
                    }
                }
                self.count_tokens()
            }
            Msg::Done(done) => self.on_done(done),
            Msg::Tokenizer(bpe) => {
                self.tokens.set_tokenizer(bpe);
                self.count_tokens()
            }
            Msg::AgentGone => {
                self.agent_gone = true;
                self.run_state = RunState::Idle;
                self.notify("the agent stopped; q quits");
                Vec::new()
            }
            Msg::Restarted { provider, notices } => self.restarted(provider, notices),
            Msg::RestartFailed(why) => {
                self.notify(format!("restart failed: {why}"));
                Vec::new()
            }
            Msg::Start(start) => {
                self.start(*start);
                Vec::new()
            }
            Msg::LoopStarted => self.start_effects(),
        }
    }
}

/// A notice in pages that fit a hint line `width` columns wide (with room for `(1/2)`).
pub fn notice_pages(text: &str, width: u16) -> Vec<String> {
    crate::tui::pause::wrap_words(text, (width as usize).saturating_sub(6).max(1))
}

/// Ticks a notice stays: five seconds, or every page its time when it has several.
fn notice_ticks(text: &str, width: u16) -> u64 {
    NOTICE_TICKS.max(notice_pages(text, width).len() as u64 * NOTICE_PAGE_TICKS)
}
