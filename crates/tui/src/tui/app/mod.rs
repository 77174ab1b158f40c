//! The TUI's state and its one mutator, `App::update`.
//!
//! `App` holds view state (focus, selections, scroll, covering views, filters, what is loading)
//! and the mirror of the agent's history built from `AgentEvent`s; it never owns the
//! history itself. `update` takes one `Msg` (an agent event, a key, a mouse event, a
//! resize, a tick, a finished job, a followed session's event) and returns effects as data
//! (`Effect::Send`, `Effect::Quit`, `Effect::Work`, `Effect::Restart`, `Effect::Follow`,
//! `Effect::StopFollowing`, `Effect::Bell`) that the loop performs, so it is
//! tested without a terminal or an agent. It performs no I/O: reading the workspace's files,
//! replaying a transcript and remembering that the legend was seen are `Work` the loop runs
//! off the UI task (see `tui::work`); a restart is the loop's. It never reads the clock
//! (times come in messages or from the tick counter) and never draws (each covering view
//! draws itself in its `View::draw`, called by `screen::render` and never by `update`).
//!
//! `App` is a router of owned parts and routes each message to them: `screen` (`Screen`:
//! size, tick, focus, notices), `layers` (the views covering the panes, `layers.rs`: the
//! top one takes every key and mouse event and is drawn last), `agent` (`AgentFacts`:
//! workspace, provider, settings, run state, the live run's recorded events), `jobs`
//! (`Jobs`: what the screen waits for), and one part per pane: `conversation`
//! (`ConversationState`), `tokens` (`TokenCounter`), `events` (`EventsState`), `outputs`
//! (`OutputsState`), `transcripts` (`TranscriptsState`), `sessions` (`SessionsState`),
//! `timeline` (the `Timeline` fold) and `timeline_view` (`TimelineView`), `input`
//! (`InputState`) and `step` (`StepState`). Every field of `App` is private; the panes read
//! through methods. Each pane draws in a `draw.rs` beside its state (`events/draw.rs`, …),
//! as each covering view does; `screen::render` places them. A pane's state keeps its fields private behind methods; the three
//! shared parts expose fields to `App`'s own modules only (`pub(super)`), since every
//! handler reads the screen and the agent's facts. A new pane adds one field and its
//! messages; a new covering view adds a `Layer` kind and its `View`.
//!
//! One concern per file: `state` (the data types), `list` (selection and scrolling),
//! `history` (routing the agent's history to the conversation), `agent_events`,
//! `navigation` (keys outside the input), `pane_actions` (the keys that cross panes),
//! `transcripts`, `sessions` (the sessions browser and an opened session), `jobs`
//! (asking for work and taking its results), `layers` (the covering views' stack; the
//! `View` trait is declared here), one module per covering view with its state, keys, mouse
//! and drawing (`help`, `legend`, `config_panel`, `diff_view`, `viewer`, `compare`,
//! `context_view`, `requests_view`, `live`, `explain`, each drawing in its `draw.rs`),
//! `pane_title` (what the panes' titles share), `input` (input box and slash commands),
//! `mouse`, `step` (step mode's keys, the pause's highlighted rows, the first-run legend,
//! restart), `compare` (the compare view: strategies side by side on one session), `live`
//! (the live view of a followed session: its events folded, its keys, its drawing, the bell
//! as an effect).

mod agent_events;
mod agent_facts;
mod branch;
mod compare;
mod config_panel;
mod context_view;
pub mod conversation;
mod diff_view;
pub mod events;
mod explain;
mod forgot;
mod help;
mod help_at;
mod history;
pub mod input;
mod jobs;
mod layers;
mod legend;
mod list;
mod live;
mod mouse;
mod navigation;
pub mod outputs;
mod pane_actions;
pub mod pane_title;
mod recorded_views;
mod requests_view;
mod screen;
pub mod search;
pub mod sessions;
mod state;
mod step;
pub mod timeline;
mod tokens;
pub mod transcripts;
mod viewer;

