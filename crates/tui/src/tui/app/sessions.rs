//! The sessions browser's actions (a mode of the transcripts pane, `b`): listing the
//! recorded sessions, counting them in the background, opening one (its head at once, the
//! whole file as a second job with a progress line), moving in the opened session, `o` for
//! a row's full text, `r` to replay it into a scratch store, Esc to close it (its scratch
//! folder goes with it). Only asks for work (`Work::Session`); takes the results here too.

pub mod draw;
mod keys;
mod listing;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{App, Effect, ListState, LoadKind, Pane};
use crate::message::Message;
use crate::tui::keys::Action;
use crate::tui::sessions::browse::BrowserView;
use crate::tui::sessions::scratch::scratch_dir;
use crate::tui::sessions::{
    BrowserRow, OpenedSession, Progress, SessionDone, SessionWork, ViewRow,
};
use crate::tui::work::Work;

/// The sessions browser's and the opened session's state, owned here: whether the
/// transcripts pane shows the browser, what it lists and the selection, the session opened
/// from it, and where replays go. `App` routes the browser's keys and its jobs' results
/// here; `draw.rs` draws it through the methods below.
#[derive(Debug, Default)]
pub struct SessionsState {
    /// The transcripts pane shows the sessions browser instead of `.transcripts/`.
    active: bool,
    /// What the browser lists: these files and folders, or the default roots when empty.
    paths: Vec<PathBuf>,
    /// The listing arrived (before that the browser says it is looking).
    listed: bool,
    rows: Vec<BrowserRow>,
    /// Folds and the filter, and the rows they leave on screen; `list` selects among those.
    view: BrowserView,
    list: ListState,
    open: Option<OpenedSession>,
    /// Where replays write (`<data dir>/ctxlab/scratch`); None: replays are not offered.
    scratch_root: Option<PathBuf>,
    /// A file given to `ctxlab open` (and its size, for the loading line): opened as soon
    /// as the loop starts.
    open_on_start: Option<(PathBuf, Option<u64>)>,
    /// Scratch folders handed out by this run.
    scratch_seq: u64,
    /// The listing's number: a batch of filled rows for another one is dropped.
    listing: u64,
    /// The listed files whose rows wait for their counts (`app::sessions::listing`).
    unfilled: Vec<PathBuf>,
    /// A batch of them is being filled.
    filling: bool,
}

/// The start-up facts `Msg::Start` carries (the loop's caller read them; `App` reads no disk).
#[derive(Debug, Clone, Default)]
pub struct Startup {
    pub notices: Vec<String>,
    /// Where scratch stores go (`tui::sessions::scratch::scratch_root`).
    pub scratch_root: Option<PathBuf>,
    pub sessions: Option<StartSessions>,
    /// The file that says the first-run legend was seen, when it does not exist yet: the
    /// legend shows, and closing it asks for the file.
    pub unseen_legend: Option<PathBuf>,
    /// The scenario's request (the scripted tour's): sent when the loop starts, or, while
    /// the first-run legend is open, when it is closed.
    pub request: Option<String>,
}

/// Sessions to show at start.
#[derive(Debug, Clone)]
pub enum StartSessions {
    /// The browser over these files and folders (the default places when empty).
    Browse(Vec<PathBuf>),
    /// One session file, opened at once (`bytes`: its size when known).
    File { path: PathBuf, bytes: Option<u64> },
}

impl SessionsState {
    /// The transcripts pane shows the browser.
    pub fn active(&self) -> bool {
        self.active
    }

    /// What the browser lists (the default roots when empty).
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The listing arrived.
    pub fn listed(&self) -> bool {
        self.listed
    }

    /// Every row of the listing (folded and filtered ones too).
    pub fn rows(&self) -> &[BrowserRow] {
        &self.rows
    }

    /// Folds and the filter, and the rows on screen (`list` selects among them).
    pub fn view(&self) -> &BrowserView {
        &self.view
    }

    /// The selection among the rows on screen.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// The listing's row under the cursor.
    pub fn selected_row(&self) -> Option<&BrowserRow> {
        self.rows.get(*self.view.visible().get(self.list.selected)?)
    }

    /// The session opened from the browser.
    pub fn open(&self) -> Option<&OpenedSession> {
        self.open.as_ref()
    }

    /// Where replays write; None: replays are not offered.
    pub fn scratch_root(&self) -> Option<&PathBuf> {
        self.scratch_root.as_ref()
    }

    /// The data dir the listing cache is kept in: the scratch root's folder (both are the
    /// platform data dir's, `scratch::scratch_root`); None: the listing is not cached.
    fn data_dir(&self) -> Option<PathBuf> {
        self.scratch_root
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    }
}

