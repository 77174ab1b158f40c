//! The compare view's state and keys (docs/strategies.md, "Compare view"): one session (the
//! live one, the open transcript, or any list of messages with a label) replayed under two
//! or more strategies, a call and a piece selected across all of them. The replays are
//! `Work::Compare` jobs, one strategy after the other, each on its own dry-run store in a
//! scratch folder (never the workspace); the accounting is `crate::compare`'s. This file
//! only keeps what came back and what is selected; `draw.rs` (with `parts.rs`) draws it.

mod draw;
mod parts;

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Effect, Layer, Outcome, Pane, View};
use crate::compact::{PipelineConfig, Strategy};
use crate::compare::{Piece, PieceState, Reach, StrategyRun};
use crate::message::Message;
use crate::session::recorded::RecordedEvent;
use crate::tui::draw::DrawCtx;
use crate::tui::keys::section;
use crate::tui::work::{JobError, JobId, SharedSession, Work};

/// The compare view's state, owned here: what is compared, what came back, what is
/// selected. `App` routes the view's keys and its jobs' results to it.
#[derive(Debug, Clone)]
pub struct CompareView {
    /// What the session is (`live session`, a transcript's name).
    label: String,
    session: Arc<Vec<Message>>,
    /// One per strategy, in the order the rows are drawn.
    configs: Vec<PipelineConfig>,
    /// The runs done so far, in `configs` order.
    runs: Vec<StrategyRun>,
    /// The replay in flight (of `configs[runs.len()]`) and the tick it started at.
    job: Option<(JobId, u64)>,
    error: Option<String>,
    /// The selected call, 0-based, the same for every row.
    call: usize,
    /// The selected piece (index into `pieces()`), among those entered before the call.
    piece: usize,
    /// The selected strategy's row (index into `configs`): the one `F` asks about.
    strategy: usize,
    /// A recording's events every replay honours (the live run's refusals and compact
    /// tool calls); empty for a transcript.
    recorded: Vec<RecordedEvent>,
    /// The call the live branch continued from, when it is a continue.
    continued: Option<usize>,
    /// After a continue, the limit each span of the timeline's calls ran under
    /// (`Timeline::limits_text`).
    limits: Option<String>,
}

impl CompareView {
    pub fn new(label: String, session: Arc<Vec<Message>>, configs: Vec<PipelineConfig>) -> Self {
        CompareView {
            label,
            session,
            configs,
            runs: Vec::new(),
            job: None,
            error: None,
            call: 0,
            piece: 0,
            strategy: 0,
            recorded: Vec::new(),
            continued: None,
            limits: None,
        }
    }

    /// The same view on a branch continued from call `from`, replayed whole: `limits`
    /// (each span of the timeline's calls with its limit) named.
    pub fn continued_from(mut self, from: usize, limits: String) -> Self {
        self.continued = Some(from);
        self.limits = Some(limits);
        self
    }

    /// The timeline's number of the replay's call `call` (0-based): a continued session is
    /// replayed whole (`App::continued_session`), so its calls are the timeline's.
    pub fn call_number(&self, call: usize) -> usize {
        call + 1
    }

    /// The call the live branch continued from, when it is a continue.
    pub fn continued(&self) -> Option<usize> {
        self.continued
    }

    /// After a continue, the limit each span of the timeline's calls ran under.
    pub fn limits(&self) -> Option<&str> {
        self.limits.as_deref()
    }

    /// The same view, its replays honouring `recorded`.
    fn with_recorded(mut self, recorded: Vec<RecordedEvent>) -> Self {
        self.recorded = recorded;
        self
    }

    /// The recorded events the replays honour.
    pub fn recorded(&self) -> &[RecordedEvent] {
        &self.recorded
    }

    /// What the session is (`live session`, a transcript's name).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The messages replayed.
    pub fn session(&self) -> &Arc<Vec<Message>> {
        &self.session
    }

    /// One per strategy, in the order the rows are drawn.
    pub fn configs(&self) -> &[PipelineConfig] {
        &self.configs
    }

    /// The runs done so far, in `configs` order.
    pub fn runs(&self) -> &[StrategyRun] {
        &self.runs
    }

    /// The replay in flight and the tick it started at.
    pub fn job(&self) -> Option<(JobId, u64)> {
        self.job
    }

    /// Why the last replay failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The selected call, 0-based.
    pub fn call(&self) -> usize {
        self.call
    }

    /// The selected piece, an index into `pieces()`.
    pub fn piece(&self) -> usize {
        self.piece
    }

    /// The selected strategy's row, an index into `configs()`.
    pub fn strategy(&self) -> usize {
        self.strategy
    }

