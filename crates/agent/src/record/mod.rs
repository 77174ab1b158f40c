//! Recording live sessions (docs/architecture.md, "Session recordings"): every event of
//! the agent that a replay or a reader needs becomes one line of a file of ctxlab's own
//! (`session::recorded` reads it). The recorder sits between the agent and its front end
//! (`tee`): a thread of its own takes each event, hands it on, then appends its line, so
//! the agent never waits for the disk and the front end waits for nothing but the hand-on.
//! It never changes, drops or reorders an event.

pub mod lines;
pub mod writer;

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::agent::AgentEvent;
use crate::run::{Run, RunFact};
use crate::session::recorded::RecordFold;
use crate::session::recorded::format::FrontEnd;
pub use lines::{LineMaker, RecordingOrigin};
pub use writer::{RecordError, RecordingFile};

/// A recording being written: the file, the run's fold that numbers its lines (this task's
/// own: the recorder runs beside the front end, which folds the same stream with the same
/// `Run`) and the line maker.
#[derive(Debug)]
pub struct Recorder {
    file: RecordingFile,
    run: Run,
    lines: LineMaker,
    /// The first write error; the recording stops there (the session goes on).
    failed: bool,
}

impl Recorder {
    /// A new recording under `dir` for `front_end`.
    pub fn create(dir: &Path, front_end: FrontEnd) -> Result<Recorder, RecordError> {
        let started = crate::util::unix_now();
        let file = RecordingFile::create_in(dir, started)?;
        Ok(Recorder {
            file,
            run: Run::new(),
            lines: LineMaker::new(RecordingOrigin {
                front_end,
                started_secs: started,
            }),
            failed: false,
        })
    }

    /// Where the recording goes.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Records one event (nothing for an event a recording does not keep).
    pub fn record(&mut self, event: &AgentEvent) {
        if self.failed {
            return;
        }
        if let Some(line) = self.line(event) {
            self.write(&line);
        }
    }

    /// Folds `event` into the recorder's run and makes its line.
    fn line(&mut self, event: &AgentEvent) -> Option<crate::session::recorded::RecordLine> {
        let fact = self.run.on_event(event)?;
        self.lines.line(&fact)
    }

    fn write(&mut self, line: &crate::session::recorded::RecordLine) {
        if self.failed {
            return;
        }
        if let Err(e) = self.file.append(line) {
            tracing::warn!("session recording stopped: {e}");
            self.failed = true;
        }
    }
}

/// The folder recordings go to: `sessions/` in the data dir (`CTXLAB_DATA_DIR` or the
/// platform's).
pub fn recordings_dir() -> Option<PathBuf> {
    crate::session::discover::ctxlab_sessions_dir()
}

/// Hands every event of `events` on, recording it after: the returned receiver sees the
/// same events in the same order. The recorder is a task of its own on the current tokio
/// runtime (not the agent's): each line is one small append, made after the event was
/// handed on. It ends when the agent's sender closes or the front end goes away.
pub fn tee(
    mut events: UnboundedReceiver<AgentEvent>,
    mut recorder: Recorder,
) -> UnboundedReceiver<AgentEvent> {
    let (tx, rx) = unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let line = recorder.line(&event);
            let gone = tx.send(event).is_err();
            if let Some(line) = line {
                recorder.write(&line);
            }
            if gone {
                break;
            }
        }
    });
    rx
}

/// The live run's recorded events, folded as the file's reader folds them (the workbench's
/// compare view replays the live session with them). It takes the workbench's run facts,
/// numbered by the workbench's one `Run`; like the recording file, it numbers the calls of
/// its own agent (`continuing`).
#[derive(Debug, Clone)]
pub struct LiveRecord {
    lines: LineMaker,
    fold: RecordFold,
}

impl LiveRecord {
    pub fn new(front_end: FrontEnd) -> LiveRecord {
        LiveRecord {
            lines: LineMaker::new(RecordingOrigin {
                front_end,
                started_secs: 0,
            }),
            fold: RecordFold::new(false),
        }
    }

    /// The record of a continued agent, whose run goes on after `calls` calls of the earlier
    /// one: it holds the continued agent's own calls from 1, as its recording file does.
    pub fn continuing(front_end: FrontEnd, calls: usize) -> LiveRecord {
        let mut record = LiveRecord::new(front_end);
        record.lines = record.lines.after_calls(calls);
        record
    }

    pub fn on_fact(&mut self, fact: &RunFact<'_>) {
        if let Some(line) = self.lines.line(fact) {
            // Line numbers do not matter to the events.
            self.fold.line(0, line);
        }
    }

    pub fn fold(&self) -> &RecordFold {
        &self.fold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::StageReport;
    use crate::run::RunStart;

    /// A continued run numbers on from the cut timeline; its record, like its recording
    /// file, numbers the continued agent's own calls from 1.
    #[test]
    fn a_continued_record_numbers_its_own_agents_calls() {
        let mut report = StageReport::unchanged(crate::compact::Stage::MicroCompact, 10, 1);
        report.changed = true;
        let events = [
            AgentEvent::StageRan {
                report,
                history: None,
            },
            AgentEvent::RequestSent {
                estimate_chars: 10,
                messages: 1,
                summary: false,
                request: None,
                body: None,
            },
        ];
        let mut run = Run::continuing(RunStart {
            calls: 9,
            ..RunStart::default()
        });
        let mut record = LiveRecord::continuing(FrontEnd::Workbench, 9);
        let mut calls = Vec::new();
        for ev in &events {
            let fact = run.on_event(ev).expect("a fact");
            if let RunFact::Stage { before_call, .. } = fact {
                calls.push(before_call);
            }
            record.on_fact(&fact);
        }
        assert_eq!(calls, [10], "the run's call number goes on");
        let stages: Vec<usize> = record.fold().stages().iter().map(|s| s.call).collect();
        assert_eq!(stages, [1], "the record's is the agent's own");
    }
}
