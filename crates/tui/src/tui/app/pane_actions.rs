//! The keys that cross panes, so they are no one pane's: the conversation pane's (its list
//! is the timeline's rewound call while the timeline is open, and `/` types into the input
//! box), and the jump from a persisted output to the row that points at it (or, once
//! compaction removed that row, to where it went), which moves the conversation's or the
//! events' selection and the focus. Where a message went (`fate_note`) is read from the
//! timeline's lineage. The events and outputs panes' own keys are in `events.rs` and
//! `outputs.rs`, beside their state.

use super::{App, ConvView, Pane};
use crate::timeline::Touch;
use crate::timeline::lineage::RowEffect;
use crate::tui::keys::Action;

/// `call 17 snip → [snipped 3 messages]`: one touch in a few words.
fn touch_words(t: &Touch) -> String {
    let what = match &t.effect {
        RowEffect::Snipped { marker } => marker.clone(),
        RowEffect::Summarized { .. } => "summary".to_string(),
        RowEffect::Persisted { path, .. } => path.clone(),
        RowEffect::Placeholder { .. } => "placeholder".to_string(),
        other => other.describe(),
    };
    let stage = t
        .stage
        .map(crate::tui::event_rows::short_name)
        .unwrap_or("replaced");
    format!("call {} {stage} → {what}", t.call)
}

impl App {
    pub(super) fn conversation_action(&mut self, action: Action) {
        let page = self.page();
        let len = self.conv_len();
        let view = self.conversation.view();
        let list = match &mut self.timeline_view {
            Some(v) => v.list_mut(),
            None => self.conversation.list_mut(view),
        };
        if list.apply(action, len, page) {
            self.fix_scroll();
            return;
        }
        match action {
            Action::Enter => {
                let uid = self.conv_row(self.conv_list().selected).map(|r| r.info.uid);
                if let Some(uid) = uid {
                    match &mut self.timeline_view {
                        Some(v) => v.list_mut().toggle(uid),
                        None => self.conversation.list_mut(view).toggle(uid),
                    }
                }
                self.fix_scroll();
            }
            Action::ToggleView if self.timeline_view.is_some() => {
                self.notify("the conversation shows the timeline's call; Esc returns to live");
            }
            // Rewound to a call: Esc here returns to live, as it does in the timeline.
            Action::Back if self.timeline_view.is_some() => self.close_timeline(),
            Action::ShowDiff => self.diff_of_selected_row(),
            Action::Context => self.context_at_latest(),
            Action::ToggleView => {
                self.conversation.toggle_view();
                self.fix_scroll();
            }
            Action::OpenFull => {
                if let Some(r) = self.conv_row(self.conv_list().selected) {
                    let title =
                        format!("message {} ({})", self.conv_list().selected, r.info.role());
                    let text = r.info.full_text();
                    self.open_viewer(title, &text);
                }
            }
            // `/` starts a slash command, as in the input box (`f` searches).
            Action::Search => {
                self.focus_pane_noeffect(Pane::Input);
                self.input.insert_char('/');
            }
            _ => {}
        }
    }

    /// Where session row `i` went, in a few words, the removal first: `✗ call 17 snip →
    /// [snipped 3 messages]`, `✗ call 34 compact → summary; before: call 34 budget →
    /// .task_outputs/tool-results/t.txt`, `~ call 12 micro → placeholder`.
    pub fn fate_note(&self, i: usize) -> Option<String> {
        let entry = self.timeline_entry(i)?;
        let removal = entry.removal();
        let mut parts: Vec<String> = Vec::new();
        if let Some(r) = removal {
            parts.push(format!("✗ {}", touch_words(r)));
        }
        let changes: Vec<String> = entry
            .touches
            .iter()
            .filter(|t| Some(*t) != removal)
            .map(touch_words)
            .collect();
        match (removal.is_some(), changes.is_empty()) {
            (_, true) => {}
            (true, false) => parts.push(format!("before: {}", changes.join(", "))),
            (false, false) => parts.push(format!("~ {}", changes.join(", "))),
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The timeline's entry for full-session row `i` (None for a summary).
    fn timeline_entry(&self, i: usize) -> Option<&crate::timeline::SessionEntry> {
        self.timeline
            .session
            .get(self.conversation.session().get(i)?.entry()?)
    }

    /// The stage touch a full-session row's diff shows: its removal, else its last change.
    fn row_touch(&self, i: usize) -> Option<&Touch> {
        let entry = self.timeline_entry(i)?;
        entry.removal().or(entry.touches.last())
    }

    /// `d` in the full session: the diff of the stage that removed (or changed) the row.
    fn diff_of_selected_row(&mut self) {
        if self.timeline_view.is_some() || self.conversation.view() != ConvView::Session {
            self.notify("d shows where a message went: in the full session (v)");
            return;
        }
        let selected = self.conversation.list(ConvView::Session).selected;
        let step = self.row_touch(selected).and_then(|t| t.step);
        match step {
            Some(step) if self.open_step_diff(step) => {}
            _ => self.notify("this message is still in the context, unchanged"),
        }
    }

    /// Selects the conversation row whose `<persisted-output>` marker names `relative`; when
    /// compaction removed that row, the full-session row it came from (which says where it
    /// went), else the stage event that wrote the file.
    pub(super) fn jump_to_marker(&mut self, relative: &str) {
        let found = self
            .conversation
            .history()
            .iter()
            .position(|r| r.info().persisted_paths.iter().any(|p| p == relative));
        if let Some(i) = found {
            self.close_timeline();
            self.conversation.show(ConvView::Model, i);
            self.focus_pane_noeffect(Pane::Conversation);
            self.fix_scroll();
            return;
        }
        let persisted =
            |t: &Touch| matches!(&t.effect, RowEffect::Persisted { path, .. } if path == relative);
        let entry = self
            .timeline
            .session
            .iter()
            .position(|e| e.touches.iter().any(persisted));
        let session = entry.and_then(|k| {
            self.conversation
                .session()
                .iter()
                .position(|r| r.entry() == Some(k))
        });
        if let Some(i) = session {
            self.close_timeline();
            self.conversation.show(ConvView::Session, i);
            self.focus_pane_noeffect(Pane::Conversation);
            self.fix_scroll();
            let gone = self.fate_note(i).unwrap_or_default();
            let transcript = match self.row_touch(i).map(|t| &t.effect) {
                Some(RowEffect::Summarized { transcript }) => {
                    format!("; {transcript} holds it")
                }
                _ => String::new(),
            };
            self.notify(format!(
                "no longer in the context: full-session row {i} ({gone}){transcript}; d shows the diff"
            ));
            return;
        }
        let step = self
            .timeline
            .steps_by_id()
            .find(|(_, s)| s.report.files_written.iter().any(|f| f.path == relative))
            .map(|(id, _)| id);
        let event = step.and_then(|step| self.event_for_step(step));
        let row = event.and_then(|seq| {
            self.visible_events()
                .iter()
                .position(|&k| self.events.rows().get(k).is_some_and(|e| e.seq == seq))
        });
        match row {
            Some(r) => {
                self.close_timeline();
                self.events.list_mut().selected = r;
                self.focus_pane_noeffect(Pane::Events);
                self.fix_scroll();
                self.notify(format!(
                    "no message points at {relative}: the stage that wrote it"
                ));
            }
            None => self.notify(format!("no message in the context points at {relative}")),
        }
    }
}
