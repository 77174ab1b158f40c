//! The sessions browser's and the opened session's data, and the jobs that fill them: the
//! recorded Claude Code and Codex sessions `session::discover` finds (or the file or folder
//! given to `ctxlab open`), their listing counts, one session opened for viewing (its first
//! lines first, then the whole file, with how far the read got), and its replay through the
//! pipeline into a scratch store under the platform data dir.
//!
//! Plain data and blocking jobs: nothing here touches `App` or the terminal. Source session
//! files are only ever read; the one place a job writes is its scratch folder (`scratch`).

pub mod browse;
mod jobs;
pub mod listing;
pub mod scratch;
pub mod text;
mod view;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::compact::{PipelineConfig, Strategy};
use crate::message::Message;
use crate::session::discover::{NotListed, SessionFile};
use crate::session::numbers::SessionNumbers;
use crate::session::{Compaction, RecordedCall, SessionFormat, SessionMeta};
use crate::tui::job_id::JobId;
use crate::tui::list::ListState;
use crate::tui::replay::Replay;
use crate::tui::rows::MessageInfo;

pub use jobs::{HEAD_BYTES, OpenError, open_full, open_head};
pub use listing::{Filled, STATS_BYTES_PER_JOB, uncounted};
pub use view::build_view;

/// How many bytes of a file a job has read, shared with the screen's loading line, and
/// whether the screen stopped waiting (Esc), which ends the read at its next chunk.
/// Compared by address: effects are compared in tests, a counter never is.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    bytes: Arc<AtomicU64>,
    cancelled: Arc<std::sync::atomic::AtomicBool>,
}

impl Progress {
    pub fn get(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn set(&self, bytes: u64) {
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// Asks the job reading the file to stop.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.bytes, &other.bytes)
    }
}

impl Eq for Progress {}

/// One row of the sessions browser.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserRow {
    /// A project's heading, over its sessions (newest first).
    Project {
        name: String,
        sessions: usize,
    },
    Session(SessionItem),
    /// A folder or file that could not be read: shown, never fatal.
    Error {
        path: PathBuf,
        message: String,
    },
}

/// A listed session, and its counts once a background job has scanned it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionItem {
    entry: SessionFile,
    /// None until counted; the error text when the scan failed.
    stats: Option<Result<SessionNumbers, NotListed>>,
}

impl SessionItem {
    /// The listed file and what its first lines said.
    pub fn entry(&self) -> &SessionFile {
        &self.entry
    }

    /// None until counted; the error text when the scan failed.
    pub fn stats(&self) -> Option<&Result<SessionNumbers, NotListed>> {
        self.stats.as_ref()
    }

    /// Takes the counts a scan (or the opened session) found.
    pub fn set_stats(&mut self, stats: Result<SessionNumbers, NotListed>) {
        self.stats = Some(stats);
    }
}

/// One row of an opened session: a message, or a compaction the recording tool performed
/// (drawn as an event between the messages it separates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewRow {
    /// `dimmed`: a later full compaction took it out of what the model saw.
    Message {
        index: usize,
        dimmed: bool,
    },
    Compaction(usize),
}

/// A session opened for viewing.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    path: PathBuf,
    /// The file's name: what titles and the compare view call it.
    label: String,
    format: SessionFormat,
    meta: SessionMeta,
    /// The file's size, and whether all of it is shown (false: its first lines, while
    /// the rest loads).
    bytes: u64,
    complete: bool,
    /// Why the rest of the file could not be read after its first lines were shown: the
    /// head stays on screen, saying so, and `r` refuses to replay half a session.
    load_error: Option<String>,
    rows: Vec<ViewRow>,
    /// One per message of the full session.
    infos: Vec<Arc<MessageInfo>>,
    /// Whether each message is injected context or a compaction's summary (not typed).
    tags: Vec<Option<&'static str>>,
    compactions: Vec<Compaction>,
    calls: Vec<RecordedCall>,
    /// For each row, the last recorded call at or before it.
    call_at_row: Vec<Option<usize>>,
    /// The conversation as the pipeline replays it (`Session::replay_messages`), shared
    /// with the replay job and the compare view.
    messages: Arc<Vec<Message>>,
    warnings: usize,
    skipped: usize,
    sidechains: usize,
    list: ListState,
    replay: Option<SessionReplay>,
    /// The scratch folder the replay wrote into, removed when the view closes.
    scratch: Option<PathBuf>,
    /// A ctxlab recording's events (refusals, compact tool calls) its replays honour.
    recorded: Vec<crate::session::recorded::RecordedEvent>,
}

