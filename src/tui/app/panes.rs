//! The actions of the conversation, events and outputs panes: moving, expanding, toggling
//! the view, opening a diff or the viewer, jumping from a persisted output to the row that
//! points at it. Opening an output only asks for it (`Work::ReadOutput`); `jobs.rs` opens
//! the viewer when the text arrives.

use super::{App, ConvView, DiffView, Effect, LoadKind, Overlay, Pane};
use crate::tui::diff::diff_rows;
use crate::tui::keys::Action;
use crate::tui::work::Work;

impl App {
    pub(super) fn conversation_action(&mut self, action: Action) {
        let page = self.page();
        let len = self.conv_len();
        let view = self.conv_view;
        let list = match view {
            ConvView::Model => &mut self.conv,
            ConvView::Session => &mut self.sess,
        };
        if list.apply(action, len, page) {
            self.fix_scroll();
            return;
        }
        match action {
            Action::Enter => {
                let uid = self
                    .conv_row(self.conv_list().selected)
                    .map(|(i, _, _)| i.uid);
                if let Some(uid) = uid {
                    match view {
                        ConvView::Model => self.conv.toggle(uid),
                        ConvView::Session => self.sess.toggle(uid),
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

    pub(super) fn events_action(&mut self, action: Action) {
        let visible = self.visible_events();
        let page = self.events_viewport().max(1) as isize;
        if self.events_list.apply(action, visible.len(), page) {
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
                    None => {
                        // No diff: the row itself, in full (reasons and notices are long).
                        let kind = visible
                            .get(self.events_list.selected)
                            .and_then(|&i| self.events.get(i))
                            .map(|e| e.kind.clone());
                        match kind {
                            Some(k) => {
                                let (title, text) = crate::tui::panes::events::detail(&k);
                                let width = self.viewer_width();
                                let lines: Vec<String> = text
                                    .lines()
                                    .flat_map(|l| crate::tui::pause::wrap_words(l, width))
                                    .collect();
                                self.open_viewer(title, &lines.join("\n"));
                            }
                            None => self.notify("no event selected"),
                        }
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn outputs_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.page();
        if self.outputs_list.apply(action, self.outputs.len(), page) {
            self.fix_scroll();
            return Vec::new();
        }
        let Some(file) = self.outputs.get(self.outputs_list.selected).cloned() else {
            return Vec::new();
        };
        match action {
            Action::Enter => {
                let id = self.start_job(LoadKind::Output {
                    relative: file.relative.clone(),
                    bytes: file.bytes,
                });
                return vec![Effect::Work(Work::ReadOutput {
                    id,
                    root: self.workspace.clone(),
                    relative: file.relative,
                })];
            }
            Action::JumpToMarker => self.jump_to_marker(&file.relative),
            Action::Back => self.stop_waiting(),
            _ => {}
        }
        Vec::new()
    }

    /// Columns of text the viewer overlay shows (its box is 90% of the screen's width).
    fn viewer_width(&self) -> usize {
        let area = crate::tui::layout::full(self.size);
        (crate::tui::layout::inner(crate::tui::layout::centered(area, 90, 85)).width as usize)
            .max(1)
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
}
