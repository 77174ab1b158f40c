//! The analysis jobs behind the forgot view and the "where the context goes" view when
//! they are asked for from an opened session or the compare view: what one recorded
//! compaction forgot (the same library call as `ctxlab forgot FILE --compaction N`), what
//! one strategy's stages forgot at a call of a replay, and every recorded call broken down
//! by category (`ctxlab inspect FILE --calls`), and a capture's requests view (`ctxlab
//! inspect FILE --requests`, its strategies replayed), and `B`'s fork (`ctxlab fork FILE
//! --before N`, `fork::fork_whole`). Heavy on a big session, so they run off
//! the UI task (`Work::Analysis`); the results come back as `Done::Analysis`.
//!
//! Nothing here touches `App` or the terminal: the lines it returns are sanitized already
//! (`forgot_view`, the forgot view's text wherever it opens, the timeline's `F` included),
//! the breakdown is data for the context view's drawing (which sanitizes tool names as it draws).

use std::path::PathBuf;
use std::sync::Arc;

use crate::breakdown::session::{SessionBreakdown, of_session};
use crate::capture_view::NotACapture;
use crate::capture_view::{CaptureRequests, of_capture_file};
use crate::compact::PipelineConfig;
use crate::forgot::CompactionForgot;
use crate::forgot::analyze;
use crate::forgot::from_replay::replay_inputs_by_call;
use crate::forgot::from_session::inputs_of_session;
use crate::forgot::text::{CHECK_RULE, VIEW_LAYOUT, report_lines};
use crate::fork::ForkError;
use crate::message::Message;
use crate::pipeline_replay::ReplayOptions;
use crate::sanitize::sanitize_line;
use crate::session::recorded::RecordedEvent;
use crate::session::{SessionError, load_session};
use crate::store::{Store, StoreError};
use crate::tui::job_id::JobId;

/// A job for the forgot and context views.
#[derive(Debug, Clone, PartialEq)]
pub enum AnalysisWork {
    /// What compaction `compaction` (1-based) of the session file at `path` forgot.
    Forgot {
        id: JobId,
        path: PathBuf,
        compaction: usize,
    },
    /// What the stages of a replay of `session` under `config` forgot before call `call`
    /// (1-based), replayed as the compare view replays (extractive summary, clock at 0, a
    /// dry-run store in a scratch folder).
    ReplayForgot {
        id: JobId,
        session: SharedSession,
        config: PipelineConfig,
        recorded: Vec<RecordedEvent>,
        call: usize,
    },
    /// Every recorded call of the session file at `path`, by category; `pick` says which
    /// call the view opens on.
    Calls {
        id: JobId,
        path: PathBuf,
        pick: CallPick,
    },
    /// The requests view of the capture at `path` (`ctxlab inspect FILE --requests`), on
    /// request index `selected`.
    Requests {
        id: JobId,
        path: PathBuf,
        selected: usize,
    },
    /// `ctxlab fork FILE --before N`: a new session with the whole history before
    /// compaction `compaction`, written in the agent's place under `homes`.
    Fork {
        id: JobId,
        path: PathBuf,
        compaction: usize,
        homes: crate::fork::AgentHomes,
    },
}

/// Which call a context view opens on: the opened session's recorded call (an index into
/// its calls), else the answer at or before its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPick {
    pub call: Option<usize>,
    pub message: Option<usize>,
}

/// A forgot view's title and its lines (sanitized).
pub type ForgotLines = (String, Vec<String>);

/// The session a compare replay or a compare job is given. Compared by address: effects are compared in
/// tests, a session never is.
#[derive(Clone)]
pub struct SharedSession(pub Arc<Vec<Message>>);

impl PartialEq for SharedSession {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedSession({} messages)", self.0.len())
    }
}

/// What an analysis job found, or why not.
#[derive(Debug)]
pub enum AnalysisDone {
    /// `fork`: the session file and compaction the view is of (`B` forks before it);
    /// None for a replay's stages.
    Forgot {
        id: JobId,
        result: Result<ForgotLines, AnalysisError>,
        fork: Option<(PathBuf, usize)>,
    },
    Calls {
        id: JobId,
        pick: CallPick,
        result: Result<Box<SessionBreakdown>, AnalysisError>,
    },
    Requests {
        id: JobId,
        selected: usize,
        result: Result<Box<CaptureRequests>, AnalysisError>,
    },
    /// The fork written (the viewer's title and lines: where, what, how to resume it).
    Forked {
        id: JobId,
        result: Result<ForgotLines, AnalysisError>,
    },
}

