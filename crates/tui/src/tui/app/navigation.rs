//! Keys, routed: Ctrl-C first (cancel, twice quits), then the view on top (`layers.rs`;
//! nothing beneath it gets the key), then the input
//! box, then the key map's global actions (quit, help, legend, focus, the step keys,
//! refresh) and finally the focused pane's actions. Also focus moves, which ask for a fresh
//! file listing when a browser comes into view.
//!
//! Each pane's own keys are in its module (`events.rs`, `outputs.rs`, `timeline.rs`,
//! `transcripts.rs`, `sessions/keys.rs`); what stays here crosses panes, so it is no one
//! pane's: the routing itself, focus, `f` and `n`/`N` (one search over the conversation, the
//! events and the timeline), the step keys and the covering views opened from anywhere.

use crossterm::event::{KeyEvent, KeyEventKind};

use super::{App, Effect, Pane, TICKS_PER_SECOND};
use crate::agent::events::{StepTarget, UserCommand};
use crate::tui::keys::{self, Action};

/// What the first Ctrl-C says, for as long as a second one quits.
const CTRL_C_NOTICE: &str = "cancel sent; Ctrl-C again within 1 s quits";

impl App {
    pub(super) fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if keys::is_ctrl_c(&key) {
            return self.ctrl_c();
        }
        if let Some(effects) = self.route_to_top(|view, app| view.key(key, app), Some(key)) {
            return effects;
        }
        if self.browsing() && self.browser_filter_typing() {
            self.browser_filter_key(key);
            return Vec::new();
        }
        if self.search.as_ref().is_some_and(|s| s.typing) {
            self.search_key(key);
            return Vec::new();
        }
        if self.screen.focus == Pane::Input {
            return self.input_key(key);
        }
        if let Some(effects) = self.branch_key(key) {
            return effects;
        }
        if self.browsing() && self.browser_fold_key(key) {
            return Vec::new();
        }
        let Some(action) = keys::action(&key) else {
            return Vec::new();
        };
        match action {
            Action::Quit => return vec![Effect::Quit],
            Action::Help => self.open_help(),
            Action::NextPane => return self.cycle_pane(1),
            Action::PrevPane => return self.cycle_pane(-1),
            Action::FocusPane(6) | Action::Timeline => {
                if self.timeline_view.is_none() {
                    self.open_timeline();
                } else if action == Action::Timeline && self.screen.focus == Pane::Timeline {
                    self.close_timeline();
                } else {
                    self.focus_pane_noeffect(Pane::Timeline);
                }
            }
            Action::FocusPane(n) => {
                if let Some(p) = Pane::ORDER.get(usize::from(n).saturating_sub(1)) {
                    return self.focus_pane(*p);
                }
            }
            Action::Find
                if matches!(
                    self.screen.focus,
                    Pane::Conversation | Pane::Events | Pane::Timeline
                ) =>
            {
                self.start_search()
            }
            Action::SearchNext | Action::SearchPrev
                if self.search.is_some()
                    && matches!(
                        self.screen.focus,
                        Pane::Conversation | Pane::Events | Pane::Timeline
                    ) =>
            {
                self.next_hit(action == Action::SearchNext)
            }
            // Space folds a group of the sessions browser, outside step mode.
            Action::Step if self.browsing() && !self.step.mode() => {
                return self.transcripts_action(action);
            }
            Action::Step => return self.step(),
            Action::RunToStage => return self.run_to(StepTarget::Stage),
            Action::RunToCall => return self.run_to(StepTarget::ModelCall),
            Action::StepBack => return self.step_back(),
            Action::Legend => self.show_legend(),
            // The gauge is on screen outside the browser: `e` explains its numbers.
            Action::Explain if !self.browsing() => self.explain_gauge(),
            Action::Compare => return self.open_compare_default(None),
            Action::Type => self.focus_pane_noeffect(Pane::Input),
            Action::Sessions => return self.toggle_sessions(),
            Action::Refresh
                if !(self.sessions.active() && self.screen.focus == Pane::Transcripts) =>
            {
                return vec![self.refresh_files()];
            }
            _ => match self.screen.focus {
                Pane::Conversation => self.conversation_action(action),
                Pane::Events => self.events_action(action),
                Pane::Outputs => return self.outputs_action(action),
                Pane::Transcripts => return self.transcripts_action(action),
                Pane::Timeline => self.timeline_action(action),
                Pane::Input => {}
            },
        }
        Vec::new()
    }

    fn ctrl_c(&mut self) -> Vec<Effect> {
        if let Some(at) = self.screen.last_ctrl_c
            && self.screen.tick.saturating_sub(at) <= TICKS_PER_SECOND
        {
            return vec![Effect::Quit];
        }
        self.screen.last_ctrl_c = Some(self.screen.tick);
        self.notify(CTRL_C_NOTICE);
        vec![Effect::Send(UserCommand::Cancel)]
    }

    /// On a tick: once the second a Ctrl-C gave has passed, its notice goes (it would
    /// promise a quit the next Ctrl-C no longer makes).
    pub(super) fn expire_ctrl_c(&mut self) {
        let Some(at) = self.screen.last_ctrl_c else {
            return;
        };
        if self.screen.tick.saturating_sub(at) <= TICKS_PER_SECOND {
            return;
        }
        self.screen.last_ctrl_c = None;
        self.screen.withdraw_notice(CTRL_C_NOTICE);
    }

    pub(super) fn cycle_pane(&mut self, delta: isize) -> Vec<Effect> {
        // The open timeline stands where the events pane is.
        let from = match self.screen.focus {
            Pane::Timeline => Pane::Events,
            p => p,
        };
        let i = from.number() as isize - 1 + delta;
        let n = Pane::ORDER.len() as isize;
        let p = Pane::ORDER[i.rem_euclid(n) as usize];
        self.focus_pane(p)
    }

    pub(super) fn focus_pane_noeffect(&mut self, p: Pane) {
        // The open timeline is where the events pane is, and it rewinds the conversation:
        // the events, outputs and transcripts are live views, so going there leaves it.
        let p = match p {
            Pane::Events if self.timeline_view.is_some() => Pane::Timeline,
            p => p,
        };
        if matches!(p, Pane::Outputs | Pane::Transcripts) && self.timeline_view.is_some() {
            self.timeline_view = None;
        }
        self.screen.focus = p;
        if matches!(p, Pane::Conversation | Pane::Outputs | Pane::Transcripts) {
            self.screen.main = p;
        }
        self.style_input();
        // The pause card and the input box share a place: the layout may have changed.
        self.fix_scroll();
    }

    fn focus_pane(&mut self, p: Pane) -> Vec<Effect> {
        self.focus_pane_noeffect(p);
        if matches!(p, Pane::Outputs | Pane::Transcripts) {
            vec![self.refresh_files()]
        } else {
            Vec::new()
        }
    }
}
