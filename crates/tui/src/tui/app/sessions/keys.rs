//! The sessions browser's own keys (no session open): moving among the rows on screen,
//! Enter on a session to open it, Enter, Space, ← and → on a project to fold or open its
//! group (`▸` folded, `▾` open), `/` to filter the rows by project, title or file name
//! (typed live; Enter keeps it, Esc clears it), `n` / `N` to the next or previous session
//! row. The cursor starts on the first session, not on a heading. Folds and the filter
//! are `sessions::browse::BrowserView`; this file only routes keys to it.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};

use crate::tui::app::{App, Effect};
use crate::tui::keys::Action;
use crate::tui::sessions::BrowserRow;

/// What stays the same of a browser row across a new listing or a new filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::tui::app) enum RowKey {
    Project(String),
    Path(PathBuf),
}

impl RowKey {
    pub(in crate::tui::app) fn of(row: &BrowserRow) -> RowKey {
        match row {
            BrowserRow::Project { name, .. } => RowKey::Project(name.clone()),
            BrowserRow::Session(s) => RowKey::Path(s.entry().path.clone()),
            BrowserRow::Error { path, .. } => RowKey::Path(path.clone()),
        }
    }
}

impl App {
    /// The filter's prompt is open: keys type into it.
    pub(in crate::tui::app) fn browser_filter_typing(&self) -> bool {
        self.sessions.open().is_none() && self.sessions.view.typing()
    }

    /// A key while the filter's prompt is open: the rows follow every key typed.
    pub(in crate::tui::app) fn browser_filter_key(&mut self, key: KeyEvent) {
        let was = self.sessions.selected_row().map(RowKey::of);
        let s = &mut self.sessions;
        match key.code {
            KeyCode::Esc => s.view.clear(&s.rows),
            KeyCode::Enter => s.view.stop_typing(),
            KeyCode::Backspace => s.view.pop(&s.rows),
            KeyCode::Char(c) => s.view.push(c, &s.rows),
            _ => return,
        }
        self.reselect(was);
        if !self.sessions.view.query().is_empty() && !self.selected_is_session() {
            self.select_first_session();
        }
        self.scroll_sessions();
    }

    /// ← and → on a project heading fold and open its group; true when the key was that.
    pub(in crate::tui::app) fn browser_fold_key(&mut self, key: KeyEvent) -> bool {
        let fold = match key.code {
            KeyCode::Left => true,
            KeyCode::Right => false,
            _ => return false,
        };
        let Some(BrowserRow::Project { name, .. }) = self.sessions.selected_row() else {
            return false;
        };
        let name = name.clone();
        let s = &mut self.sessions;
        s.view.set_folded(&name, fold, &s.rows);
        self.reselect(Some(RowKey::Project(name)));
        self.scroll_sessions();
        true
    }

    pub(in crate::tui::app) fn browser_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.page();
        let len = self.sessions.view.visible().len();
        if self.sessions.list.apply(action, len, page) {
            self.scroll_sessions();
            return Vec::new();
        }
        match action {
            Action::Back => {
                if self.jobs.loading.is_some() {
                    self.stop_waiting();
                } else if !self.sessions.view.query().is_empty() {
                    let was = self.sessions.selected_row().map(RowKey::of);
                    let s = &mut self.sessions;
                    s.view.clear(&s.rows);
                    self.reselect(was);
                    self.scroll_sessions();
                } else {
                    self.sessions.active = false;
                }
                Vec::new()
            }
            Action::Refresh => {
                self.sessions.listed = false;
                vec![self.discover_sessions()]
            }
            Action::Search => {
                self.sessions.view.start_typing();
                Vec::new()
            }
            Action::SearchNext | Action::SearchPrev => {
                self.next_session_row(action == Action::SearchNext);
                Vec::new()
            }
            Action::Enter | Action::Replay | Action::Step => match self.sessions.selected_row() {
                Some(BrowserRow::Session(s)) if action != Action::Step => {
                    let (path, bytes) = (s.entry().path.clone(), s.entry().size_bytes);
                    self.open_session(path, Some(bytes))
                }
                Some(BrowserRow::Project { name, .. }) => {
                    let name = name.clone();
                    let s = &mut self.sessions;
                    s.view.toggle_fold(&name, &s.rows);
                    self.reselect(Some(RowKey::Project(name)));
                    self.scroll_sessions();
                    Vec::new()
                }
                Some(BrowserRow::Error { path, message }) if action != Action::Step => {
                    let text = format!("{}: {message}", path.display());
                    self.notify(text);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            // `w` here follows the row's session live (in the timeline it is "where the
            // context goes"): keys are per pane.
            Action::Context => match self.sessions.selected_row() {
                Some(BrowserRow::Session(s)) => {
                    let chosen = crate::session::watch::Chosen {
                        path: s.entry().path.clone(),
                        why: "chosen in the sessions browser".into(),
                        scope: crate::session::watch::project::scope_of(s.entry()),
                    };
                    self.follow_session(chosen)
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn selected_is_session(&self) -> bool {
        matches!(self.sessions.selected_row(), Some(BrowserRow::Session(_)))
    }

    /// Puts the cursor on the first session row on screen (the first row when none).
    pub(in crate::tui::app) fn select_first_session(&mut self) {
        let s = &mut self.sessions;
        s.list.selected = s
            .view
            .visible()
            .iter()
            .position(|&i| matches!(s.rows.get(i), Some(BrowserRow::Session(_))))
            .unwrap_or(0);
    }

    /// After the rows on screen changed: the cursor on the row it was on when that row is
    /// still shown, else kept in range.
    pub(in crate::tui::app) fn reselect(&mut self, was: Option<RowKey>) {
        let s = &mut self.sessions;
        let at = was.and_then(|key| {
            s.view
                .visible()
                .iter()
                .position(|&i| s.rows.get(i).map(RowKey::of).as_ref() == Some(&key))
        });
        let len = s.view.visible().len();
        s.list.selected = at.unwrap_or(s.list.selected).min(len.saturating_sub(1));
        s.list.top = s.list.top.min(s.list.selected);
    }

    /// `n` / `N`: the next or previous session row on screen, round the end.
    fn next_session_row(&mut self, forward: bool) {
        let s = &mut self.sessions;
        let sessions: Vec<usize> = s
            .view
            .visible()
            .iter()
            .enumerate()
            .filter(|(_, i)| matches!(s.rows.get(**i), Some(BrowserRow::Session(_))))
            .map(|(k, _)| k)
            .collect();
        let cur = s.list.selected;
        let next = if forward {
            sessions.iter().find(|&&k| k > cur).or(sessions.first())
        } else {
            sessions
                .iter()
                .rev()
                .find(|&&k| k < cur)
                .or(sessions.last())
        };
        if let Some(&k) = next {
            s.list.selected = k;
        }
        self.scroll_sessions();
    }
}
