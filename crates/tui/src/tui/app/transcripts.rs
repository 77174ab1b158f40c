//! The transcripts pane's actions: in the browser, Enter opens a transcript and `r` opens
//! and replays it; in an open transcript, rows move and expand, `o` opens the viewer, `r`
//! replays through the pipeline and Esc goes back. Opening and replaying only ask for the
//! work (`Work::LoadTranscript`, `Work::Replay`); `jobs.rs` takes the results.

pub mod draw;

use std::collections::HashSet;
use std::sync::Arc;

use super::{App, Effect, ListState, LoadKind, TranscriptFile};
use crate::tui::keys::Action;
use crate::tui::replay::Replay;
use crate::tui::work::{Rows, Work};

/// The transcripts pane's state, owned here: the `.transcripts/` listing as the last job
/// saw it, its selection, the transcript open in the pane, and the files whose messages a
/// job is counting. `App` routes the pane's keys and its jobs' results to it;
/// `draw.rs` draws it.
#[derive(Debug, Clone, Default)]
pub struct TranscriptsState {
    files: Vec<TranscriptFile>,
    list: ListState,
    open: Option<TranscriptView>,
    /// Transcripts whose messages are being counted (asked for once).
    counting: HashSet<String>,
}

/// An open transcript: its messages as a list, and a replay once asked for.
#[derive(Debug, Clone)]
pub struct TranscriptView {
    relative: String,
    /// Shared with the replay and token-count jobs, which read them off the UI task.
    rows: Rows,
    list: ListState,
    replay: Option<Replay>,
    /// Lines that were not messages.
    bad_lines: usize,
}

impl TranscriptView {
    pub(super) fn new(relative: String, rows: Rows, bad_lines: usize) -> TranscriptView {
        TranscriptView {
            relative,
            rows,
            list: ListState::default(),
            replay: None,
            bad_lines,
        }
    }

    /// The transcript's path inside the workspace.
    pub fn relative(&self) -> &str {
        &self.relative
    }

    /// Its messages, one row each.
    pub fn rows(&self) -> &Rows {
        &self.rows
    }

    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// Its replay through the pipeline, once one came back.
    pub fn replay(&self) -> Option<&Replay> {
        self.replay.as_ref()
    }

    /// Lines that were not messages.
    pub fn bad_lines(&self) -> usize {
        self.bad_lines
    }
}

impl TranscriptsState {
    /// The listing, newest first as the job gave it.
    pub fn files(&self) -> &[TranscriptFile] {
        &self.files
    }

    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// The transcript open in the pane.
    pub fn open(&self) -> Option<&TranscriptView> {
        self.open.as_ref()
    }

    /// Takes a fresh listing, keeping the message counts of files unchanged since (a
    /// transcript is written once, so a count stays true while name and size match);
    /// returns the files to count, each asked for once.
    pub(super) fn set_files(&mut self, mut files: Vec<TranscriptFile>) -> Vec<String> {
        for f in &mut files {
            f.messages = self
                .files
                .iter()
                .find(|o| o.relative == f.relative && o.bytes == f.bytes)
                .and_then(|o| o.messages);
        }
        let missing: Vec<String> = files
            .iter()
            .filter(|f| f.messages.is_none() && !self.counting.contains(&f.relative))
            .map(|f| f.relative.clone())
            .collect();
        self.counting.extend(missing.iter().cloned());
        self.files = files;
        missing
    }

    /// A count job finished: `asked` are no longer being counted; `counts` (when still
    /// about this workspace) fill in the files whose name and size match.
    pub(super) fn counted(&mut self, asked: &[String], counts: Option<Vec<(String, u64, usize)>>) {
        for name in asked {
            self.counting.remove(name);
        }
        for (relative, bytes, n) in counts.unwrap_or_default() {
            if let Some(f) = self
                .files
                .iter_mut()
                .find(|f| f.relative == relative && f.bytes == bytes)
            {
                f.messages = Some(n);
            }
        }
    }

    pub(super) fn set_open(&mut self, view: Option<TranscriptView>) {
        self.open = view;
    }

    /// A replay came back for the open transcript; false when none is open.
    pub(super) fn set_replay(&mut self, replay: Replay) -> bool {
        match &mut self.open {
            Some(t) => {
                t.replay = Some(replay);
                true
            }
            None => false,
        }
    }

