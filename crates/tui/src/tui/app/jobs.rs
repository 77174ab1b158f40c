//! Asking for slow work and taking its results back. A job the screen waits for gets an id
//! and a `Loading` entry (drawn with the spinner); its `Done` is applied only while that id
//! is still awaited, so a late result of a superseded request changes nothing. File
//! listings are quiet (no spinner): they land whenever they come, keeping the message
//! counts already known and asking for the missing ones once.

use std::sync::Arc;

use super::{App, Effect, LoadKind, Loading, OutputFile, TranscriptFile};
use super::{Layer, TranscriptView, Viewer};
use crate::tui::work::{Done, JobId, LoadedTranscript, SharedTimeline, Work};

/// The jobs part of `App`: the job the screen waits for and the last id handed out (ids
/// only grow, so a superseded job's late result is recognised and dropped).
#[derive(Debug, Default)]
pub(super) struct Jobs {
    /// The job the screen is waiting for (a transcript, a replay, an output), if any.
    pub(super) loading: Option<Loading>,
    pub(super) seq: JobId,
}

impl Jobs {
    /// A fresh id, never handed out before.
    pub(super) fn next_id(&mut self) -> JobId {
        self.seq += 1;
        self.seq
    }
}

impl App {
    /// The job that reloads the browsers' file lists (the loop also asks for it at start).
    pub fn refresh_files(&self) -> Effect {
        Effect::Work(Work::ListFiles {
            root: self.agent.workspace.clone(),
        })
    }

    /// Marks `what` as loading, replacing whatever was; returns the job's id.
    pub(super) fn start_job(&mut self, what: LoadKind) -> JobId {
        let id = self.jobs.next_id();
        self.jobs.loading = Some(Loading {
            id,
            what,
            since: self.screen.tick,
        });
        id
    }

    /// Ends the wait for job `id`; None when it is no longer awaited.
    pub(super) fn finish_job(&mut self, id: JobId) -> Option<LoadKind> {
        match &self.jobs.loading {
            Some(l) if l.id == id => self.jobs.loading.take().map(|l| l.what),
            _ => None,
        }
    }

    pub(super) fn on_done(&mut self, done: Done) -> Vec<Effect> {
        match done {
            Done::FilesListed {
                root,
                outputs,
                transcripts,
            } => {
                if root == self.agent.workspace {
                    return self.files_listed(outputs, transcripts);
                }
            }
            Done::MessagesCounted {
                root,
                counts,
                asked,
            } => {
                let counts = (root == self.agent.workspace).then_some(counts);
                self.transcripts.counted(&asked, counts);
            }
            Done::TranscriptLoaded {
                id,
                relative,
                result,
            } => {
                if let Some(LoadKind::Transcript { then_replay, .. }) = self.finish_job(id) {
                    return match result {
                        Ok(t) => self.transcript_loaded(relative, t, then_replay),
                        Err(e) => {
                            self.notify(e.to_string());
                            Vec::new()
                        }
                    };
                }
            }
            Done::Replayed { id, replay } => {
                if self.finish_job(id).is_some() && self.transcripts.set_replay(replay) {
                    self.fix_scroll();
                }
            }
            Done::TokensCounted { rows, from, counts } => {
                for (r, n) in rows.iter().skip(from).zip(&counts) {
                    r.set_tokens(*n);
                }
                let next = from + counts.len();
                let live = self.tokens.is_live(&rows);
                // Go on while the rows are still wanted: the live batch, or the open
                // transcript's rows.
                let open = live || self.transcripts.shows(&rows);
                if open
                    && next < rows.len()
                    && let Some(work) = self.tokens.work(rows.clone(), next)
                {
                    return vec![Effect::Work(work)];
                }
                if live {
                    self.tokens.live_done();
                    self.conversation.recompute_totals();
                    return self.count_tokens();
                }
            }
            Done::Exported { result } => match result {
                Ok((path, calls)) => self.notify(format!(
                    "wrote {} ({calls} model calls): open it in any browser",
                    path.display()
                )),
                Err(e) => self.notify(format!("export failed: {e}")),
            },
            Done::Compared { id, result } => return self.compared(id, result),
            // Not remembered: the legend shows again at the next start, nothing worse.
            Done::LegendRemembered { .. } => {}
            Done::Session(done) => return self.sessions_done(done),
            Done::Analysis(done) => self.analysis_done(done),
            Done::OutputRead {
                id,
                relative,
                result,
            } => {
                if self.finish_job(id).is_some() {
                    match result {
                        Ok(lines) => self.open_viewer_lines(relative, lines),
                        Err(e) => self.notify(e.to_string()),
                    }
                }
            }
        }
        Vec::new()
    }

    fn files_listed(
        &mut self,
        outputs: Vec<OutputFile>,
        transcripts: Vec<TranscriptFile>,
    ) -> Vec<Effect> {
        let missing = self.transcripts.set_files(transcripts);
        self.outputs.set(outputs);
        self.fix_scroll();
        if missing.is_empty() {
            return Vec::new();
        }
        vec![Effect::Work(Work::CountMessages {
            root: self.agent.workspace.clone(),
            files: missing,
        })]
    }

    fn transcript_loaded(
        &mut self,
        relative: String,
        loaded: LoadedTranscript,
        then_replay: bool,
    ) -> Vec<Effect> {
        let rows = Arc::new(loaded.rows);
        let mut effects = Vec::new();
        // A whole transcript is too much to count a tick at a time on the UI task.
        match self.tokens.work(rows.clone(), 0) {
            Some(work) => effects.push(Effect::Work(work)),
            None => self.tokens.queue_all(&rows),
        }
        self.transcripts
            .set_open(Some(TranscriptView::new(relative, rows, loaded.bad_lines)));
        self.fix_scroll();
        if then_replay {
            effects.extend(self.replay_open_transcript());
        }
        effects
    }

    /// The job that writes the timeline page (`/export [FILE]`).
    pub(super) fn export(&self, file: Option<String>) -> Effect {
        Effect::Work(Work::Export {
            timeline: SharedTimeline(Arc::new(self.timeline.clone())),
            out: file.map(std::path::PathBuf::from),
            inputs: self
                .sessions
                .open()
                .iter()
                .map(|o| o.path().to_path_buf())
                .collect(),
        })
    }

    pub(super) fn open_viewer(&mut self, title: String, text: &str) {
        let lines = text.lines().map(|l| l.replace('\t', "    ")).collect();
        self.open_viewer_lines(title, lines);
    }

    pub(super) fn open_viewer_lines(&mut self, title: String, lines: Vec<String>) {
        // On top of whatever is open (a diff, the live view): Esc comes back to it.
        self.push_layer(Layer::Viewer(Viewer::new(title, lines)));
    }
}
