//! Settings applied and branches continued: the events row a switch of strategy gets when
//! the agent applies it ("strategy s08 -> guarded, from call 12"), and "continue from call
//! N" (docs/architecture.md, "Data flow"): the confirmation, the branch the
//! continue left (kept whole for comparison) and which of the two the timeline shows.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Effect, EventKind, Pane};
use crate::agent::Resume;
use crate::compact::PipelineConfig;
use crate::message::Message;
use crate::session::recorded::{RecordedEvent, RecordedKind};
use crate::timeline::Timeline;
use crate::timeline::branch::BranchPoint;
use crate::util::group_digits;

/// What the loop needs to start a continued agent: where it resumes, the scripted turn it
/// plays next, and the settings in force now.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinueFrom {
    pub call: usize,
    pub resume: Resume,
    pub answered: usize,
    pub config: PipelineConfig,
}

/// What this file owns: the settings the agent last applied, the kept branch, the asked
/// confirmation.
#[derive(Debug, Default)]
pub struct BranchState {
    /// The settings the agent last said it applies (`Ready`, `ConfigChanged`), which can
    /// differ from `App::config` (what `/config` last sent) until the agent applies them.
    applied: Option<PipelineConfig>,
    /// "continue from call N" asked for, waiting for `y`.
    asking: Option<usize>,
    /// The cut timeline the continued agent's events go on from, until it starts.
    starting: Option<(usize, Timeline)>,
    /// The branch a continue left, whole, and the call the live one continued from.
    other: Option<(usize, Timeline)>,
    /// The timeline pane shows the other branch (`App::timeline` is then that one).
    showing_other: bool,
    /// The earlier branch's record as the continue left it: the settings it started with
    /// and its events before the branch point (the compare view replays them).
    earlier_record: Option<(PipelineConfig, Vec<RecordedEvent>)>,
}

/// The live session after a continue, whole, for the compare view: the earlier branch's
/// messages up to call N then the continued run's, every recorded event numbered as the
/// timeline numbers it, and the settings the replay starts under (the earlier branch's;
/// a recorded change at call N brings in the continue's).
#[derive(Debug, Clone)]
pub(super) struct ContinuedSession {
    pub(super) messages: Vec<Message>,
    pub(super) recorded: Vec<RecordedEvent>,
    pub(super) start: PipelineConfig,
}

/// The key that asks to continue from the selected call, and the one that shows the other
/// branch, in the timeline pane.
pub const CONTINUE_KEY: char = 'x';
pub const BRANCH_KEY: char = 'B';

impl App {
    /// The agent started with `config`.
    pub(super) fn config_started(&mut self, config: PipelineConfig) {
        self.branch.applied = Some(config);
    }

    /// The agent applies `config` from model call `call` (the run's number): a new
    /// strategy gets an events row with it.
    pub(super) fn config_applied(&mut self, config: PipelineConfig, call: usize) {
        self.agent.config = config;
        let from = self.branch.applied.replace(config);
        // A switch of strategy gets a row; new numbers are in `/config` and the gauge.
        if let Some(from) = from
            && from.strategy != config.strategy
        {
            self.push_event(EventKind::Settings {
                from,
                to: config,
                call,
            });
        }
    }
}

impl App {
    /// The timeline the agent's events fold into (the shown one, unless the other branch
    /// is on screen).
    pub(super) fn live_timeline_mut(&mut self) -> &mut Timeline {
        match (&mut self.branch.other, self.branch.showing_other) {
            (Some((_, other)), true) => other,
            _ => &mut self.timeline,
        }
    }

    /// The live branch's timeline, whichever branch the timeline pane shows.
    pub(super) fn live_branch_timeline(&self) -> &Timeline {
        match (&self.branch.other, self.branch.showing_other) {
            (Some((_, other)), true) => other,
            _ => &self.timeline,
        }
    }

