//! The TUI's slow work: listing the workspace's stored files, counting a transcript's
//! messages, loading a transcript, replaying it through the pipeline, counting its tokens,
//! reading a persisted output, writing the exported timeline page, replaying a session
//! under one strategy for the compare view, and the sessions browser's jobs
//! (`tui::sessions`: they read session files and write only scratch stores).
//! `App::update` asks for it as data (`Effect::Work`); the loop
//! runs `Work::run` on tokio's blocking pool and hands the `Done` back as `Msg::Done`, so a
//! 50 MB transcript never freezes the screen.
//!
//! Nothing here touches `App` or the terminal. A job reads only under the workspace root it
//! is given and writes nothing there: a replay runs on a dry-run store, through the
//! library's one replay loop (`crate::pipeline_replay`, via `tui::replay`). The writes are an export
//! the user asked for and the empty file in the platform data dir that says the first-run
//! legend was seen.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tiktoken_rs::CoreBPE;

use super::replay::{Replay, replay};
use super::rows::MessageInfo;
use super::sessions::{SessionDone, SessionWork};
use crate::compact::{PipelineConfig, Strategy};
use crate::compare::{RunOptions, StrategyRun, run_strategy};
use crate::message::Message;
use crate::store::{Store, StoredFile};
use crate::timeline::{Timeline, html};

pub use super::job_id::JobId;

/// An open transcript's rows, shared with the jobs that read them (no copy of the text).
pub type Rows = Arc<Vec<Arc<MessageInfo>>>;

/// Reads are done in chunks of this many bytes, so a huge file is never held twice.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Chars one `CountTokens` job tokenizes before it hands back: a transcript is counted in
/// several jobs, so closing it (or quitting) stops the counting soon after.
const TOKEN_CHARS_PER_JOB: usize = 2_000_000;

/// A row of the persisted-outputs browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub relative: String,
    pub bytes: u64,
    pub age_secs: Option<u64>,
}

/// A row of the transcripts browser. `messages` is None until the file was counted: a
/// listing never reads a transcript, a later `Work::CountMessages` does, once per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    pub relative: String,
    pub bytes: u64,
    pub age_secs: Option<u64>,
    pub messages: Option<usize>,
}

/// The tokenizer, handed to a job. Compared by address: there is one per run.
#[derive(Clone, Copy)]
pub struct Tokenizer(pub &'static CoreBPE);

impl PartialEq for Tokenizer {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tokenizer(cl100k)")
    }
}

/// A job the loop runs off the UI task.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// List `.task_outputs/tool-results/` and `.transcripts/` (names, sizes, ages only).
    ListFiles { root: PathBuf },
    /// Count the messages (non-empty lines) of these transcripts.
    CountMessages { root: PathBuf, files: Vec<String> },
    /// Read and parse a transcript into rows.
    LoadTranscript {
        id: JobId,
        root: PathBuf,
        relative: String,
    },
    /// Replay rows through the pipeline with `config`, on a dry-run store.
    Replay {
        id: JobId,
        root: PathBuf,
        config: PipelineConfig,
        rows: Rows,
    },
    /// Count the tokens of rows from index `from`, about `TOKEN_CHARS_PER_JOB` chars' worth
    /// (a row is counted whole, however long). Reads the rows only: the counts come back in
    /// `Done::TokensCounted`.
    CountTokens {
        rows: Rows,
        from: usize,
        tokenizer: Tokenizer,
    },
    /// Read a persisted output for the viewer.
    ReadOutput {
        id: JobId,
        root: PathBuf,
        relative: String,
    },
    /// Write the timeline as one HTML page (`timeline::html::page`) to `out`, or to a new
    /// `ctxlab-timeline.html` (`-2`, `-3`, ... when taken) in the current directory.
    /// A relative `out` is taken from the current directory.
    Export {
        timeline: SharedTimeline,
        out: Option<PathBuf>,
        /// Session files the workbench read: never written.
        inputs: Vec<PathBuf>,
    },
    /// Remember that the legend was seen: create the (empty) file `path` and its folder.
    RememberLegend { path: PathBuf },
    /// Replay a session under one strategy for the compare view, with the reachability
    /// accounting in detail, on a dry-run store in a scratch folder (never the workspace).
    Compare {
        id: JobId,
        session: SharedSession,
        config: PipelineConfig,
        /// A recording's events (the live run's, an opened recording's), honoured.
        recorded: Vec<crate::session::recorded::RecordedEvent>,
    },
    /// The sessions browser's jobs (listing, counting, opening, replaying into scratch).
    Session(SessionWork),
    /// The forgot and context views' analyses of an opened session or a compare replay.
    Analysis(super::analysis::AnalysisWork),
}