impl App {
    /// The sessions browser or an opened session has focus: the main pane takes the
    /// screen's width (`layout::areas_of`).
    pub fn browsing(&self) -> bool {
        self.sessions.active
            && self.screen.focus == Pane::Transcripts
            && self.timeline_view.is_none()
    }

    /// The sessions browser's and the opened session's state.
    pub fn sessions(&self) -> &SessionsState {
        &self.sessions
    }

    /// Shows the sessions browser listing `paths` (the default roots when empty) and asks
    /// for the listing.
    pub(super) fn open_sessions(&mut self, paths: Vec<PathBuf>) -> Vec<Effect> {
        self.sessions.active = true;
        self.sessions.paths = paths;
        self.sessions.listed = false;
        self.sessions.rows.clear();
        self.sessions.unfilled.clear();
        self.sessions.view = BrowserView::default();
        self.sessions.list = Default::default();
        self.focus_pane_noeffect(Pane::Transcripts);
        vec![self.discover_sessions()]
    }

    /// Takes what `Msg::Start` carries; the jobs it needs wait for `Msg::LoopStarted`.
    pub(super) fn start(&mut self, start: Startup) {
        self.add_notices(start.notices);
        self.sessions.scratch_root = start.scratch_root;
        match start.sessions {
            None => {}
            // Listed by `start_effects`, so the listing is asked for once.
            Some(StartSessions::Browse(paths)) => {
                let _ = self.open_sessions(paths);
            }
            Some(StartSessions::File { path, bytes }) => {
                let _ = self.open_sessions(vec![path.clone()]);
                self.sessions.open_on_start = Some((path, bytes));
            }
        }
        if let Some(marker) = start.unseen_legend {
            self.screen.legend_marker = Some(marker);
            self.show_legend();
        }
        self.screen.start_request = start.request;
    }

    /// What the loop does first: clear scratch stores earlier runs left, list the sessions
    /// when the browser starts open, open the file `ctxlab open` named.
    pub(super) fn start_effects(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(root) = &self.sessions.scratch_root {
            effects.push(Effect::Work(Work::Session(SessionWork::CleanScratch {
                root: root.clone(),
            })));
        }
        if self.sessions.active && !self.sessions.listed {
            effects.push(self.discover_sessions());
        }
        if let Some((path, bytes)) = self.sessions.open_on_start.take() {
            effects.extend(self.open_session(path, bytes));
        }
        if self.screen.legend_marker.is_none() {
            effects.extend(self.submit_start_request());
        }
        effects
    }

    /// The opened session's conversation and its label, for views that run strategies
    /// on it (the compare view).
    pub fn opened_messages(&self) -> Option<(&str, Arc<Vec<Message>>)> {
        let open = self.sessions.open.as_ref()?;
        Some((open.label(), open.messages().clone()))
    }

    pub(super) fn discover_sessions(&self) -> Effect {
        Effect::Work(Work::Session(SessionWork::Discover {
            paths: self.sessions.paths.clone(),
            data_dir: self.sessions.data_dir(),
        }))
    }

    /// `b`: the sessions browser, or back to `.transcripts/` when it is what is shown.
    pub(super) fn toggle_sessions(&mut self) -> Vec<Effect> {
        if self.sessions.active && self.screen.focus == Pane::Transcripts {
            self.sessions.active = false;
            return Vec::new();
        }
        self.sessions.active = true;
        self.focus_pane_noeffect(Pane::Transcripts);
        if self.sessions.listed {
            // Rows left unfilled while the browser was not shown.
            self.next_fill()
        } else {
            vec![self.discover_sessions()]
        }
    }

    /// Asks for a session: its first lines and, in parallel, all of it.
    pub(super) fn open_session(&mut self, path: PathBuf, bytes: Option<u64>) -> Vec<Effect> {
        let progress = Progress::default();
        let id = self.start_job(LoadKind::Session {
            relative: path.display().to_string(),
            bytes,
            progress: progress.clone(),
        });
        self.sessions.active = true;
        self.focus_pane_noeffect(Pane::Transcripts);
        [true, false]
            .into_iter()
            .map(|head| {
                Effect::Work(Work::Session(SessionWork::Open {
                    id,
                    path: path.clone(),
                    head,
                    progress: progress.clone(),
                }))
            })
            .collect()
    }

    pub(super) fn sessions_action(&mut self, action: Action) -> Vec<Effect> {
        if self.sessions.open.is_some() {
            return self.opened_action(action);
        }
        self.browser_action(action)
    }