    /// The live session after a continue, whole (`ContinuedSession`); None when the live
    /// branch is no continue. The continued run's record counts its calls and messages
    /// from its own start: they go on from call N and the messages before it here.
    pub(super) fn continued_session(&self) -> Option<ContinuedSession> {
        let (from, _) = self.branch.other.as_ref()?;
        let (start, earlier) = self.branch.earlier_record.as_ref()?;
        let t = self.live_branch_timeline();
        let messages: Vec<Message> = t.session.iter().map(|e| (*e.message).clone()).collect();
        let cut = t.session.partition_point(|e| e.before_call <= *from);
        let fold = self.agent.live_record.fold();
        let mut recorded = earlier.clone();
        if let Some(config) = fold.config()
            && config != *start
        {
            recorded.push(RecordedEvent {
                at: cut,
                call: *from,
                kind: RecordedKind::Config {
                    config,
                    from: start.strategy,
                },
            });
        }
        recorded.extend(fold.events().iter().map(|e| RecordedEvent {
            at: e.at + cut,
            call: e.call + from - 1,
            kind: e.kind.clone(),
        }));
        Some(ContinuedSession {
            messages,
            recorded,
            start: *start,
        })
    }

    /// The call the live branch continued from, when it is a continue.
    pub fn continued_from(&self) -> Option<usize> {
        self.branch.other.as_ref().map(|(n, _)| *n)
    }

    /// The branch a continue left behind (the original run), kept whole.
    pub fn other_branch(&self) -> Option<&Timeline> {
        match (&self.branch.other, self.branch.showing_other) {
            (Some((_, other)), false) => Some(other),
            (Some(_), true) => Some(&self.timeline),
            _ => None,
        }
    }

    /// The question "continue from call N" waits on (`y`), drawn in the timeline pane as
    /// well as told in the hint line.
    pub fn continue_prompt(&self) -> Option<String> {
        self.branch
            .asking
            .map(|n| continue_question(n, &self.agent.config, &self.agent.provider))
    }

    /// The same question in one short sentence, for a pane too small for the whole one
    /// (the hint line still pages the whole).
    pub fn continue_prompt_short(&self) -> Option<String> {
        self.branch.asking.map(|n| {
            format!(
                "continue from call {n} with {}, context_limit {}? y: continue, any other key: cancel",
                self.agent.config.strategy,
                group_digits(self.agent.config.context_limit)
            )
        })
    }

    /// Whether the timeline pane shows the branch a continue left behind.
    pub fn showing_other_branch(&self) -> bool {
        self.branch.showing_other
    }

