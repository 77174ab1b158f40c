//! Step mode in the workbench, and the first minute: the step keys (Space: one step; `s`:
//! run to the next stage that changes something; `c`: run to the next model call), the
//! pause (its sentence, its structured step, the conversation rows it will change, the
//! selection moved there and back), the first-run legend (remembered through
//! `Work::RememberLegend`; the scenario's request waits for it to close), start-up notices
//! kept in full as events rows, and `/restart` (the loop
//! performs `Effect::Restart`; `restarted` gives the fresh agent a fresh view).
//!
//! In step mode the step keys work from every pane and never type: in the input box an
//! empty line's Space steps, and `s` / `c` are keys only outside it.

use std::ops::Range;

use super::{App, Effect, EventKind, Layer, LegendView, Pane, RunState};
use crate::agent::events::{NextStep, StepTarget, UserCommand};
use crate::tui::layout;
use crate::tui::pause;
use crate::tui::work::Work;

/// Lines the pause card may take inside its box (the box replaces the input box).
const CARD_MAX_LINES: usize = 5;

/// Step mode's state, owned here: whether it is on, the pending pause (the step itself and
/// its sentence), a "run to" not reached yet, and whether the pause moved the
/// conversation's selection. `App` routes the step keys and agent events to it; the status
/// line, the input box and the conversation read it through these methods.
#[derive(Debug, Clone, Default)]
pub struct StepState {
    on: bool,
    /// The pending pause and its `NextStep::describe()`, set and cleared together.
    next: Option<(NextStep, String)>,
    run_to: Option<StepTarget>,
    /// The conversation's selection was moved to the pause's rows and goes back to the
    /// newest row once the pause ends.
    moved_selection: bool,
}

impl StepState {
    /// Step mode is on.
    pub fn mode(&self) -> bool {
        self.on
    }

    /// What the pending pause says comes next.
    pub fn paused(&self) -> Option<&str> {
        self.next.as_ref().map(|(_, text)| text.as_str())
    }

    /// The step the agent paused before.
    pub fn next_step(&self) -> Option<&NextStep> {
        self.next.as_ref().map(|(next, _)| next)
    }

    /// A "run to" sent and not reached yet (the status bar says so).
    pub fn run_to(&self) -> Option<StepTarget> {
        self.run_to
    }

    /// The agent says step mode is `on`; off ends any "run to" (the pause is the caller's).
    fn set_mode(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.run_to = None;
        }
    }

    fn pause(&mut self, next: NextStep) {
        let text = next.describe();
        self.next = Some((next, text));
        self.run_to = None;
    }

    /// Ends the pause; true when the selection had been moved for it.
    fn clear(&mut self) -> bool {
        self.next = None;
        std::mem::take(&mut self.moved_selection)
    }
}

impl App {
    /// Step mode's state.
    pub fn step_state(&self) -> &StepState {
        &self.step
    }

    /// The agent turned step mode on or off; off ends the pause.
    pub(super) fn step_mode_changed(&mut self, on: bool) {
        self.step.set_mode(on);
        if !on {
            self.clear_pause();
        }
    }

    /// `/step`: asks the agent to turn step mode the other way.
    pub(super) fn toggle_step_mode(&mut self) -> Vec<Effect> {
        self.step.on = !self.step.on;
        vec![Effect::Send(UserCommand::StepMode(self.step.on))]
    }

    /// The turn is over: no "run to" is pending any more.
    pub(super) fn turn_ended(&mut self) {
        self.step.run_to = None;
        self.clear_pause();
    }

    /// Space: past the pause. Outside a pause it only says why nothing happens.
    pub(super) fn step(&mut self) -> Vec<Effect> {
        if self.step.paused().is_some() {
            self.clear_pause();
            return vec![Effect::Send(UserCommand::Step)];
        }
        let why = if !self.step.mode() {
            "Space steps in step mode: type /step (i to type), or start with --step"
        } else if self.agent.run_state == RunState::Idle {
            "step mode: send a request (i to type); the agent pauses before each step"
        } else {
            "not paused yet: the agent pauses before the next stage or model call"
        };
        self.notify(why);
        Vec::new()
    }

    /// `s` / `c`: go on until the next pause `target` stops at. Sent while the agent works,
    /// it applies to the pauses to come.
    pub(super) fn run_to(&mut self, target: StepTarget) -> Vec<Effect> {
        if !self.step.mode() {
            self.notify("s and c run to the next stage / model call in step mode (/step)");
            return Vec::new();
        }
        if self.step.paused().is_none() && self.agent.run_state == RunState::Idle {
            self.notify("nothing runs: send a request first (i to type)");
            return Vec::new();
        }
        self.clear_pause();
        self.step.run_to = Some(target);
        vec![Effect::Send(UserCommand::RunTo(target))]
    }

    /// The agent paused before `next`.
    pub(super) fn set_pause(&mut self, next: NextStep) {
        let rows = pause::rows_to_change(&next);
        self.step.pause(next);
        // The card takes the input box's place: scroll for that layout, then look.
        self.fix_scroll();
        self.show_rows(&rows);
        self.fix_scroll();
    }

    /// After a resize: the rows to change may have left the screen.
    pub(super) fn reshow_pause_rows(&mut self) {
        if self.step.moved_selection {
            return;
        }
        let rows = self.rows_to_change();
        if !rows.is_empty() {
            self.show_rows(&rows);
            self.fix_scroll();
        }
    }

