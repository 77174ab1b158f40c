//! The outputs pane's state, owned here: the persisted outputs found in the workspace (as
//! the last listing job saw them) and the selection. `draw.rs` draws it. And the pane's
//! keys (`outputs_action`): Enter only asks for the file (`Work::ReadOutput`; `jobs.rs`
//! opens the viewer when the text arrives), `m` jumps to the row that points at it
//! (`pane_actions.rs`: that moves other panes).

pub mod draw;

use super::{App, Effect, ListState, LoadKind, OutputFile};
use crate::tui::keys::Action;
use crate::tui::work::Work;

#[derive(Debug, Clone, Default)]
pub struct OutputsState {
    files: Vec<OutputFile>,
    list: ListState,
}

impl OutputsState {
    pub fn files(&self) -> &[OutputFile] {
        &self.files
    }

    pub fn list(&self) -> &ListState {
        &self.list
    }

    pub(super) fn list_mut(&mut self) -> &mut ListState {
        &mut self.list
    }

    /// The file the selection is on.
    pub fn selected(&self) -> Option<&OutputFile> {
        self.files.get(self.list.selected)
    }

    /// Takes a fresh listing (`fix_scroll` brings the selection back in range).
    pub(super) fn set(&mut self, files: Vec<OutputFile>) {
        self.files = files;
    }
}

impl App {
    pub(super) fn outputs_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.page();
        let len = self.outputs.files().len();
        if self.outputs.list_mut().apply(action, len, page) {
            self.fix_scroll();
            return Vec::new();
        }
        let Some(file) = self.outputs.selected().cloned() else {
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
                    root: self.agent.workspace.clone(),
                    relative: file.relative,
                })];
            }
            Action::JumpToMarker => self.jump_to_marker(&file.relative),
            Action::Back => self.stop_waiting(),
            _ => {}
        }
        Vec::new()
    }
}