use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use tiktoken_rs::CoreBPE;

use super::draw::DrawCtx;
use super::layout::{self, Areas};
use super::theme::Theme;
use super::work::{Done, Work};
use crate::agent::events::{AgentEvent, UserCommand};
use crate::compact::PipelineConfig;
use crate::timeline::{Source, StepId, Timeline};

pub use super::work::{OutputFile, TranscriptFile};
use agent_facts::AgentFacts;
pub use branch::ContinueFrom;
pub use compare::{CompareArgsError, CompareView, default_strategies, parse_strategies};
pub use config_panel::{ConfigPanel, STRATEGY_ROW};
pub use context_view::ContextView;
pub use conversation::{ConversationState, HistRow, SessionRow};
pub use diff_view::{DIFF_CONTEXT, DiffView};
pub use events::EventsState;
pub use explain::{ExplainView, LETTERS, call_paragraphs};
pub use help::HelpView;
pub use input::{InputState, SlashCommand};
use jobs::Jobs;
pub use legend::LegendView;
pub use list::{
    EXPANDED_INDENT, ListState, expanded_cap, expanded_lines, layout_transcript, row_height,
};
pub use outputs::OutputsState;
pub use requests_view::RequestsView;
use screen::Screen;
pub use screen::{fmt_elapsed, fmt_ticks, notice_pages};
pub use search::{Hit, Search, event_text as search_event_text, search_matches};
pub use sessions::{SessionsState, StartSessions, Startup};
pub use state::ConvRow;
pub use state::{ConvView, EventKind, EventRow, LoadKind, Loading, Pane, RunState, StageDiff};
pub use step::StepState;
pub use timeline::TimelineView;
use tokens::TokenCounter;
pub use transcripts::{TranscriptView, TranscriptsState};
pub use viewer::{TextMatch, Viewer, ViewerKey};

/// How often the loop sends `Msg::Tick`.
pub const TICK: Duration = Duration::from_millis(100);
pub const TICKS_PER_SECOND: u64 = 1_000 / TICK.as_millis() as u64;
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
    /// "continue from call N" started its agent (its events follow), like `Restarted`.
    Continued {
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
    /// Sessions to show now, with the loop running: the browser over these paths, or one
    /// file opened at once (what `Start` carries for before the loop runs).
    OpenSessions(StartSessions),
    /// Following a session: the settings, the follower's events, its end.
    Live(crate::tui::live::LiveMsg),
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
    /// Replace the agent with one that continues from an earlier call (`branch.rs`); the
    /// loop answers `Msg::Continued` or `Msg::RestartFailed`.
    Continue(Box<ContinueFrom>),
    /// Start following a session (stopping the follower before it); its events come back
    /// as `Msg::Live`.
    Follow(crate::tui::live::FollowRequest),
    /// Stop the follower (the live view closed).
    StopFollowing,
    /// Ring the terminal bell (a compaction was written while following).
    Bell,
}

/// A view covering the panes, one layer of `App`'s stack (`layers.rs`).
#[derive(Debug, Clone)]
// Not boxed: the stack holds a few layers at most, and each kind is matched by value.
#[allow(clippy::large_enum_variant)]
pub enum Layer {
    Help(HelpView),
    Legend(LegendView),
    Config(ConfigPanel),
    Diff(DiffView),
    Viewer(Viewer),
    Compare(CompareView),
    Context(ContextView),
    Requests(RequestsView),
    Live(crate::tui::live::LiveView),
    Explain(ExplainView),
}

/// What a covering view did with a message.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Taken; the view stays.
    Consumed,
    /// Taken; the view stays and asks for these effects.
    Effects(Vec<Effect>),
    /// Taken; the view closes (with these effects, e.g. stopping its follower).
    Close(Vec<Effect>),
    /// Not the view's: `App` does what every view shares (`?` opens the help over it); it
    /// never reaches a view beneath.
    Pass,
}