/// Why an analysis job gave nothing: what the notice line says.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: SessionError,
    },
    #[error("{}: there is no compaction {compaction}: the file has {count}", path.display())]
    NoCompaction {
        path: PathBuf,
        compaction: usize,
        count: usize,
    },
    #[error("no scratch folder: {0}")]
    NoScratch(#[source] std::io::Error),
    #[error("the replay under {name}: {source}")]
    Replay {
        name: &'static str,
        #[source]
        source: StoreError,
    },
    #[error(
        "{name} forgot nothing before call {call}: no stage there dropped a message or cleared a result"
    )]
    NothingForgot { name: &'static str, call: usize },
    #[error("fork: {0}")]
    Fork(#[source] ForkError),
    #[error("{}: {source}", path.display())]
    NotACapture {
        path: PathBuf,
        #[source]
        source: NotACapture,
    },
}

impl AnalysisWork {
    /// Does the job (blocking: from `spawn_blocking`, or directly in tests).
    pub fn run(self) -> AnalysisDone {
        match self {
            AnalysisWork::Forgot {
                id,
                path,
                compaction,
            } => AnalysisDone::Forgot {
                id,
                result: recorded_forgot(&path, compaction),
                fork: Some((path, compaction)),
            },
            AnalysisWork::ReplayForgot {
                id,
                session,
                config,
                recorded,
                call,
            } => AnalysisDone::Forgot {
                id,
                result: replay_forgot(&session, config, recorded, call),
                fork: None,
            },
            AnalysisWork::Calls { id, path, pick } => AnalysisDone::Calls {
                id,
                pick,
                result: load_session(&path)
                    .map(|s| Box::new(of_session(&s)))
                    .map_err(|source| AnalysisError::Read {
                        path: path.clone(),
                        source,
                    }),
            },
            AnalysisWork::Fork {
                id,
                path,
                compaction,
                homes,
            } => AnalysisDone::Forked {
                id,
                result: crate::fork::fork_whole(&path, compaction, homes)
                    .map(|(title, lines)| {
                        (
                            sanitize_line(&title).into_owned(),
                            lines
                                .iter()
                                .map(|l| sanitize_line(l).into_owned())
                                .collect(),
                        )
                    })
                    .map_err(AnalysisError::Fork),
            },
            AnalysisWork::Requests { id, path, selected } => AnalysisDone::Requests {
                id,
                selected,
                result: of_capture_file(&path).map(Box::new).map_err(|source| {
                    AnalysisError::NotACapture {
                        path: path.clone(),
                        source,
                    }
                }),
            },
        }
    }
}

/// `ctxlab forgot FILE --compaction N`'s analysis (`commands::forgot` does the same two
/// steps: the session's inputs, then the one asked for analysed).
fn recorded_forgot(
    path: &std::path::Path,
    compaction: usize,
) -> Result<ForgotLines, AnalysisError> {
    let session = load_session(path).map_err(|source| AnalysisError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let inputs = inputs_of_session(&session);
    drop(session);
    let input = compaction
        .checked_sub(1)
        .and_then(|k| inputs.get(k))
        .ok_or_else(|| AnalysisError::NoCompaction {
            path: path.to_path_buf(),
            compaction,
            count: inputs.len(),
        })?;
    Ok(forgot_view(&analyze(compaction, input), &[]))
}

fn replay_forgot(
    session: &SharedSession,
    config: PipelineConfig,
    recorded: Vec<RecordedEvent>,
    call: usize,
) -> Result<ForgotLines, AnalysisError> {
    let scratch = tempfile::tempdir().map_err(AnalysisError::NoScratch)?;
    let store = Store::new(scratch.path()).dry_run();
    let options = ReplayOptions {
        config,
        summary_text: None,
        summarizer: None,
        now_secs: 0,
        recorded,
    };
    let name = config.strategy.name();
    let inputs = replay_inputs_by_call(session.0.iter().cloned(), name, &store, &options)
        .map_err(|source| AnalysisError::Replay { name, source })?;
    // Numbered as the run numbers its compactions (summaries only; a stage that cleared
    // is named by its call), so the label is the timeline's and the recording's.
    let mut number = 0;
    let mut reports = Vec::new();
    for (c, input) in &inputs {
        let summarizes = crate::forgot::from_replay::summarizes(input);
        number += usize::from(summarizes);
        if *c == Some(call) {
            let mut input = input.clone();
            input.call = *c;
            reports.push(analyze(if summarizes { number } else { 0 }, &input));
        }
    }
    let Some((first, rest)) = reports.split_first() else {
        return Err(AnalysisError::NothingForgot { name, call });
    };
    let (_, mut lines) = forgot_view(first, rest);
    lines.insert(
        0,
        format!("{name}, replayed as the compare view replays it, before call {call}"),
    );
    Ok((format!("what {name} forgot at call {call}"), lines))
}

/// The forgot view of `report` (then `more` reports of the same moment): its title and its
/// lines, sanitized (summaries, paths and commands come from files and models), the facts
/// check's rule last.
pub fn forgot_view(report: &CompactionForgot, more: &[CompactionForgot]) -> (String, Vec<String>) {
    let mut lines: Vec<String> = Vec::new();
    for (k, r) in std::iter::once(report).chain(more).enumerate() {
        if k > 0 {
            lines.push(String::new());
        }
        lines.extend(
            report_lines(r, &VIEW_LAYOUT)
                .iter()
                .map(|l| sanitize_line(l).into_owned()),
        );
    }
    lines.push(String::new());
    lines.push(format!("facts check: {CHECK_RULE}"));
    let title = format!("what {} forgot", sanitize_line(&report.kind));
    (title, lines)
}
