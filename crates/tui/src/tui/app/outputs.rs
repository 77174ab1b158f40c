//! The outputs pane's state, owned here: the persisted outputs found in the workspace (as
//! the last listing job saw them) and the selection. `panes::outputs` draws it.

use super::{ListState, OutputFile};

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