    /// Moves the selected strategy's row by `delta`, wrapping around.
    fn move_strategy(&mut self, delta: isize) {
        let n = self.configs.len().max(1) as isize;
        self.strategy = (self.strategy as isize + delta).rem_euclid(n) as usize;
    }

    /// The replay to ask for next: its job id and config (None when every strategy is
    /// done: the teaching point is then selected).
    fn next_job(&mut self, id: JobId, tick: u64) -> Option<PipelineConfig> {
        let Some(config) = self.configs.get(self.runs.len()).copied() else {
            self.job = None;
            self.select_first_point();
            return None;
        };
        self.job = Some((id, tick));
        Some(config)
    }

    /// A replay came back; false when it is not the one waited for.
    fn take_result(&mut self, id: JobId, result: Result<Box<StrategyRun>, JobError>) -> bool {
        if self.job.map(|(j, _)| j) != Some(id) {
            return false;
        }
        match result {
            Ok(run) => self.runs.push(*run),
            Err(e) => {
                self.job = None;
                self.error = Some(e.to_string());
            }
        }
        true
    }

    /// `n`: the next point where a result was replaced unseen; false when there is none.
    fn goto_next_unseen(&mut self) -> bool {
        match self.next_unseen() {
            Some((call, piece)) => {
                self.call = call;
                self.piece = piece;
                true
            }
            None => false,
        }
    }

    pub fn strategies(&self) -> Vec<Strategy> {
        self.configs.iter().map(|c| c.strategy).collect()
    }

    /// Every strategy has been replayed.
    pub fn complete(&self) -> bool {
        self.runs.len() == self.configs.len()
    }

    /// Model calls (the same session gives every strategy the same calls).
    pub fn calls(&self) -> usize {
        self.runs.iter().map(|r| r.calls.len()).max().unwrap_or(0)
    }

    /// The pieces of content that entered the session, in order (the same for every run).
    pub fn pieces(&self) -> &[Piece] {
        self.runs
            .iter()
            .find_map(|r| r.detail.as_ref())
            .map(|d| d.pieces.as_slice())
            .unwrap_or(&[])
    }

    /// How many pieces had entered before call `call` (0-based).
    pub fn pieces_at(&self, call: usize) -> usize {
        self.runs
            .iter()
            .filter_map(|r| r.detail.as_ref()?.states.get(call))
            .map(Vec::len)
            .max()
            .unwrap_or(0)
    }

    /// What run `run` kept of `piece` at call `call`, and where its full text was; None
    /// when the piece had not entered yet.
    pub fn kept(&self, run: usize, call: usize, piece: usize) -> Option<PieceState> {
        let d = self.runs.get(run)?.detail.as_ref()?;
        d.states.get(call)?.get(piece).copied()
    }

    /// The call (0-based) at which run `run` first sent `piece` not whole, when it was
    /// replaced before the model saw it.
    fn unseen_at(&self, run: usize, piece: usize) -> Option<(usize, Reach)> {
        let d = self.runs.get(run)?.detail.as_ref()?;
        d.unseen
            .get(piece)
            .copied()
            .flatten()
            .map(|(call, reach)| (call.saturating_sub(1), reach))
    }

    /// Piece `piece` was replaced unseen by run `run` at or before the selected call.
    pub fn unseen_by(&self, run: usize, piece: usize) -> bool {
        self.unseen_at(run, piece)
            .is_some_and(|(call, _)| call <= self.call)
    }

    /// Moves the selected call by `delta` (clamped), keeping the piece among those entered.
    fn move_call(&mut self, delta: isize) {
        let last = self.calls().saturating_sub(1);
        self.call = self.call.saturating_add_signed(delta).min(last);
        self.clamp_piece();
    }

    fn set_call(&mut self, call: usize) {
        self.call = call.min(self.calls().saturating_sub(1));
        self.clamp_piece();
    }

    /// Moves the selected piece by `delta` (clamped to the pieces entered before the call).
    fn move_piece(&mut self, delta: isize) {
        self.piece = self.piece.saturating_add_signed(delta);
        self.clamp_piece();
    }

    fn clamp_piece(&mut self) {
        self.piece = self.piece.min(self.pieces_at(self.call).saturating_sub(1));
    }