    /// The pause is over (the step happened, or step mode was turned off).
    pub(super) fn clear_pause(&mut self) {
        if self.step.next.is_none() {
            return;
        }
        if self.step.clear() {
            // Back to following the newest row, as before the pause.
            self.conversation.select_newest();
        }
        self.fix_scroll();
    }

    /// When none of `rows` is on screen and the list follows its newest row, selects the
    /// first of them (the list then shows it at the top, the others below it), so the rows
    /// about to change are seen; `clear_pause` goes back.
    fn show_rows(&mut self, rows: &[Range<usize>]) {
        let len = self.conversation.history().len();
        let following = self.conversation.follows_newest();
        let Some(first) = rows.iter().filter(|r| !r.is_empty()).map(|r| r.start).min() else {
            return;
        };
        if !following || first >= len {
            return;
        }
        let (_, height) = self.main_viewport();
        let top = self.conversation.list(super::ConvView::Model).top;
        let bottom = top + height.max(1);
        if rows.iter().any(|r| r.start < bottom && top < r.end) {
            return;
        }
        self.conversation.list_mut(super::ConvView::Model).selected = first;
        self.step.moved_selection = true;
    }

    /// The rows of the model's view the pending step will change.
    pub fn rows_to_change(&self) -> Vec<Range<usize>> {
        self.step
            .next_step()
            .map(pause::rows_to_change)
            .unwrap_or_default()
    }

    /// Whether the pause card takes the input box's place: paused, and not typing.
    pub fn pause_card_shown(&self) -> bool {
        self.step.next_step().is_some() && self.screen.focus != Pane::Input
    }

    /// The pause card's title and lines at the screen's width (the keys line last).
    pub fn pause_card(&self) -> Option<(String, Vec<String>)> {
        if !self.pause_card_shown() {
            return None;
        }
        let next = self.step.next_step()?;
        let (title, text) = pause::card(next, self.agent.config.context_limit);
        // The card's text has one column of margin inside the box.
        let width =
            (layout::inner(layout::full(self.screen.size)).width as usize).saturating_sub(1);
        let mut lines: Vec<String> = text
            .iter()
            .flat_map(|t| pause::wrap_words(t, width))
            .collect();
        lines.truncate(CARD_MAX_LINES - 1);
        lines.push(format!("{}  i type  ? help  q quit", pause::STEP_KEYS));
        Some((title, lines))
    }

    /// Lines the input area needs: the pause card's, or the input's.
    pub fn input_rows(&self) -> usize {
        match self.pause_card() {
            Some((_, lines)) => lines.len(),
            None => self.input.line_count(),
        }
    }

    /// Opens the legend (at start on a first run, and with `l`).
    pub(super) fn show_legend(&mut self) {
        self.push_layer(Layer::Legend(LegendView::default()));
    }

    /// The legend closed: the first time, asks for it to be remembered as seen and lets
    /// the scenario start (it waited, so no stage ran behind the legend).
    pub(super) fn legend_seen(&mut self) -> Vec<Effect> {
        match self.screen.legend_marker.take() {
            Some(path) => {
                let mut effects = vec![Effect::Work(Work::RememberLegend { path })];
                effects.extend(self.submit_start_request());
                effects
            }
            None => Vec::new(),
        }
    }

    /// The scenario's request, sent once (`Startup::request`).
    pub(super) fn submit_start_request(&mut self) -> Option<Effect> {
        let request = self.screen.start_request.take()?;
        Some(Effect::Send(UserCommand::Submit(request)))
    }

    /// Start-up notices: each becomes an events row, shown there whole (Enter opens it),
    /// and the first-run legend lists them. Not the hint line: paging them there took the
    /// keys away for the first 10-20 seconds at 80 columns, and the status bar already
    /// names the model and the workspace they are about.
    pub(super) fn add_notices(&mut self, notices: Vec<String>) {
        for text in notices {
            self.push_event(EventKind::Notice { text });
        }
    }

    /// A fresh agent replaced the old one: a fresh view of it, keeping what is the user's
    /// (inputs typed, step mode, the screen, the tokenizer).
    pub(super) fn restarted(&mut self, provider: String, notices: Vec<String>) -> Vec<Effect> {
        let mut fresh = App::new(
            self.agent.workspace.clone(),
            provider,
            self.agent.config,
            !self.screen.theme.color,
        );
        // The clock starts again with the scenario (event times count from the restart).
        fresh.screen.size = self.screen.size;
        if let Some(bpe) = self.tokens.tokenizer() {
            fresh.tokens.set_tokenizer(bpe);
        }
        fresh.input.take_history(&mut self.input);
        fresh.jobs.seq = self.jobs.seq;
        fresh.step.on = self.step.on;
        fresh.screen.legend_marker = self.screen.legend_marker.take();
        *self = fresh;
        self.add_notices(notices);
        // Only the scripted model plays a scenario; a real model starts a fresh session.
        self.notify_queued(if self.agent.provider.starts_with("scripted") {
            "restarted: the scenario plays again from the start"
        } else {
            "restarted: a fresh agent with an empty history, on the same model"
        });
        self.fix_scroll();
        Vec::new()
    }
}