    /// A key while a continue is asked for, or a branch key in the timeline; None: not
    /// this file's.
    pub(super) fn branch_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        if let Some(n) = self.branch.asking.take() {
            return Some(match key.code {
                KeyCode::Char('y') | KeyCode::Enter => self.start_continue(n),
                _ => {
                    self.notify("continue cancelled");
                    Vec::new()
                }
            });
        }
        if self.screen.focus != Pane::Timeline {
            return None;
        }
        match key.code {
            KeyCode::Char(CONTINUE_KEY) => {
                self.ask_continue();
                Some(Vec::new())
            }
            KeyCode::Char(BRANCH_KEY) => {
                self.toggle_branch();
                Some(Vec::new())
            }
            _ => None,
        }
    }

    /// The confirmation: what will run, with which settings, and that a real provider
    /// makes real calls.
    fn ask_continue(&mut self) {
        if self.branch.showing_other {
            self.notify(format!(
                "this is the earlier branch: {BRANCH_KEY} goes back to the live one to continue from"
            ));
            return;
        }
        let Some(call) = self
            .timeline_view
            .as_ref()
            .and_then(|v| self.timeline.calls.get(v.selected()))
        else {
            self.notify("no model call yet");
            return;
        };
        let n = call.number;
        self.branch.asking = Some(n);
        self.notify(continue_question(
            n,
            &self.agent.config,
            &self.agent.provider,
        ));
    }

    /// `p` in step mode: back one model call. Continues from the last call made (the
    /// history before it, the settings in force), so the agent, still in step mode, pauses
    /// again before that call's stages; pressed again, it goes back one more. A real
    /// provider asks first (it makes real calls); the scripted model goes at once.
    pub(super) fn step_back(&mut self) -> Vec<Effect> {
        if !self.step.mode() {
            self.notify("p steps back in step mode (/step, or start with --step)");
            return Vec::new();
        }
        if self.branch.showing_other {
            self.toggle_branch();
        }
        let Some(n) = self.timeline.calls.last().map(|c| c.number) else {
            self.notify("no model call yet to step back to");
            return Vec::new();
        };
        if self.scripted() {
            return self.start_continue(n);
        }
        self.branch.asking = Some(n);
        self.notify(continue_question(
            n,
            &self.agent.config,
            &self.agent.provider,
        ));
        Vec::new()
    }

    fn start_continue(&mut self, n: usize) -> Vec<Effect> {
        let Some(point) = self.timeline.branch_before(n) else {
            self.notify(format!("no call {n} to continue from"));
            return Vec::new();
        };
        let BranchPoint {
            timeline,
            history,
            answered,
            tool_calls,
            active_request,
        } = point;
        // Only the scripted model gets a fresh demo workspace, which the earlier tool calls
        // bring to where the branch was; a real provider goes on in the workspace as it is.
        let rerun_tools = if self.scripted() {
            tool_calls
                .into_iter()
                .filter(|(name, _)| name != "compact")
                .collect()
        } else {
            Vec::new()
        };
        self.branch.starting = Some((n, timeline));
        self.notify(format!("continuing from call {n}..."));
        vec![Effect::Continue(Box::new(ContinueFrom {
            call: n,
            resume: Resume {
                history,
                active_request,
                rerun_tools,
            },
            answered,
            config: self.agent.config,
        }))]
    }

    fn scripted(&self) -> bool {
        self.agent.provider.starts_with("scripted")
    }

    /// The continued agent runs: a fresh view on the cut timeline, the earlier branch kept.
    pub(super) fn continued(&mut self, provider: String, notices: Vec<String>) -> Vec<Effect> {
        let Some((n, cut)) = self.branch.starting.take() else {
            return Vec::new();
        };
        if self.branch.showing_other {
            self.toggle_branch();
        }
        let earlier = std::mem::replace(
            &mut self.timeline,
            Timeline::new(crate::timeline::Source::Live, 0),
        );
        let config = self.agent.config;
        // The earlier branch's settings and events, numbered as its timeline numbers them
        // (renumbered already when it was itself a continue).
        let (start, events) = match self.continued_session() {
            Some(c) => (c.start, c.recorded),
            None => {
                let fold = self.agent.live_record.fold();
                (fold.config().unwrap_or(config), fold.events().to_vec())
            }
        };
        let earlier_record = (
            start,
            events
                .into_iter()
                .filter(|e| e.call < n)
                .collect::<Vec<_>>(),
        );
        let effects = self.restarted(provider, notices);
        // The continued run's ids go on from the cut timeline, which its facts extend; its
        // record, like its recording file, holds the continued agent's own calls.
        let start = cut.run_start();
        self.agent.run = crate::run::Run::continuing(start);
        self.agent.live_record = crate::record::LiveRecord::continuing(
            crate::session::recorded::format::FrontEnd::Workbench,
            start.calls,
        );
        self.timeline = cut;
        self.branch.other = Some((n, earlier));
        self.branch.earlier_record = Some(earlier_record);
        self.push_event(EventKind::Continued { call: n, config });
        self.notify(format!(
            "continued from call {n}; the earlier branch is kept: {BRANCH_KEY} in the timeline shows it"
        ));
        effects
    }

    /// Shows the other branch in the timeline pane, or the live one again.
    pub(super) fn toggle_branch(&mut self) {
        let Some((n, other)) = &mut self.branch.other else {
            self.notify("one branch only: x on a call continues from it");
            return;
        };
        std::mem::swap(&mut self.timeline, other);
        let n = *n;
        self.branch.showing_other = !self.branch.showing_other;
        if let Some(v) = &mut self.timeline_view {
            v.reset_for(self.timeline.calls.len());
        }
        self.rewind();
        self.notify(if self.branch.showing_other {
            format!(
                "the earlier branch (the live one continued from its call {n}); {BRANCH_KEY}: back"
            )
        } else {
            format!("the live branch, continued from call {n}; {BRANCH_KEY}: the earlier one")
        });
    }
}

/// The confirmation line: `continue from call 10 with s08, context_limit 30,000? ...`.
pub fn continue_question(n: usize, config: &PipelineConfig, provider: &str) -> String {
    let cost = if provider.starts_with("scripted") {
        "the scripted model plays on from there in a fresh demo workspace"
    } else {
        "this makes real calls to the provider, in the workspace as it is now"
    };
    format!(
        "continue from call {n} with {}, context_limit {}? {cost}; the earlier branch is kept. y: continue, any other key: cancel",
        config.strategy,
        group_digits(config.context_limit)
    )
}