    fn opened_action(&mut self, action: Action) -> Vec<Effect> {
        let page = self.page();
        let Some(open) = &mut self.sessions.open else {
            return Vec::new();
        };
        let len = open.rows().len();
        if open.list_mut().apply(action, len, page) {
            self.scroll_sessions();
            return Vec::new();
        }
        match action {
            Action::Back => return self.close_session(),
            Action::Enter | Action::OpenFull => {
                if let Some((title, text)) = row_text(open) {
                    self.open_viewer(title, &text);
                }
            }
            Action::Replay => return self.replay_session(),
            Action::Forgot => return self.forgot_of_opened_row(),
            Action::Fork => return self.fork_of_opened_row(),
            Action::Context => return self.context_of_opened(),
            Action::Refresh => return self.requests_of_opened(),
            Action::Search => self.start_search(),
            Action::SearchNext | Action::SearchPrev => self.next_hit(action == Action::SearchNext),
            Action::NextCompaction | Action::PrevCompaction => {
                self.go_to_compaction(action == Action::NextCompaction)
            }
            _ => {}
        }
        Vec::new()
    }

    /// `]` / `[` in an opened session: selects the next (previous) compaction row after
    /// (before) the selected row; at the last (first) one, says so and stays.
    fn go_to_compaction(&mut self, forward: bool) {
        let Some(open) = &mut self.sessions.open else {
            return;
        };
        let from = open.list_mut().selected;
        let is_compaction = |r: &ViewRow| matches!(r, ViewRow::Compaction(_));
        let rows = open.rows();
        let hit = if forward {
            rows.iter()
                .enumerate()
                .skip(from + 1)
                .find(|(_, r)| is_compaction(r))
                .map(|(i, _)| i)
        } else {
            rows[..from.min(rows.len())].iter().rposition(is_compaction)
        };
        match hit {
            Some(i) => self.select_opened_row(i),
            None if !rows.iter().any(is_compaction) => self.notify("no compaction in this session"),
            None if forward => self.notify("no later compaction"),
            None => self.notify("no earlier compaction"),
        }
    }

    /// Selects row `i` of the opened session (a search hit) and scrolls to it.
    pub(super) fn select_opened_row(&mut self, i: usize) {
        if let Some(open) = &mut self.sessions.open {
            open.list_mut().selected = i;
        }
        self.scroll_sessions();
    }

    /// Esc in an opened session: back to the list; its scratch store is removed.
    fn close_session(&mut self) -> Vec<Effect> {
        if self.jobs.loading.is_some() {
            self.stop_waiting();
        }
        let Some(open) = self.sessions.open.take() else {
            return Vec::new();
        };
        match open.scratch() {
            Some(dir) => vec![Effect::Work(Work::Session(SessionWork::RemoveScratch {
                dir: dir.to_path_buf(),
            }))],
            None => Vec::new(),
        }
    }

    /// `r`: the opened session through the pipeline with the current thresholds and
    /// strategy, into a fresh scratch store (the last one is removed).
    fn replay_session(&mut self) -> Vec<Effect> {
        let Some(root) = self.sessions.scratch_root.clone() else {
            self.notify("no data dir for a scratch store: cannot replay here");
            return Vec::new();
        };
        let Some(open) = &self.sessions.open else {
            return Vec::new();
        };
        if let Some(e) = &open.load_error() {
            let text = format!(
                "only the first lines could be read, so there is nothing whole to replay: {e}"
            );
            self.notify(text);
            return Vec::new();
        }
        if !open.complete() {
            self.notify("still loading the session: r once it is all read");
            return Vec::new();
        }
        let (label, messages) = (open.label().to_string(), open.messages().clone());
        // A recording's refusals and compact-tool calls, as `ctxlab replay` honours them.
        let recorded = open.recorded().to_vec();
        self.sessions.scratch_seq += 1;
        let scratch = scratch_dir(&root, self.sessions.scratch_seq);
        let mut effects = Vec::new();
        if let Some(open) = &mut self.sessions.open
            && let Some(old) = open.replace_scratch(scratch.clone())
        {
            effects.push(Effect::Work(Work::Session(SessionWork::RemoveScratch {
                dir: old,
            })));
        }
        let id = self.start_job(LoadKind::Replay {
            relative: label,
            messages: messages.len(),
        });
        effects.push(Effect::Work(Work::Session(SessionWork::Replay {
            id,
            messages,
            config: self.agent.config,
            recorded,
            scratch,
        })));
        effects
    }

