//! The timeline pane's state and keys, and the rewind it drives: while the pane is open the
//! conversation shows the exact request of the selected call (its rows, marked with the
//! stage that changed each since the call before); Enter opens that call's diff against
//! the previous one, `o` the request as JSON, Esc returns to the live history.

pub mod draw;

use std::collections::HashMap;
use std::sync::Arc;

use super::{App, DiffView, ListState, Pane};
use crate::compact::Stage;
use crate::message::Message;
use crate::timeline::{StepId, Timeline};
use crate::tui::diff::from_timeline;
use crate::tui::keys::Action;
use crate::tui::rows::MessageInfo;
use crate::util::group_digits;

/// The timeline pane's state, owned here: the selected call, the request it rewinds the
/// conversation to, and that view's selection. `App` keeps the fold of the agent's stream
/// (`crate::timeline::Timeline`) it reads from; `draw.rs` draws both.
#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// Index into `App::timeline().calls`.
    selected: usize,
    /// The first call row drawn.
    top: usize,
    /// The newest call stays selected as calls arrive.
    follow: bool,
    /// The selected call's request as rows, and the stage that touched each since the call
    /// before.
    rows: Vec<Arc<MessageInfo>>,
    marks: Vec<Option<Stage>>,
    /// The rewound conversation's selection and expansion.
    list: ListState,
    /// The call `rows` were built for, and the messages they show (to reuse rows).
    built_for: Option<usize>,
    sources: Vec<Arc<Message>>,
    /// The main pane and the focus when it was opened, given back when it closes (issue
    /// 38: `t` in the sessions browser, then Esc, left the user in an idle workbench).
    came_from: Option<(Pane, Pane)>,
}

impl TimelineView {
    /// The selected call, an index into `Timeline::calls`.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The first call row drawn.
    pub fn top(&self) -> usize {
        self.top
    }

    /// Another branch's `calls` calls are shown: the newest selected, rows built again.
    pub(super) fn reset_for(&mut self, calls: usize) {
        self.selected = calls.saturating_sub(1);
        self.follow = true;
        self.built_for = None;
    }

    /// The selected call's request, one row per message.
    pub fn rows(&self) -> &[Arc<MessageInfo>] {
        &self.rows
    }

    /// The stage that touched row `i` since the call before, if any.
    pub fn mark(&self, i: usize) -> Option<Stage> {
        self.marks.get(i).copied().flatten()
    }

    /// The rewound conversation's selection.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    pub(super) fn list_mut(&mut self) -> &mut ListState {
        &mut self.list
    }

    /// Keeps the rewound rows (`w` x `h`) and the call list (`call_rows` high, `calls`
    /// long) scrolled onto their selections.
    pub(super) fn fit(&mut self, calls: usize, call_rows: usize, w: usize, h: usize) {
        let rows = &self.rows;
        self.list
            .fit_rows(rows.len(), |i| rows.get(i).map(|r| &**r), w, h);
        let mut calls_list = ListState {
            selected: self.selected,
            top: self.top,
            ..ListState::default()
        };
        calls_list.clamp(calls);
        calls_list.ensure_visible(calls, call_rows, |_| 1);
        self.selected = calls_list.selected;
        self.top = calls_list.top;
    }
}

impl App {
    /// Every model call so far and the stage steps before each (the fold of the agent's
    /// events).
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The timeline pane's state, when open.
    pub fn timeline_view(&self) -> Option<&TimelineView> {
        self.timeline_view.as_ref()
    }

    /// Opens the timeline on the newest call (focus moves to it).
    pub(super) fn open_timeline(&mut self) {
        let last = self.timeline.calls.len().saturating_sub(1);
        self.timeline_view = Some(TimelineView {
            selected: last,
            follow: true,
            came_from: Some((self.screen.main, self.screen.focus)),
            ..TimelineView::default()
        });
        self.screen.main = Pane::Conversation;
        self.focus_pane_noeffect(Pane::Timeline);
        self.rewind();
        if self.timeline.calls.is_empty() {
            self.notify("no model call yet: the timeline fills as the agent works");
        }
    }

    /// Back to the live history (and the live branch).
    pub(super) fn close_timeline(&mut self) {
        if self.showing_other_branch() {
            self.toggle_branch();
        }
        let came_from = self.timeline_view.take().and_then(|v| v.came_from);
        match came_from {
            // Back where `t` was pressed (the sessions browser, an opened session).
            Some((main, focus)) if focus != Pane::Timeline => {
                self.screen.main = main;
                self.focus_pane_noeffect(focus);
            }
            _ if self.screen.focus == Pane::Timeline => {
                self.focus_pane_noeffect(Pane::Conversation)
            }
            _ => {}
        }
        self.fix_scroll();
    }

    /// A new call arrived: a following view moves to it.
    pub(super) fn timeline_grew(&mut self) {
        let last = self.timeline.calls.len().saturating_sub(1);
        if let Some(v) = &mut self.timeline_view
            && v.follow
        {
            v.selected = last;
            self.rewind();
        }
    }

