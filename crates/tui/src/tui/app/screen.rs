//! The screen's own facts, one of `App`'s parts: the terminal's size, the tick clock, which
//! pane has focus and what the main area shows, the hint line's notices and
//! the double Ctrl-C. Notices live here because their expiry is measured in ticks and pages
//! of the hint line's width, both screen facts.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::state::Pane;
use super::{NOTICE_PAGE_TICKS, TICKS_PER_SECOND};
use crate::tui::theme::Theme;

/// How long a notice stays in the hint line, at least.
const NOTICE_TICKS: u64 = 5 * TICKS_PER_SECOND;

/// The screen's state. Fields are visible to `App`'s own modules only: the panes read them
/// through `App`'s methods.
#[derive(Debug)]
pub(super) struct Screen {
    pub(super) theme: Theme,
    /// The terminal's size (columns, rows).
    pub(super) size: (u16, u16),
    /// Ticks since the start: the clock spinners, notices and the double Ctrl-C read.
    pub(super) tick: u64,
    pub(super) focus: Pane,
    /// What the main area shows: Conversation, Outputs or Transcripts.
    pub(super) main: Pane,
    /// The tick of the last Ctrl-C, while a second one would quit.
    pub(super) last_ctrl_c: Option<u64>,
    notice: Option<(String, u64)>,
    /// Notices waiting for the hint line, shown one after the other.
    notices_queued: VecDeque<String>,
    /// The file whose existence says the first-run legend was seen (None: not remembered).
    pub(super) legend_marker: Option<PathBuf>,
    /// The scenario's request, held until the loop runs and the first-run legend is closed:
    /// the tour must not play behind the legend.
    pub(super) start_request: Option<String>,
}

impl Screen {
    pub(super) fn new(no_color: bool) -> Screen {
        Screen {
            theme: Theme::new(no_color),
            size: (120, 40),
            tick: 0,
            // Outside the input: `q` and `?` are keys from the first second; `i` types.
            focus: Pane::Conversation,
            main: Pane::Conversation,
            last_ctrl_c: None,
            notice: None,
            notices_queued: VecDeque::new(),
            legend_marker: None,
            start_request: None,
        }
    }

    /// The notice in the hint line and the tick it was shown at (expired or not).
    pub(super) fn notice(&self) -> Option<(&str, u64)> {
        self.notice.as_ref().map(|(s, at)| (s.as_str(), *at))
    }

    /// The notice while its time lasts.
    pub(super) fn notice_text(&self) -> Option<&str> {
        self.notice
            .as_ref()
            .filter(|(s, at)| self.tick.saturating_sub(*at) < notice_ticks(s, self.size.0))
            .map(|(s, _)| s.as_str())
    }

    /// Whether a notice is shown or waiting (a tick then changes what is drawn).
    pub(super) fn has_notices(&self) -> bool {
        self.notice.is_some() || !self.notices_queued.is_empty()
    }

    pub(super) fn notify(&mut self, text: String) {
        self.notice = Some((text, self.tick));
    }

    pub(super) fn notify_queued(&mut self, text: String) {
        if self.notice_text().is_none() && self.notices_queued.is_empty() {
            self.notify(text);
        } else {
            self.notices_queued.push_back(text);
        }
    }

    /// Takes `text` off the hint line if it is the notice shown (a promise no longer true).
    pub(super) fn withdraw_notice(&mut self, text: &str) {
        if self.notice.as_ref().is_some_and(|(shown, _)| shown == text) {
            self.notice = None;
        }
    }

    /// One tick: the clock moves and an expired notice gives way to the next one waiting.
    pub(super) fn tick(&mut self) {
        self.tick += 1;
        if self.notice_text().is_none() {
            self.notice = None;
            if let Some(next) = self.notices_queued.pop_front() {
                self.notify(next);
            }
        }
    }
}

/// A notice in pages that fit a hint line `width` columns wide (with room for `(1/2)`).
pub fn notice_pages(text: &str, width: u16) -> Vec<String> {
    crate::tui::pause::wrap_words(text, (width as usize).saturating_sub(6).max(1))
}

/// Ticks a notice stays: five seconds, or every page its time when it has several.
fn notice_ticks(text: &str, width: u16) -> u64 {
    NOTICE_TICKS.max(notice_pages(text, width).len() as u64 * NOTICE_PAGE_TICKS)
}

/// `mm:ss.d` from ticks.
pub fn fmt_ticks(ticks: u64) -> String {
    let tenths = ticks * 10 / TICKS_PER_SECOND;
    let secs = tenths / 10;
    format!("{:02}:{:02}.{}", secs / 60, secs % 60, tenths % 10)
}

/// Seconds, tenths: `3.2s`.
pub fn fmt_elapsed(ticks: u64) -> String {
    let tenths = ticks * 10 / TICKS_PER_SECOND;
    format!("{}.{}s", tenths / 10, tenths % 10)
}
