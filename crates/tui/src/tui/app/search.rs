//! Search across the conversation, the full session and the events: `f` asks for a query
//! (in the hint line), Enter finds every hit and shows the first, `n` / `N` go to the next
//! and previous hit wherever it is (switching the view or the pane), Esc drops the search.
//! Hits in the full session are the messages no longer in the context as they were (the
//! live ones are already conversation hits). Case-insensitive, by char. In an opened
//! recorded session (the sessions browser) `/` searches its rows instead, with the same
//! prompt and the same `n` / `N`; the browser's filter matches with `search_matches` too.

pub mod draw;

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, ConvView, EventKind, EventRow, Pane};

/// Where a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// A row of what the model sees.
    Conversation(usize),
    /// A row of the full session that left the context (or changed).
    Session(usize),
    /// An index into `App::events`.
    Event(usize),
    /// A row of the session opened from the sessions browser.
    Opened(usize),
}

/// The last search.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub query: String,
    /// The prompt is open.
    pub typing: bool,
    pub hits: Vec<Hit>,
    pub current: usize,
}

impl Search {
    /// `(conversation, full session, events)` hit counts.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for h in &self.hits {
            match h {
                Hit::Conversation(_) => c.0 += 1,
                Hit::Session(_) => c.1 += 1,
                Hit::Event(_) => c.2 += 1,
                Hit::Opened(_) => {}
            }
        }
        c
    }
}

/// Whether `text` holds `query`, case-insensitive by char: every search and filter of the
/// workbench matches with this one function.
pub use crate::util::contains_folded as search_matches;

/// The text an event row is searched by.
pub fn event_text(e: &EventRow) -> String {
    match &e.kind {
        EventKind::Stage { report, .. } => format!("{} {}", report.summary(), report.reason),
        EventKind::Replaced { .. } => "history replaced".to_string(),
        EventKind::Retry { reason, .. } => format!("retry {reason}"),
        EventKind::Error { message, .. } => format!("error {message}"),
        EventKind::CompactRequested { focus } => {
            format!("compact tool {}", focus.as_deref().unwrap_or(""))
        }
        // The rows teach added say in their detail what the row says, and more.
        k @ (EventKind::PromptTooLong { .. }
        | EventKind::SummaryRefused { .. }
        | EventKind::SummaryCall { .. }
        | EventKind::Cancelled
        | EventKind::AnswerCut { .. }
        | EventKind::Notice { .. }
        | EventKind::Settings { .. }
        | EventKind::Continued { .. }) => {
            let (title, text) = crate::tui::event_rows::detail(k);
            format!("{title} {text}")
        }
    }
}

impl App {
    pub(super) fn start_search(&mut self) {
        self.search = Some(Search {
            typing: true,
            ..Search::default()
        });
    }

    pub(super) fn search_key(&mut self, key: KeyEvent) {
        let Some(s) = &mut self.search else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.search = None,
            KeyCode::Backspace => {
                s.query.pop();
            }
            KeyCode::Char(c) => s.query.push(c),
            KeyCode::Enter => {
                s.typing = false;
                if s.query.is_empty() {
                    self.search = None;
                    return;
                }
                let query = s.query.clone();
                let hits = self.find_hits(&query);
                if let Some(s) = &mut self.search {
                    s.hits = hits;
                    s.current = 0;
                }
                self.show_hit();
            }
            _ => {}
        }
    }

    fn find_hits(&self, query: &str) -> Vec<Hit> {
        if self.browsing()
            && let Some(open) = self.sessions.open()
        {
            return (0..open.rows().len())
                .filter(|&i| {
                    super::sessions::opened_row_text(open, i)
                        .is_some_and(|(_, text)| search_matches(&text, query))
                })
                .map(Hit::Opened)
                .collect();
        }
        let has = |text: &str| search_matches(text, query);
        let mut hits: Vec<Hit> = self
            .conversation
            .history()
            .iter()
            .enumerate()
            .filter(|(_, r)| has(&r.info().label) || has(&r.info().full_text()))
            .map(|(i, _)| Hit::Conversation(i))
            .collect();
        hits.extend(
            self.conversation
                .session()
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.live() && (has(&r.info().label) || has(&r.info().full_text())))
                .map(|(i, _)| Hit::Session(i)),
        );
        hits.extend(
            self.events
                .rows()
                .iter()
                .enumerate()
                .filter(|(_, e)| has(&event_text(e)))
                .map(|(i, _)| Hit::Event(i)),
        );
        hits
    }

    pub(super) fn next_hit(&mut self, forward: bool) {
        let Some(s) = &mut self.search else {
            return;
        };
        let n = s.hits.len();
        if n == 0 {
            let q = s.query.clone();
            self.notify(format!("no match for \"{q}\""));
            return;
        }
        s.current = if forward {
            (s.current + 1) % n
        } else {
            (s.current + n - 1) % n
        };
        self.show_hit();
    }

    /// Selects the current hit, switching the conversation's view or the pane to it.
    fn show_hit(&mut self) {
        let Some(s) = &self.search else {
            return;
        };
        let Some(hit) = s.hits.get(s.current).copied() else {
            let q = s.query.clone();
            self.notify(format!("no match for \"{q}\""));
            return;
        };
        match hit {
            Hit::Conversation(i) => {
                self.close_timeline();
                self.conversation.show(ConvView::Model, i);
                self.focus_pane_noeffect(Pane::Conversation);
            }
            Hit::Session(i) => {
                self.close_timeline();
                self.conversation.show(ConvView::Session, i);
                self.focus_pane_noeffect(Pane::Conversation);
            }
            Hit::Event(k) => {
                self.close_timeline();
                self.events.select_row(k);
                self.focus_pane_noeffect(Pane::Events);
            }
            Hit::Opened(i) => {
                self.select_opened_row(i);
                self.announce_hit();
                return;
            }
        }
        self.fix_scroll();
        self.announce_hit();
    }

    /// `"parser": hit 2/7 (3 conversation · 2 full session · 2 events) · n/N`.
    fn announce_hit(&mut self) {
        let Some(s) = &self.search else {
            return;
        };
        if matches!(s.hits.get(s.current), Some(Hit::Opened(_))) {
            let text = format!(
                "\"{}\": hit {}/{} in the session · n/N next/prev",
                s.query,
                s.current + 1,
                s.hits.len()
            );
            self.notify(text);
            return;
        }
        let (c, f, e) = s.counts();
        let text = format!(
            "\"{}\": hit {}/{} ({c} conversation · {f} full session · {e} events) · n/N next/prev",
            s.query,
            s.current + 1,
            s.hits.len()
        );
        self.notify(text);
    }
}