impl Outcome {
    /// Consumed while the view stays open, else closed.
    pub fn stay_if(open: bool) -> Outcome {
        if open {
            Outcome::Consumed
        } else {
            Outcome::Close(Vec::new())
        }
    }
}

/// A covering view: its keys, its mouse and its drawing, in its own module. It is taken off
/// the stack while it handles a message, so `app` is the rest (to notify, ask for a job,
/// open a view on top of it); it draws from itself and a `DrawCtx`.
pub trait View {
    /// Draws the view over the panes from its own state and `ctx` (the screen's facts, not
    /// the rest of `App`). `full` is the whole screen (each view takes its own area of it);
    /// the stack draws the bottom layer first, so the top one is drawn last.
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx);

    /// A key (Ctrl-C is `App`'s, before any view).
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome;

    /// The mouse: by default the wheel moves as Up and Down do and a click is taken.
    fn mouse(&mut self, m: MouseEvent, app: &mut App) -> Outcome {
        layers::wheel_as_keys(self, m, app)
    }

    /// The help section `?` opens over this view (None: the focused pane's).
    fn help_section(&self) -> Option<&'static str> {
        None
    }

    /// The keys the hint line offers while it is on top (None: an overlay naming its keys
    /// in its title leaves the hint line to the view under it).
    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        None
    }
}

/// The whole UI state: a router of owned parts (see the module's comment).
pub struct App {
    /// The screen's own facts: size, tick, focus, overlays, notices.
    screen: Screen,
    /// The agent's facts: workspace, provider, settings, run state, recorded events.
    agent: AgentFacts,
    /// The job the screen waits for and the job ids.
    jobs: Jobs,

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
    /// The views covering the panes, the bottom one first: the top one has the keys and
    /// the mouse and is drawn last (`layers.rs`).
    layers: Vec<Layer>,
    /// The outputs pane: persisted outputs and the selection.
    outputs: OutputsState,
    /// The transcripts pane: the listing, its selection, the open transcript.
    transcripts: TranscriptsState,
    /// The sessions browser (a mode of the transcripts pane) and the opened session.
    sessions: SessionsState,
    /// The settings for following a session (its live view is a layer).
    live: crate::tui::live::LiveState,

    /// The input box: its text and the inputs sent before.
    input: InputState,
    /// Step mode: on or off, the pending pause, a "run to" not reached yet.
    step: StepState,
    /// The settings the agent applies, and "continue from call N"'s branches.
    branch: branch::BranchState,
}

impl App {
    pub fn new(
        workspace: PathBuf,
        provider: String,
        config: PipelineConfig,
        no_color: bool,
    ) -> App {
        let mut app = App {
            screen: Screen::new(no_color),
            timeline: Timeline::new(Source::Live, config.context_limit),
            agent: AgentFacts::new(workspace, provider, config),
            jobs: Jobs::default(),
            conversation: ConversationState::default(),
            tokens: TokenCounter::default(),
            events: EventsState::default(),
            timeline_view: None,
            search: None,
            layers: Vec::new(),
            outputs: OutputsState::default(),
            transcripts: TranscriptsState::default(),
            sessions: Default::default(),
            live: Default::default(),
            input: InputState::default(),
            step: StepState::default(),
            branch: Default::default(),
        };
        app.style_input();
        app
    }

    // ----- what the panes read -----

    /// The agent's workspace.
    pub fn workspace(&self) -> &std::path::Path {
        &self.agent.workspace
    }

    /// The model's label (`scripted`, a provider and model).
    pub fn provider(&self) -> &str {
        &self.agent.provider
    }

    /// The pipeline's settings as the agent last said them.
    pub fn config(&self) -> &PipelineConfig {
        &self.agent.config
    }

    pub fn theme(&self) -> &Theme {
        &self.screen.theme
    }