    pub(super) fn sessions_done(&mut self, done: SessionDone) -> Vec<Effect> {
        match done {
            SessionDone::Discovered { paths, rows } => return self.listing_arrived(paths, rows),
            SessionDone::Stats {
                listing,
                results,
                rest,
            } => return self.rows_filled(listing, results, rest),
            SessionDone::Opened { id, head, result } => {
                let awaited = self.jobs.loading.as_ref().is_some_and(|l| l.id == id);
                if !awaited {
                    return Vec::new();
                }
                if !head {
                    self.jobs.loading = None;
                }
                match result {
                    Ok(view) => {
                        // The head shows until the whole file is here; the selection stays.
                        let list = self.sessions.open.take().map(|o| o.list().clone());
                        let mut view = *view;
                        if let Some(list) = list {
                            *view.list_mut() = list;
                        }
                        if head && view.complete() {
                            // The file was small: this is all of it.
                            self.jobs.loading = None;
                        }
                        if view.complete() {
                            self.count_opened(&view);
                        }
                        self.sessions.open = Some(view);
                        self.scroll_sessions();
                    }
                    Err(e) => {
                        let e = e.to_string();
                        self.jobs.loading = None;
                        if let Some(open) = &mut self.sessions.open
                            && !head
                        {
                            open.set_load_error(e.clone());
                        }
                        self.notify(e);
                    }
                }
            }
            SessionDone::Replayed { id, replay } => {
                let awaited = self.jobs.loading.as_ref().is_some_and(|l| l.id == id);
                if awaited {
                    self.jobs.loading = None;
                    match &mut self.sessions.open {
                        Some(open) if open.scratch() == Some(replay.scratch()) => {
                            open.set_replay(*replay);
                        }
                        _ => {
                            return vec![Effect::Work(Work::Session(SessionWork::RemoveScratch {
                                dir: replay.scratch().to_path_buf(),
                            }))];
                        }
                    }
                } else {
                    return vec![Effect::Work(Work::Session(SessionWork::RemoveScratch {
                        dir: replay.scratch().to_path_buf(),
                    }))];
                }
            }
            SessionDone::Cleaned => {}
        }
        Vec::new()
    }

    /// Whether `path` is the session being opened or shown.
    fn opening(&self, path: &Path) -> bool {
        let loading = self.jobs.loading.as_ref().is_some_and(|l| {
            matches!(&l.what, LoadKind::Session { relative, .. }
                if *relative == path.display().to_string())
        });
        loading
            || self
                .sessions
                .open
                .as_ref()
                .is_some_and(|o| o.path() == path)
    }

    /// The browser row of an opened session takes its numbers from the view.
    fn count_opened(&mut self, view: &OpenedSession) {
        let numbers = view.numbers();
        for row in &mut self.sessions.rows {
            if let BrowserRow::Session(s) = row
                && s.entry().path == view.path()
                && s.stats().is_none()
            {
                s.set_stats(Ok(numbers.clone()));
            }
        }
    }

    /// Keeps the browser's and the opened session's selection on screen (one line a row).
    pub(super) fn scroll_sessions(&mut self) {
        let (_, h) = self.main_viewport();
        // The list's header line, and the opened session's usage lines below it.
        let view = &self.sessions.view;
        let filter_line = usize::from(!view.query().is_empty() || view.typing());
        let browser_rows = h.saturating_sub(1 + filter_line).max(1);
        keep_visible(
            &mut self.sessions.list,
            self.sessions.view.visible().len(),
            browser_rows,
        );
        if let Some(open) = &mut self.sessions.open {
            let rows = crate::tui::layout::session_list_rows(h, open.replay().is_some());
            let len = open.rows().len();
            keep_visible(open.list_mut(), len, rows);
        }
    }
}

pub(super) fn keep_visible(list: &mut super::ListState, len: usize, viewport: usize) {
    let viewport = viewport.max(1);
    list.selected = list.selected.min(len.saturating_sub(1));
    if list.selected < list.top {
        list.top = list.selected;
    } else if list.selected >= list.top + viewport {
        list.top = list.selected + 1 - viewport;
    }
}

/// A row's full text for the viewer: a message's blocks, or everything a compaction
/// recorded.
fn row_text(open: &OpenedSession) -> Option<(String, String)> {
    opened_row_text(open, open.list().selected)
}

/// Row `i`'s title and full text (what the viewer shows and `/` searches).
pub(super) fn opened_row_text(open: &OpenedSession, i: usize) -> Option<(String, String)> {
    match open.rows().get(i)? {
        ViewRow::Message { index, .. } => {
            let info = open.infos().get(*index)?;
            Some((
                format!("{} message {index}", open.label()),
                info.full_text(),
            ))
        }
        ViewRow::Compaction(k) => {
            let c = open.compactions().get(*k)?;
            let text = crate::tui::sessions::text::compaction_detail(
                c,
                crate::tui::sessions::text::compaction_headline(c, *k),
                "The file holds no summary for it.",
            );
            Some((
                format!(
                    "{} compaction {}",
                    open.label(),
                    crate::tui::sessions::text::compaction_name(c, *k)
                ),
                text,
            ))
        }
    }
}
