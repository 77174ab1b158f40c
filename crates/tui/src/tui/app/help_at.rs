//! `?` opens the help at the section of the view it is pressed in (the timeline, compare,
//! the viewer, the context view, the forgot view, the sessions browser, an opened session,
//! the top for a pane), so a class finds a view's keys without scrolling the table. The help
//! opened over the viewer or a diff returns to it when closed.

use super::{App, HelpView, Layer, Pane};
use crate::tui::keys::{help_section_row, section};

impl App {
    /// The heading of the help section for what has the keys now.
    pub(super) fn help_section(&self) -> &'static str {
        // The view on top names its section (the viewer, a diff, compare, the context and
        // requests views); the others leave it to the focused pane.
        if let Some(heading) = self.top_layer().and_then(Layer::help_section) {
            return heading;
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
        self.push_layer(Layer::Help(HelpView::at(top)));
    }
}