impl OpenedSession {
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The file's name: what titles and the compare view call it.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn format(&self) -> SessionFormat {
        self.format
    }

    pub fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    /// The file's size.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether all of the file is shown (false: its first lines, while the rest loads).
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Why the rest of the file could not be read after its first lines were shown.
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    pub fn rows(&self) -> &[ViewRow] {
        &self.rows
    }

    /// One per message of the full session.
    pub fn infos(&self) -> &[Arc<MessageInfo>] {
        &self.infos
    }

    /// Whether each message is injected context or a compaction's summary (not typed).
    pub fn tags(&self) -> &[Option<&'static str>] {
        &self.tags
    }

    pub fn compactions(&self) -> &[Compaction] {
        &self.compactions
    }

    pub fn calls(&self) -> &[RecordedCall] {
        &self.calls
    }

    /// The conversation as the pipeline replays it, shared with the replay job and the
    /// compare view.
    pub fn messages(&self) -> &Arc<Vec<Message>> {
        &self.messages
    }

    pub fn warnings(&self) -> usize {
        self.warnings
    }

    pub fn skipped(&self) -> usize {
        self.skipped
    }

    pub fn sidechains(&self) -> usize {
        self.sidechains
    }

    /// The selection among `rows`.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    pub fn list_mut(&mut self) -> &mut ListState {
        &mut self.list
    }

    /// The pipeline's replay, once it ran.
    pub fn replay(&self) -> Option<&SessionReplay> {
        self.replay.as_ref()
    }

    pub fn set_replay(&mut self, replay: SessionReplay) {
        self.replay = Some(replay);
    }

    /// The rest of the file could not be read: the head stays, saying why.
    pub fn set_load_error(&mut self, why: String) {
        self.load_error = Some(why);
    }

    /// The scratch folder the replay wrote into, removed when the view closes.
    pub fn scratch(&self) -> Option<&std::path::Path> {
        self.scratch.as_deref()
    }

    /// The replay about to run writes into `dir`; returns the folder the last one used.
    pub fn replace_scratch(&mut self, dir: PathBuf) -> Option<PathBuf> {
        self.scratch.replace(dir)
    }

    /// The numbers a listing shows for this session, from what is open (a second read of
    /// a large file would hold it twice).
    pub fn numbers(&self) -> SessionNumbers {
        SessionNumbers::of_parts(
            &self.meta,
            self.infos.iter().map(|i| i.message.role()),
            self.compactions.len(),
            &self.calls,
            crate::session::numbers::refused_calls(&self.recorded),
        )
    }

    /// A ctxlab recording's events its replays honour (empty for other tools' files).
    pub fn recorded(&self) -> &[crate::session::recorded::RecordedEvent] {
        &self.recorded
    }

    /// The recorded call the selected row belongs to.
    pub fn selected_call(&self) -> Option<usize> {
        self.call_at_row.get(self.list.selected).copied().flatten()
    }
}

/// The pipeline's replay of an opened session, beside what the recording tool did.
#[derive(Debug, Clone)]
pub struct SessionReplay {
    replay: Replay,
    strategy: Strategy,
    /// Files the pipeline persisted (tool results) and transcripts it saved, relative to
    /// the scratch store.
    persisted: Vec<String>,
    transcripts: Vec<String>,
    scratch: PathBuf,
}

impl SessionReplay {
    /// What the replay did, call by call.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Tool results the pipeline persisted, relative to the scratch store.
    pub fn persisted(&self) -> &[String] {
        &self.persisted
    }

    /// Transcripts the pipeline saved, relative to the scratch store.
    pub fn transcripts(&self) -> &[String] {
        &self.transcripts
    }

    pub fn scratch(&self) -> &std::path::Path {
        &self.scratch
    }
}

/// A job for the sessions browser (run by `Work::Session` off the UI task).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionWork {
    /// List the sessions under `paths` (the default roots when empty), each row in its
    /// place with its counts pending (`listing::first_rows`). A file the listing cache in
    /// `data_dir` knows (`listing_cache`) comes with its counts and is not read; the others
    /// get a first look at their first lines.
    Discover {
        paths: Vec<PathBuf>,
        data_dir: Option<PathBuf>,
    },
    /// Fill a batch of rows of listing number `listing` (`listing::fill`): about
    /// `STATS_BYTES_PER_JOB` bytes' worth of `files`, each counted and given its full
    /// entry through the listing cache in `data_dir`; the rest comes back to be asked for
    /// again.
    Stats {
        /// The listing the rows belong to: a batch for an older one is dropped.
        listing: u64,
        files: Vec<PathBuf>,
        data_dir: Option<PathBuf>,
    },
    /// Open a session: its first `HEAD_BYTES` only (`head`), or all of it, counting the
    /// bytes read into `progress`.
    Open {
        id: JobId,
        path: PathBuf,
        head: bool,
        progress: Progress,
    },
    /// Replay an opened session's conversation with `config` into the store at `scratch`,
    /// honouring a ctxlab recording's events (`recorded`; empty for other tools' files).
    Replay {
        id: JobId,
        messages: Arc<Vec<Message>>,
        config: PipelineConfig,
        recorded: Vec<crate::session::recorded::RecordedEvent>,
        scratch: PathBuf,
    },
    /// Remove one scratch folder (the view closed).
    RemoveScratch { dir: PathBuf },
    /// At start: remove the scratch folders earlier runs left behind.
    CleanScratch { root: PathBuf },
}

/// What a sessions job found.
#[derive(Debug)]
pub enum SessionDone {
    Discovered {
        paths: Vec<PathBuf>,
        rows: Vec<BrowserRow>,
    },
    /// A batch of filled rows for listing number `listing`.
    Stats {
        listing: u64,
        results: Vec<Filled>,
        rest: Vec<PathBuf>,
    },
    Opened {
        id: JobId,
        head: bool,
        result: Result<Box<OpenedSession>, OpenError>,
    },
    Replayed {
        id: JobId,
        replay: Box<SessionReplay>,
    },
    /// Scratch folders removed (nothing waits for it).
    Cleaned,
}

impl SessionWork {
    /// Does the job (blocking: from `spawn_blocking`, or directly in tests).
    pub fn run(self) -> SessionDone {
        jobs::run(self)
    }
}
