//! `?` opens the help at the section of the view it is pressed in (the timeline, compare,
//! the viewer, the context view, the forgot view, the sessions browser, an opened session,
//! the top for a pane), so a class finds a view's keys without scrolling the table. The help
//! opened over the viewer or a diff returns to it when closed.

use super::{App, Overlay, Pane};
use crate::tui::keys::{help_section_row, section};

impl App {
    /// The heading of the help section for what has the keys now.
    pub fn help_section(&self) -> &'static str {
        match &self.screen.overlay {
            Some(Overlay::Viewer(v)) => return v.help_section(),
            Some(Overlay::Diff(_)) => return section::DIFF,
            _ => {}
        }
        if self.compare.is_some() {
            return section::COMPARE;
        }
        if self.context.is_some() {
            return section::CONTEXT;
        }
        if self.requests.is_some() {
            return section::REQUESTS;
        }
        // The panes open the help at its top, every key in order; the views at their own.
        match self.screen.focus {
            Pane::Timeline => section::TIMELINE,
            Pane::Transcripts if self.sessions.active() || self.sessions.open().is_some() => {
                section::SESSIONS
            }
            Pane::Conversation | Pane::Events | Pane::Outputs | Pane::Transcripts | Pane::Input => {
                section::EVERYWHERE
            }
        }
    }

    /// Opens the help at `help_section()`; a viewer or diff under it comes back on Esc.
    pub(super) fn open_help(&mut self) {
        let heading = self.help_section();
        let width = self.overlay_inner().width as usize;
        // The section's heading is the first row, even near the end of the table.
        let top = help_section_row(heading, width);
        if let Some(o) = self.screen.overlay.take() {
            self.screen.overlay_stack.push(o);
        }
        self.screen.overlay = Some(Overlay::Help { top });
    }
}