/// A session handed to a compare job (the analyses' own, one type for both).
pub use super::analysis::SharedSession;

/// A copy of the timeline handed to a job. Compared by address: effects are compared in
/// tests, a timeline never is.
#[derive(Clone)]
pub struct SharedTimeline(pub Arc<Timeline>);

impl PartialEq for SharedTimeline {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for SharedTimeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedTimeline({} calls)", self.0.calls.len())
    }
}

/// A parsed transcript.
#[derive(Debug, Clone, Default)]
pub struct LoadedTranscript {
    pub rows: Vec<Arc<MessageInfo>>,
    /// Lines that were not messages.
    pub bad_lines: usize,
}

/// Why a job gave nothing: what the notice line (or the compare view) says.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("cannot read {relative}: {source}")]
    Transcript {
        relative: String,
        #[source]
        source: crate::session::SessionError,
    },
    #[error("cannot read {relative}: {source}")]
    Output {
        relative: String,
        #[source]
        source: io::Error,
    },
    #[error("{}: {source}", path.display())]
    Legend {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("no scratch folder: {0}")]
    NoScratch(#[source] io::Error),
    #[error("the {strategy} replay stopped: {source}")]
    ReplayStopped {
        strategy: Strategy,
        #[source]
        source: crate::store::StoreError,
    },
    #[error("no current directory: {0}")]
    NoCurrentDir(#[source] io::Error),
    #[error("{0}")]
    Export(#[source] crate::export_file::ExportError),
    #[error("every {EXPORT_NAME}-N.html name is taken")]
    NamesTaken,
}

/// What a job found.
#[derive(Debug)]
pub enum Done {
    FilesListed {
        root: PathBuf,
        outputs: Vec<OutputFile>,
        transcripts: Vec<TranscriptFile>,
    },
    /// (relative, bytes read, messages) per file that could be read.
    MessagesCounted {
        root: PathBuf,
        counts: Vec<(String, u64, usize)>,
        /// Every file asked about, counted or not (so none is asked about forever).
        asked: Vec<String>,
    },
    TranscriptLoaded {
        id: JobId,
        relative: String,
        result: Result<LoadedTranscript, JobError>,
    },
    Replayed {
        id: JobId,
        replay: Replay,
    },
    /// The token counts of `rows[from..from + counts.len()]`, in order; `update` keeps them
    /// on the rows.
    TokensCounted {
        rows: Rows,
        from: usize,
        counts: Vec<usize>,
    },
    OutputRead {
        id: JobId,
        relative: String,
        result: Result<Vec<String>, JobError>,
    },
    /// The page was written to this path (with the calls it holds), or why not.
    Exported {
        result: Result<(PathBuf, usize), JobError>,
    },
    /// The legend's file was written (or could not be: then it shows again next time).
    LegendRemembered {
        result: Result<(), JobError>,
    },
    /// One strategy's run for the compare view, or why it stopped.
    Compared {
        id: JobId,
        result: Result<Box<StrategyRun>, JobError>,
    },
    Session(SessionDone),
    Analysis(super::analysis::AnalysisDone),
}

impl Work {
    /// Does the job (blocking: call it from `spawn_blocking`, or directly in tests).
    pub fn run(self) -> Done {
        match self {
            Work::ListFiles { root } => list_files(root, SystemTime::now()),
            Work::CountMessages { root, files } => {
                let counts = files
                    .iter()
                    .filter_map(|relative| {
                        let (bytes, n) = count_messages(&root.join(relative)).ok()?;
                        Some((relative.clone(), bytes, n))
                    })
                    .collect();
                Done::MessagesCounted {
                    root,
                    counts,
                    asked: files,
                }
            }
            Work::LoadTranscript { id, root, relative } => Done::TranscriptLoaded {
                result: load_transcript(&root.join(&relative)).map_err(|source| {
                    JobError::Transcript {
                        relative: relative.clone(),
                        source,
                    }
                }),
                id,
                relative,
            },
            Work::Replay {
                id,
                root,
                config,
                rows,
            } => {
                let messages: Vec<Message> = rows.iter().map(|r| r.message.clone()).collect();
                Done::Replayed {
                    id,
                    replay: replay(messages, config, &Store::new(root)),
                }
            }
            Work::CountTokens {
                rows,
                from,
                tokenizer,
            } => {
                let mut counts = Vec::new();
                let mut budget = TOKEN_CHARS_PER_JOB;
                while budget > 0
                    && let Some(r) = rows.get(from + counts.len())
                {
                    counts.push(match r.tokens() {
                        Some(n) => n,
                        None => tokenizer.0.encode_ordinary(&r.token_text()).len(),
                    });
                    budget = budget.saturating_sub(r.chars.max(1));
                }
                Done::TokensCounted { rows, from, counts }
            }
            Work::ReadOutput { id, root, relative } => Done::OutputRead {
                result: read_lines(&root.join(&relative)).map_err(|source| JobError::Output {
                    relative: relative.clone(),
                    source,
                }),
                id,
                relative,
            },
            Work::Export {
                timeline,
                out,
                inputs,
            } => Done::Exported {
                result: export(&timeline.0, out.as_deref(), &inputs)
                    .map(|path| (path, timeline.0.calls.len())),
            },
            Work::RememberLegend { path } => Done::LegendRemembered {
                result: remember(&path).map_err(|source| JobError::Legend {
                    path: path.clone(),
                    source,
                }),
            },
            Work::Compare {
                id,
                session,
                config,
                recorded,
            } => Done::Compared {
                id,
                result: compare_run(&session.0, config, recorded).map(Box::new),
            },
            Work::Session(work) => Done::Session(work.run()),
            Work::Analysis(work) => Done::Analysis(work.run()),
        }
    }
}

/// One strategy on `session`, as the compare view needs it: every piece's state at every
/// call, the clock at 0, the extractive summary, a dry-run store rooted in an empty
/// scratch folder (so no file of the workspace is read or reused, and nothing is written).
pub fn compare_run(
    session: &[Message],
    config: PipelineConfig,
    recorded: Vec<crate::session::recorded::RecordedEvent>,
) -> Result<StrategyRun, JobError> {
    let scratch = tempfile::tempdir().map_err(JobError::NoScratch)?;
    let store = Store::new(scratch.path()).dry_run();
    let options = RunOptions {
        summary_text: None,
        now_secs: 0,
        detail: true,
        recorded,
    };
    run_strategy(session.to_vec(), config, &store, &options, |_| {}).map_err(|source| {
        JobError::ReplayStopped {
            strategy: config.strategy,
            source,
        }
    })
}

/// Name of the page `/export` writes when no file is given.
pub const EXPORT_NAME: &str = "ctxlab-timeline";

/// Writes the page through the one export writer (`export_file`); returns where. A named
/// file is replaced (never a session this workbench opened); the default name never is.
pub fn export(
    timeline: &Timeline,
    out: Option<&Path>,
    inputs: &[PathBuf],
) -> Result<PathBuf, JobError> {
    use crate::export_file::{TargetChoice, write_export};
    let page = html::page(timeline);
    let cwd = std::env::current_dir().map_err(JobError::NoCurrentDir)?;
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    if let Some(out) = out {
        return write_export(
            &cwd.join(out),
            page.as_bytes(),
            &inputs,
            TargetChoice::Named,
        )
        .map_err(JobError::Export);
    }
    for n in 1..10_000 {
        let name = if n == 1 {
            format!("{EXPORT_NAME}.html")
        } else {
            format!("{EXPORT_NAME}-{n}.html")
        };
        let path = cwd.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        match write_export(&path, page.as_bytes(), &inputs, TargetChoice::Fresh) {
            Ok(p) => return Ok(p),
            Err(crate::export_file::ExportError::Refused { .. }) => continue,
            Err(e) => return Err(JobError::Export(e)),
        }
    }
    Err(JobError::NamesTaken)
}

/// The browsers' lists, with ages from `now`. Reads directories only, never a file.
pub fn list_files(root: PathBuf, now: SystemTime) -> Done {
    let store = Store::new(root.clone());
    let age = |f: &StoredFile| {
        f.modified
            .and_then(|m| now.duration_since(m).ok())
            .map(|d| d.as_secs())
    };
    let outputs = store
        .list_tool_results()
        .iter()
        .map(|f| OutputFile {
            relative: f.relative.clone(),
            bytes: f.bytes,
            age_secs: age(f),
        })
        .collect();
    let transcripts = store
        .list_transcripts()
        .iter()
        .map(|f| TranscriptFile {
            relative: f.relative.clone(),
            bytes: f.bytes,
            age_secs: age(f),
            messages: None,
        })
        .collect();
    Done::FilesListed {
        root,
        outputs,
        transcripts,
    }
}

/// (bytes read, non-empty lines) of a file, read in chunks.
pub fn count_messages(path: &Path) -> io::Result<(u64, usize)> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let (mut bytes, mut lines, mut in_line) = (0u64, 0usize, false);
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes += n as u64;
        for &b in &buf[..n] {
            if b == b'\n' {
                lines += usize::from(in_line);
                in_line = false;
            } else {
                in_line = true;
            }
        }
    }
    Ok((bytes, lines + usize::from(in_line)))
}