    /// Whether `rows` are the open transcript's (a count job goes on for them only).
    pub(super) fn shows(&self, rows: &Rows) -> bool {
        self.open
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(&t.rows, rows))
    }

    /// Keeps the listing's selection (`list_h` rows) and the open transcript's (`w` x
    /// `h`) in range and on screen.
    pub(super) fn fit(&mut self, list_h: usize, w: usize, h: usize) {
        let n = self.files.len();
        self.list.clamp(n);
        self.list.ensure_visible(n, list_h, |_| 1);
        if let Some(t) = &mut self.open {
            let rows = &t.rows;
            t.list
                .fit_rows(rows.len(), |i| rows.get(i).map(|r| &**r), w, h);
        }
    }
}

impl App {
    /// The transcripts pane's state.
    pub fn transcripts(&self) -> &TranscriptsState {
        &self.transcripts
    }

    pub(super) fn transcripts_action(&mut self, action: Action) -> Vec<Effect> {
        if self.sessions.active() {
            return self.sessions_action(action);
        }
        let page = self.page();
        if let Some(t) = &mut self.transcripts.open {
            let len = t.rows.len();
            if t.list.apply(action, len, page) {
                self.fix_scroll();
                return Vec::new();
            }
            match action {
                Action::Back => {
                    self.transcripts.open = None;
                    self.stop_waiting();
                }
                Action::Enter => {
                    if let Some(uid) = t.rows.get(t.list.selected).map(|r| r.uid) {
                        t.list.toggle(uid);
                    }
                    self.fix_scroll();
                }
                Action::Replay => return self.replay_open_transcript(),
                Action::OpenFull => {
                    if let Some(r) = t.rows.get(t.list.selected) {
                        let title = format!("{} message {}", t.relative, t.list.selected);
                        let text = r.full_text();
                        self.open_viewer(title, &text);
                    }
                }
                _ => {}
            }
            return Vec::new();
        }
        let len = self.transcripts.files.len();
        if self.transcripts.list.apply(action, len, page) {
            self.fix_scroll();
            return Vec::new();
        }
        if action == Action::Back {
            self.stop_waiting();
            return Vec::new();
        }
        let Some(file) = self
            .transcripts
            .files
            .get(self.transcripts.list.selected)
            .cloned()
        else {
            return Vec::new();
        };
        match action {
            Action::Enter => self.open_transcript(&file.relative, file.bytes, false),
            Action::Replay => self.open_transcript(&file.relative, file.bytes, true),
            _ => Vec::new(),
        }
    }

    /// Asks for a transcript (`bytes` is its size, for the loading line), and for a replay
    /// once it is open when `then_replay`. Reads nothing itself.
    pub(super) fn open_transcript(
        &mut self,
        relative: &str,
        bytes: u64,
        then_replay: bool,
    ) -> Vec<Effect> {
        let id = self.start_job(LoadKind::Transcript {
            relative: relative.to_string(),
            bytes,
            then_replay,
        });
        vec![Effect::Work(Work::LoadTranscript {
            id,
            root: self.agent.workspace.clone(),
            relative: relative.to_string(),
        })]
    }

    /// Asks for a replay of the open transcript with the current thresholds.
    pub(super) fn replay_open_transcript(&mut self) -> Vec<Effect> {
        let Some(t) = &self.transcripts.open else {
            return Vec::new();
        };
        let (relative, rows) = (t.relative.clone(), t.rows.clone());
        let id = self.start_job(LoadKind::Replay {
            relative,
            messages: rows.len(),
        });
        vec![Effect::Work(Work::Replay {
            id,
            root: self.agent.workspace.clone(),
            config: self.agent.config,
            rows,
        })]
    }

    /// Esc while something loads: stop waiting for it (its result will be dropped).
    pub(super) fn stop_waiting(&mut self) {
        if let Some(l) = self.jobs.loading.take() {
            if let super::LoadKind::Session { progress, .. } = &l.what {
                // The read itself stops too: a huge file is not read on for nothing.
                progress.cancel();
            }
            self.notify(format!("stopped waiting for {}", l.what.relative()));
        }
    }
}