    /// Every (call, piece) where some strategy replaced a result the model had never
    /// seen, in order.
    pub fn unseen_points(&self) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = (0..self.runs.len())
            .flat_map(|run| {
                (0..self.pieces().len())
                    .filter_map(move |p| self.unseen_at(run, p).map(|(call, _)| (call, p)))
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The next such point after the selection, wrapping around.
    fn next_unseen(&self) -> Option<(usize, usize)> {
        let found = self.unseen_points();
        let here = (self.call, self.piece);
        found.iter().find(|&&f| f > here).or(found.first()).copied()
    }

    /// Selects the teaching point when there is one (the first unseen replacement), else
    /// the last call.
    fn select_first_point(&mut self) {
        match self.unseen_points().first() {
            Some(&(call, piece)) => {
                self.call = call;
                self.piece = piece;
                self.clamp_piece();
            }
            None => self.set_call(usize::MAX),
        }
    }
}

/// The strategies compared when none are named: the current one against `guarded`, or
/// all four when `guarded` is the current one.
pub fn default_strategies(current: Strategy) -> Vec<Strategy> {
    if current == Strategy::Guarded {
        Strategy::ALL.to_vec()
    } else {
        vec![current, Strategy::Guarded]
    }
}

/// Why `/compare`'s strategies are not a comparison (shown in the notice line).
#[derive(Debug, thiserror::Error)]
pub enum CompareArgsError {
    #[error(transparent)]
    Unknown(#[from] crate::compact::UnknownStrategy),
    #[error("{0} is named twice")]
    Twice(Strategy),
    #[error("name at least two strategies, e.g. /compare s08,guarded (or all)")]
    TooFew,
}

/// `s06,guarded`, `s06 s08`, `all`: the strategies `/compare` names (at least two, none
/// twice), or why not.
pub fn parse_strategies(text: &str) -> Result<Vec<Strategy>, CompareArgsError> {
    let text = text.trim();
    if text == "all" {
        return Ok(Strategy::ALL.to_vec());
    }
    let mut out: Vec<Strategy> = Vec::new();
    for name in text.split([',', ' ']).filter(|s| !s.trim().is_empty()) {
        let s: Strategy = name.parse()?;
        if out.contains(&s) {
            return Err(CompareArgsError::Twice(s));
        }
        out.push(s);
    }
    if out.len() < 2 {
        return Err(CompareArgsError::TooFew);
    }
    Ok(out)
}

/// The compare view's label of the live session.
const LIVE_LABEL: &str = "live session";

impl App {
    /// The session the compare view replays by default: when the transcripts pane is in
    /// view, the session opened from the sessions browser or else the open transcript;
    /// otherwise the live session.
    pub(super) fn compare_source(&self) -> Option<(Arc<Vec<Message>>, String)> {
        if self.screen.main == Pane::Transcripts
            && let Some((label, messages)) = self.opened_messages()
        {
            return Some((messages, label.to_string()));
        }
        if self.screen.main == Pane::Transcripts
            && let Some(t) = self.transcripts.open()
        {
            let messages = t.rows().iter().map(|r| r.message.clone()).collect();
            return Some((Arc::new(messages), t.relative().to_string()));
        }
        let session = self.conversation.session();
        if session.is_empty() {
            return None;
        }
        // The messages as appended: a summary is the compaction's, not the session's.
        let messages = session
            .iter()
            .filter(|r| r.entry().is_some())
            .map(|r| r.info().message.clone())
            .collect();
        Some((Arc::new(messages), LIVE_LABEL.to_string()))
    }

    /// Opens the compare view on `session` (any source: the live conversation, a
    /// transcript, an opened session) under `strategies` (None: the default pair), every
    /// replay honouring a recording's events (`recorded`), and asks for the first replay.
    /// Reached only through `C` and `/compare` (`open_compare_default`).
    fn open_compare_recorded(
        &mut self,
        session: Arc<Vec<Message>>,
        label: impl Into<String>,
        strategies: Option<Vec<Strategy>>,
        recorded: Vec<RecordedEvent>,
        current: PipelineConfig,
    ) -> Vec<Effect> {
        let strategies = strategies.unwrap_or_else(|| default_strategies(current.strategy));
        // The current strategy with the thresholds in force; the others with their own.
        let configs = strategies
            .iter()
            .map(|&s| {
                if s == current.strategy {
                    current
                } else {
                    PipelineConfig::for_strategy(s)
                }
            })
            .collect();
        let label = label.into();
        let mut view = CompareView::new(label.clone(), session, configs).with_recorded(recorded);
        // After a continue, each span of the timeline's calls is named with its limit.
        if label == LIVE_LABEL
            && let Some(n) = self.continued_from()
        {
            view = view.continued_from(n, self.live_branch_timeline().limits_text());
        }
        let effects = self.next_compare_job(&mut view);
        self.push_layer(Layer::Compare(view));
        effects
    }

    /// Opens the compare view on the default source (`C`, `/compare`).
    pub(super) fn open_compare_default(
        &mut self,
        strategies: Option<Vec<Strategy>>,
    ) -> Vec<Effect> {
        match self.compare_source() {
            // The live run replays with what it met: its refusals and compact tool calls.
            Some((session, label)) if label == LIVE_LABEL => match self.continued_session() {
                // After a continue, the whole session: the earlier branch's calls under the
                // settings they ran under, the continued ones under the continue's.
                Some(c) => {
                    let session = Arc::new(c.messages);
                    self.open_compare_recorded(session, label, strategies, c.recorded, c.start)
                }
                None => {
                    let recorded = self.agent.live_record.fold().events().to_vec();
                    let config = self.agent.config;
                    self.open_compare_recorded(session, label, strategies, recorded, config)
                }
            },
            Some((session, label)) => {
                // An opened ctxlab recording replays with its own recorded events.
                let recorded = match self.opened_messages() {
                    Some((opened, _))
                        if self.screen.main == Pane::Transcripts && opened == label =>
                    {
                        self.sessions.open().map(|o| o.recorded().to_vec())
                    }
                    _ => None,
                };
                let recorded = recorded.unwrap_or_default();
                let config = self.agent.config;
                self.open_compare_recorded(session, label, strategies, recorded, config)
            }
            None => {
                self.notify("nothing to compare yet: no message in this session (open a transcript in 4, or start a turn)");
                Vec::new()
            }
        }
    }

    /// The compare view's state, when open.
    pub fn compare(&self) -> Option<&CompareView> {
        self.layers().iter().find_map(|l| match l {
            Layer::Compare(v) => Some(v),
            _ => None,
        })
    }

    /// The job replaying `v`'s next strategy, if one is left.
    fn next_compare_job(&mut self, v: &mut CompareView) -> Vec<Effect> {
        let id = self.jobs.next_id();
        let tick = self.screen.tick;
        let Some(config) = v.next_job(id, tick) else {
            return Vec::new();
        };
        vec![Effect::Work(Work::Compare {
            id,
            session: SharedSession(Arc::clone(&v.session)),
            config,
            recorded: v.recorded.clone(),
        })]
    }

    /// A replay came back: keep it and ask for the next one.
    pub(super) fn compared(
        &mut self,
        id: JobId,
        result: Result<Box<StrategyRun>, JobError>,
    ) -> Vec<Effect> {
        // The view may sit under another (the help opened over it): it is taken out of
        // the stack while its next job is asked for.
        let Some(at) = self
            .layers
            .iter()
            .position(|l| matches!(l, Layer::Compare(_)))
        else {
            return Vec::new();
        };
        let Layer::Compare(mut v) = self.layers.remove(at) else {
            return Vec::new();
        };
        let ok = result.is_ok();
        let effects = if v.take_result(id, result) && ok {
            self.next_compare_job(&mut v)
        } else {
            Vec::new()
        };
        self.layers.insert(at, Layer::Compare(v));
        effects
    }
}

impl View for CompareView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let page = 5;
        let v = self;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('C') => {
                return Outcome::Close(Vec::new());
            }
            KeyCode::Char('?') => return Outcome::Pass,
            KeyCode::Left | KeyCode::Char('h') => v.move_call(-1),
            KeyCode::Right | KeyCode::Char('l') => v.move_call(1),
            KeyCode::Up | KeyCode::Char('k') => v.move_piece(-1),
            KeyCode::Down | KeyCode::Char('j') => v.move_piece(1),
            KeyCode::Char('u') if ctrl => v.move_piece(-page),
            KeyCode::Char('d') if ctrl => v.move_piece(page),
            KeyCode::PageUp => v.move_piece(-page),
            KeyCode::PageDown => v.move_piece(page),
            KeyCode::Tab => v.move_strategy(1),
            KeyCode::BackTab => v.move_strategy(-1),
            KeyCode::Char('F') => return Outcome::Effects(app.forgot_in_compare(v)),
            KeyCode::Home | KeyCode::Char('g') => v.set_call(0),
            KeyCode::End | KeyCode::Char('G') => v.set_call(usize::MAX),
            // The guard moves the selection when there is a next point; only a miss lands here.
            KeyCode::Char('n') if !v.goto_next_unseen() => {
                app.notify("no strategy replaced a result the model had not seen");
            }
            _ => {}
        }
        Outcome::Consumed
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(section::COMPARE)
    }

    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        Some(&[
            ("h/l", "call"),
            ("j/k", "piece"),
            ("Tab", "strategy"),
            ("F", "forgot"),
            ("n", "unseen"),
            ("Esc/q", "close"),
        ])
    }
}
