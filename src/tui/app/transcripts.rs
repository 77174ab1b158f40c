//! The transcripts pane's actions: in the browser, Enter opens a transcript and `r` opens
//! and replays it; in an open transcript, rows move and expand, `o` opens the viewer, `r`
//! replays through the pipeline and Esc goes back. Opening and replaying only ask for the
//! work (`Work::LoadTranscript`, `Work::Replay`); `jobs.rs` takes the results.

use super::{App, Effect, LoadKind};
use crate::tui::keys::Action;
use crate::tui::work::Work;

impl App {
    pub(super) fn transcripts_action(&mut self, action: Action) -> Vec<Effect> {
        if self.sessions.active {
            return self.sessions_action(action);
        }
        let page = self.page();
        if let Some(t) = &mut self.transcript {
            let len = t.rows.len();
            if t.list.apply(action, len, page) {
                self.fix_scroll();
                return Vec::new();
            }
            match action {
                Action::Back => {
                    self.transcript = None;
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
        if self
            .transcripts_list
            .apply(action, self.transcripts.len(), page)
        {
            self.fix_scroll();
            return Vec::new();
        }
        if action == Action::Back {
            self.stop_waiting();
            return Vec::new();
        }
        let Some(file) = self
            .transcripts
            .get(self.transcripts_list.selected)
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
    pub fn open_transcript(
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
            root: self.workspace.clone(),
            relative: relative.to_string(),
        })]
    }

    /// Asks for a replay of the open transcript with the current thresholds.
    pub(super) fn replay_open_transcript(&mut self) -> Vec<Effect> {
        let Some(t) = &self.transcript else {
            return Vec::new();
        };
        let (relative, rows) = (t.relative.clone(), t.rows.clone());
        let id = self.start_job(LoadKind::Replay {
            relative,
            messages: rows.len(),
        });
        vec![Effect::Work(Work::Replay {
            id,
            root: self.workspace.clone(),
            config: self.config,
            rows,
        })]
    }

    /// Esc while something loads: stop waiting for it (its result will be dropped).
    pub(super) fn stop_waiting(&mut self) {
        if let Some(l) = self.loading.take() {
            if let super::LoadKind::Session { progress, .. } = &l.what {
                // The read itself stops too: a huge file is not read on for nothing.
                progress.cancel();
            }
            self.notify(format!("stopped waiting for {}", l.what.relative()));
        }
    }
}