    /// Builds the rewound conversation for the selected call, reusing the rows of messages
    /// the previous one already showed.
    pub(super) fn rewind(&mut self) {
        let Some(v) = &mut self.timeline_view else {
            return;
        };
        let Some(call) = self.timeline.calls.get(v.selected) else {
            v.rows.clear();
            v.marks.clear();
            v.sources.clear();
            v.built_for = None;
            return;
        };
        if v.built_for == Some(v.selected) {
            return;
        }
        let known: HashMap<*const Message, Arc<MessageInfo>> = v
            .sources
            .iter()
            .zip(&v.rows)
            .map(|(m, r)| (Arc::as_ptr(m), Arc::clone(r)))
            .collect();
        let mut rows = Vec::with_capacity(call.rows.len());
        for r in &call.rows {
            let info = match known.get(&Arc::as_ptr(&r.message)) {
                Some(info) => Arc::clone(info),
                None => {
                    let info = MessageInfo::new(r.message.as_ref().clone());
                    self.tokens.queue(Arc::clone(&info));
                    info
                }
            };
            rows.push(info);
        }
        v.marks = call
            .rows
            .iter()
            .map(|r| r.touches.iter().rev().find_map(|t| t.stage))
            .collect();
        v.sources = call.rows.iter().map(|r| Arc::clone(&r.message)).collect();
        v.rows = rows;
        v.built_for = Some(v.selected);
        self.fix_scroll();
    }

    pub(super) fn timeline_action(&mut self, action: Action) {
        let n = self.timeline.calls.len();
        let page = self.timeline_page();
        let Some(v) = &mut self.timeline_view else {
            return;
        };
        let last = n.saturating_sub(1);
        let moved = match action {
            Action::Up => Some(v.selected.saturating_sub(1)),
            Action::Down => Some((v.selected + 1).min(last)),
            Action::PageUp => Some(v.selected.saturating_sub(page)),
            Action::PageDown => Some((v.selected + page).min(last)),
            Action::Top => Some(0),
            Action::Bottom => Some(last),
            _ => None,
        };
        if let Some(k) = moved {
            v.selected = k;
            v.follow = k == last;
            self.rewind();
            return;
        }
        match action {
            Action::Back => self.close_timeline(),
            Action::Enter => self.open_call_diff(),
            Action::OpenFull => self.open_request(),
            Action::Context => self.open_context(),
            _ => {}
        }
    }

    /// Rows a page key moves in the timeline's call list.
    fn timeline_page(&self) -> usize {
        self.areas()
            .map(crate::tui::layout::timeline_list_rows)
            .unwrap_or(1)
            .saturating_sub(1)
            .max(1)
    }

    /// The selected call's request against the previous call's, labelled by stage.
    pub(super) fn open_call_diff(&mut self) {
        let Some(v) = &self.timeline_view else {
            return;
        };
        let Some(call) = self.timeline.calls.get(v.selected) else {
            self.notify("no model call yet");
            return;
        };
        let number = call.number;
        let rows = self.timeline.call_diff(number);
        let lines = from_timeline(&rows, |m| MessageInfo::new(m.as_ref().clone()));
        let letters = call.letters(&self.timeline.steps);
        let title = if number == 1 {
            format!("call 1: the first request ({} messages)", call.rows.len())
        } else {
            format!(
                "call {} -> call {number}: {} -> {} messages, {} -> {} chars sent{}",
                number - 1,
                self.timeline.calls[v.selected - 1].rows.len(),
                call.rows.len(),
                group_digits(self.timeline.calls[v.selected - 1].size_after),
                group_digits(call.size_after),
                if letters.is_empty() {
                    "; no stage changed anything".to_string()
                } else {
                    format!("; stages {letters}")
                }
            )
        };
        self.show_diff(DiffView::new(title, None, lines));
    }

    /// The selected call's request, exactly as sent, as JSON in the viewer.
    pub(super) fn open_request(&mut self) {
        let Some(call) = self
            .timeline_view
            .as_ref()
            .and_then(|v| self.timeline.calls.get(v.selected))
        else {
            self.notify("no model call yet");
            return;
        };
        // The body the provider encoded and sent, when recorded; a replay has only the
        // messages, shown in ctxlab's own record shape.
        let (what, json) = match call.exact_request() {
            Some(exact) => {
                let text = match exact.pretty() {
                    Some(json) => json,
                    None => exact.describe(),
                };
                (exact.short(), text)
            }
            None => (
                "request (replayed: system prompt and tools not recorded)".to_string(),
                serde_json::to_string_pretty(&call.request_json()).unwrap_or_default(),
            ),
        };
        let title = format!(
            "call {}: {what}, {} messages, {} chars",
            call.number,
            call.rows.len(),
            group_digits(call.size_after)
        );
        self.open_viewer(title, &json);
    }

    /// Opens the diff of stage step `step` (from the timeline's lineage).
    pub(super) fn open_step_diff(&mut self, step: StepId) -> bool {
        let Some(s) = self.timeline.step(step) else {
            return false;
        };
        if s.change.is_none() {
            return false;
        }
        let rows = self.timeline.step_diff(step);
        let lines = from_timeline(&rows, |m| MessageInfo::new(m.as_ref().clone()));
        let title = format!("call {}: {}", s.call, s.report.summary());
        let mut note = format!("why: {}", s.report.why());
        if let Some(snip) = self.timeline.snip_note(step) {
            note = format!("{note}; {snip}");
        }
        self.show_diff(DiffView::new(title, Some(note), lines));
        true
    }
}
