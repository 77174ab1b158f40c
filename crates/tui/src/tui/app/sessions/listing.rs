//! The browser's listing as it arrives: the first rows (every row in its place, counts
//! pending), then one `Stats` batch at a time filling them in (`tui::sessions::listing`).
//! A batch for an older listing (`R` reloaded, other paths opened) is dropped; while the
//! browser is not shown no batch is asked for, and the filling goes on when it is shown
//! again. One batch in flight at most: what waits is a list of paths.

use std::path::PathBuf;

use super::keys::RowKey;
use crate::tui::app::{App, Effect};
use crate::tui::sessions::listing::{Filled, apply_filled};
use crate::tui::sessions::{SessionWork, uncounted};
use crate::tui::work::Work;

impl App {
    /// The first rows of a listing of `paths`.
    pub(in crate::tui::app) fn listing_arrived(
        &mut self,
        paths: Vec<PathBuf>,
        rows: Vec<crate::tui::sessions::BrowserRow>,
    ) -> Vec<Effect> {
        if paths != self.sessions.paths {
            return Vec::new();
        }
        let first = !self.sessions.listed && self.sessions.rows.is_empty();
        let was = self.sessions.selected_row().map(RowKey::of);
        self.sessions.rows = rows;
        self.sessions.listed = true;
        // A batch still on its way belongs to the listing before this one.
        self.sessions.listing += 1;
        self.sessions.filling = false;
        self.sessions.unfilled = uncounted(&self.sessions.rows);
        self.sessions.view.rebuild(&self.sessions.rows);
        if first {
            self.select_first_session();
        } else {
            self.reselect(was);
        }
        self.scroll_sessions();
        self.next_fill()
    }

    /// A batch of filled rows: copied in (rows keep their place), and the next one asked.
    pub(in crate::tui::app) fn rows_filled(
        &mut self,
        listing: u64,
        results: Vec<Filled>,
        rest: Vec<PathBuf>,
    ) -> Vec<Effect> {
        if listing != self.sessions.listing {
            return Vec::new();
        }
        self.sessions.filling = false;
        self.sessions.unfilled = rest;
        let was = self.sessions.selected_row().map(RowKey::of);
        apply_filled(&mut self.sessions.rows, results);
        // A title read further may change what the filter keeps; the cursor stays on its row.
        self.sessions.view.rebuild(&self.sessions.rows);
        self.reselect(was);
        self.scroll_sessions();
        self.next_fill()
    }

    /// The next batch, when the browser is shown and none is on its way.
    pub(in crate::tui::app) fn next_fill(&mut self) -> Vec<Effect> {
        if !self.sessions.active || self.sessions.filling {
            return Vec::new();
        }
        // A session being opened whole is counted from its view when it arrives: counting
        // it here too would parse it twice at once.
        let files: Vec<PathBuf> = std::mem::take(&mut self.sessions.unfilled)
            .into_iter()
            .filter(|p| !self.opening(p))
            .collect();
        if files.is_empty() {
            return Vec::new();
        }
        self.sessions.filling = true;
        vec![Effect::Work(Work::Session(SessionWork::Stats {
            listing: self.sessions.listing,
            files,
            data_dir: self.sessions.data_dir(),
        }))]
    }
}