/// A transcript as rows, read by `session::load_transcript` (one reader, one rule: a line
/// that is not a message is skipped and counted).
pub fn load_transcript(path: &Path) -> Result<LoadedTranscript, crate::session::SessionError> {
    let (messages, bad_lines) = crate::session::load_transcript(path)?;
    Ok(LoadedTranscript {
        rows: messages.into_iter().map(MessageInfo::new).collect(),
        bad_lines,
    })
}

/// Creates the empty file `path` (and its folder); an existing one is left as it is.
fn remember(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(|_| ())
}

/// A text file as the viewer shows it: lines, tabs as four spaces.
pub fn read_lines(path: &Path) -> io::Result<Vec<String>> {
    let bytes = std::fs::read(path)?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(|l| l.replace('\t', "    "))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::summarize::transcript_text;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn counting_matches_non_empty_lines_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        // Lines longer than a chunk, an empty line, no newline at the end.
        let long = "x".repeat(READ_CHUNK_BYTES + 10);
        std::fs::write(&p, format!("{long}\n\n{long}\nlast")).unwrap();
        let (bytes, n) = count_messages(&p).unwrap();
        assert_eq!(n, 3);
        assert_eq!(bytes, std::fs::metadata(&p).unwrap().len());
    }

    #[test]
    fn a_transcript_loads_with_its_bad_lines_counted() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let msgs = vec![
            Message::user_text("hi"),
            Message::assistant_blocks(vec![block::tool_use("t1", "bash", json!({"c": 1}))]),
        ];
        std::fs::write(&p, format!("{}\nnot json\n\n", transcript_text(&msgs))).unwrap();
        let t = load_transcript(&p).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.bad_lines, 1);
        assert_eq!(t.rows[1].message, msgs[1]);
    }

    #[test]
    fn listing_reads_no_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join(crate::store::TRANSCRIPTS_DIR);
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("transcript_1.jsonl"), "{}\n{}\n").unwrap();
        let Done::FilesListed { transcripts, .. } =
            list_files(dir.path().to_path_buf(), SystemTime::now())
        else {
            panic!("not a listing");
        };
        assert_eq!(transcripts.len(), 1);
        assert_eq!(
            transcripts[0].messages, None,
            "counted later, off the listing"
        );
        assert_eq!(transcripts[0].bytes, 6);
    }

    #[test]
    fn remembering_the_legend_creates_the_file_and_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/ctxlab/legend-seen");
        let done = Work::RememberLegend { path: path.clone() }.run();
        assert!(matches!(done, Done::LegendRemembered { result: Ok(()) }));
        assert!(path.is_file());
        // Again: still fine, nothing changes.
        let again = Work::RememberLegend { path: path.clone() }.run();
        assert!(matches!(again, Done::LegendRemembered { result: Ok(()) }));
    }

    #[test]
    fn a_missing_file_is_an_error_result_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let done = Work::LoadTranscript {
            id: 7,
            root: dir.path().to_path_buf(),
            relative: ".transcripts/gone.jsonl".into(),
        }
        .run();
        match done {
            Done::TranscriptLoaded { id, result, .. } => {
                assert_eq!(id, 7);
                assert!(result.unwrap_err().to_string().contains("gone.jsonl"));
            }
            _ => panic!("wrong result"),
        }
    }
}