    /// The terminal's size (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        self.screen.size
    }

    /// Ticks since the start (the clock a spinner and elapsed times read).
    pub fn tick(&self) -> u64 {
        self.screen.tick
    }

    pub fn focus(&self) -> Pane {
        self.screen.focus
    }

    /// What the main area shows: Conversation, Outputs or Transcripts.
    pub fn main(&self) -> Pane {
        self.screen.main
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
        self.jobs.loading.as_ref()
    }

    /// What the agent is doing.
    pub fn run_state(&self) -> &RunState {
        &self.agent.run_state
    }

    /// Whether the agent's event channel closed.
    pub fn agent_gone(&self) -> bool {
        self.agent.agent_gone
    }

    /// The notice in the hint line and the tick it was shown at (expired or not).
    pub fn notice(&self) -> Option<(&str, u64)> {
        self.screen.notice()
    }

    // ----- derived views, shared with the panes -----

    pub fn areas(&self) -> Option<Areas> {
        layout::areas_of(
            Rect::new(0, 0, self.screen.size.0, self.screen.size.1),
            self.input_rows(),
            self.timeline_view.is_some(),
            self.browsing(),
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
        self.screen.notice_text()
    }

    /// The start-up notices, in full (the legend lists them).
    pub fn notices(&self) -> Vec<&str> {
        crate::tui::event_rows::notices(self.events.rows())
    }

    pub fn input_text(&self) -> String {
        self.input.text()
    }

    /// Whether a tick changes what is drawn (spinner, elapsed time, notice expiry).
    pub fn animating(&self) -> bool {
        self.agent.run_state != RunState::Idle
            || self.screen.has_notices()
            || self.jobs.loading.is_some()
            || self.compare().is_some_and(|c| c.job().is_some())
            || self.tokens.busy()
    }

    /// Shows `text` in the hint line for a few seconds (longer when it is long).
    pub(super) fn notify(&mut self, text: impl Into<String>) {
        self.screen.notify(text.into());
    }

    /// Shows `text` after the notices already waiting, each in turn: start-up notices are
    /// read one by one instead of being cut off together.
    pub(super) fn notify_queued(&mut self, text: impl Into<String>) {
        self.screen.notify_queued(text.into());
    }

    // ----- the mutator -----

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Agent(ev) => self.on_agent(ev),
            Msg::Key(key) => self.on_key(key),
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Paste(text) => {
                if self.screen.focus == Pane::Input && self.layers.is_empty() {
                    self.input.insert_str(&text.replace('\r', ""));
                }
                Vec::new()
            }
            Msg::Resize(w, h) => {
                self.screen.size = (w, h);
                self.fix_scroll();
                self.reshow_pause_rows();
                Vec::new()
            }
            Msg::Tick => {
                self.screen.tick();
                self.expire_ctrl_c();
                self.count_tokens()
            }
            Msg::Done(done) => self.on_done(done),
            Msg::Tokenizer(bpe) => {
                self.tokens.set_tokenizer(bpe);
                self.count_tokens()
            }
            Msg::AgentGone => {
                self.agent.agent_gone = true;
                self.agent.run_state = RunState::Idle;
                self.notify("the agent stopped; q quits");
                Vec::new()
            }
            Msg::Restarted { provider, notices } => self.restarted(provider, notices),
            Msg::Continued { provider, notices } => self.continued(provider, notices),
            Msg::RestartFailed(why) => {
                self.notify(format!("restart failed: {why}"));
                Vec::new()
            }
            Msg::Start(start) => {
                self.start(*start);
                Vec::new()
            }
            Msg::LoopStarted => {
                let mut effects = self.start_effects();
                effects.extend(self.live_start_effects());
                effects
            }
            Msg::OpenSessions(StartSessions::Browse(paths)) => self.open_sessions(paths),
            Msg::OpenSessions(StartSessions::File { path, bytes }) => {
                self.open_session(path, bytes)
            }
            Msg::Live(msg) => self.on_live(msg),
        }
    }
}
