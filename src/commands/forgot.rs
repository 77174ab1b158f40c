//! `ctxlab forgot SESSION [--compaction N] [--replay NAME] [--json]`: what each compaction
//! forgot (docs/forgot.md). The recorded compactions of a Claude Code, Codex or ctxlab file,
//! or, with `--replay`, the ones a replay under a strategy makes; as lines for people or as
//! one JSON object `{"compactions": [...]}`. The analysis is `forgot`'s; this only reads the
//! file, picks the compactions and writes.

use std::io::Write;
use std::path::Path;

use crate::forgot::from_replay::replay_inputs;
use crate::forgot::from_session::{SessionView, Walk, each_input_with_kept};
use crate::forgot::text::{CHECK_RULE, Layout, report_lines, wrap};
use crate::forgot::{CompactionForgot, CompactionInput, ForgotReport, Memo, analyze, analyze_with};
use crate::pipeline_replay::ReplayOptions;
use crate::session::claude_windows::{Window, read_claude_windows};
use crate::session::kept_read::{KeptSession, load_session_kept};
use crate::session::{LoadWarning, SessionError, Tool, load_history};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ForgotError {
    #[error("{0}")]
    Session(#[from] SessionError),
    #[error("the replay's store: {0}")]
    Store(#[from] StoreError),
    #[error("cannot make a temporary workspace for the replay: {0}")]
    Temp(std::io::Error),
    #[error("there is no compaction {asked}: the session has {count}")]
    NoSuchCompaction { asked: usize, count: usize },
    #[error("cannot write: {0}")]
    Output(std::io::Error),
}

/// What to analyse.
#[derive(Debug, Clone, Default)]
pub struct ForgotOptions {
    /// 1-based; None: every compaction.
    pub compaction: Option<usize>,
    /// Replay under this config instead of reading the recorded compactions.
    pub replay: Option<ReplayOptions>,
}

/// What the command found: the reports, and a note when there is nothing to show.
#[derive(Debug, Clone)]
pub struct ForgotFindings {
    pub source: String,
    pub report: ForgotReport,
    pub note: Option<String>,
    /// Lines of the file the reader could not use (malformed, or of no known shape), and
    /// its warnings: said, never skipped silently.
    pub load_warnings: Vec<String>,
    /// The most messages of the session held at once while reading it (a Claude Code
    /// file's streamed read holds those since the last full compaction but one; a whole
    /// read every one).
    pub most_held: usize,
}

fn pick(
    inputs: Vec<CompactionInput>,
    asked: Option<usize>,
) -> Result<Vec<CompactionForgot>, ForgotError> {
    let count = inputs.len();
    let mut memo = Memo::default();
    match asked {
        None => Ok(inputs
            .iter()
            .enumerate()
            .map(|(i, c)| analyze_with(i + 1, c, &mut memo))
            .collect()),
        Some(n) if n >= 1 && n <= count => Ok(vec![analyze(n, &inputs[n - 1])]),
        Some(asked) => Err(ForgotError::NoSuchCompaction { asked, count }),
    }
}

/// The reports of the compactions asked for, each analysed as soon as its input is
/// built and the input let go (`each_input_with_kept`): memory holds the session, each
/// Codex history item once (`load_session_kept`) and one compaction's histories, not
/// every compaction's. The same reports as `pick` over the inputs of a full read (a test
/// compares them).
fn pick_streamed(
    read: &KeptSession,
    asked: Option<usize>,
) -> Result<(Vec<CompactionForgot>, usize), ForgotError> {
    let mut reports = Vec::new();
    let mut count = 0;
    let mut kept = read.kept_lists();
    // Each message the compactions repeat is analysed once (`analyze_with`).
    let mut memo = Memo::default();
    each_input_with_kept(
        &read.session,
        |k, _| kept.kept(k),
        |input| {
            count += 1;
            if asked.is_none_or(|n| n == count) {
                reports.push(analyze_with(count, input, &mut memo));
            }
        },
    );
    match asked {
        Some(n) if n < 1 || n > count => Err(ForgotError::NoSuchCompaction { asked: n, count }),
        _ => Ok((reports, count)),
    }
}

/// The reports of a Claude Code file read a stretch at a time (`claude_windows`): each run
/// of compactions analysed as soon as the full compaction after it is read, the messages
/// before it then let go. None when that read cannot be sure to give the whole read's
/// inputs (the caller reads the file whole). The same reports as `pick_streamed` over a
/// whole read (a test compares them on every fixture).
fn pick_windows(
    path: &Path,
    asked: Option<usize>,
) -> Result<Option<(Vec<CompactionForgot>, WindowedRead)>, ForgotError> {
    let mut reports = Vec::new();
    let mut count = 0;
    let mut memo = Memo::default();
    let mut walk = Walk::default();
    let mut each = |w: Window<'_>| {
        let view = SessionView {
            session: w.session,
            offset: w.offset,
        };
        walk.step(
            view,
            w.upto,
            w.next_full,
            |_, c| c.kept.clone(),
            |input| {
                count += 1;
                if asked.is_none_or(|n| n == count) {
                    reports.push(analyze_with(count, &input, &mut memo));
                }
                input.kept.messages
            },
        );
    };
    let Some(read) = read_claude_windows(path, &mut each)? else {
        return Ok(None);
    };
    match asked {
        Some(n) if n < 1 || n > count => Err(ForgotError::NoSuchCompaction { asked: n, count }),
        _ => Ok(Some((
            reports,
            WindowedRead {
                warnings: read.warnings,
                count,
                most_held: read.most_held,
            },
        ))),
    }
}

/// What `pick_windows` read besides the reports.
struct WindowedRead {
    warnings: Vec<LoadWarning>,
    count: usize,
    most_held: usize,
}

/// The first warnings of a read as `forgot` prints them, and how many more there were.
fn shown_warnings(warnings: &[LoadWarning]) -> Vec<String> {
    let mut shown: Vec<String> = warnings
        .iter()
        .take(MAX_WARNINGS_SHOWN)
        .map(|w| format!("line {}: {}", w.line, w.message))
        .collect();
    if warnings.len() > MAX_WARNINGS_SHOWN {
        shown.push(format!(
            "and {} more warnings",
            warnings.len() - MAX_WARNINGS_SHOWN
        ));
    }
    shown
}

/// Reads the session (or replays it) and analyses the compactions asked for.
pub fn find_forgotten(path: &Path, options: &ForgotOptions) -> Result<ForgotFindings, ForgotError> {
    let mut load_warnings = Vec::new();
    let mut most_held = 0;
    let (source, compactions, none) = match &options.replay {
        Some(replay) => {
            let loaded = load_history(path)?.require_conversation()?;
            // A ctxlab recording's refusals and compact requests happen where they did.
            let mut replay = replay.clone();
            if replay.recorded.is_empty() {
                replay.recorded = loaded.recorded;
            }
            let temp = tempfile::tempdir().map_err(ForgotError::Temp)?;
            let store = Store::new(temp.path()).without_sync();
            let name = replay.config.strategy.name();
            let inputs = replay_inputs(loaded.messages, name, &store, &replay)?;
            let none = inputs.is_empty();
            (
                format!("a replay under {name}"),
                pick(inputs, options.compaction)?,
                none,
            )
        }
        None => match pick_windows(path, options.compaction)? {
            Some((compactions, read)) => {
                load_warnings = shown_warnings(&read.warnings);
                most_held = read.most_held;
                let source = format!("recorded by {}", Tool::ClaudeCode.name());
                (source, compactions, read.count == 0)
            }
            None => {
                let read = load_session_kept(path)?;
                let session = &read.session;
                load_warnings = shown_warnings(&session.warnings);
                most_held = session.messages.len();
                let source = format!("recorded by {}", session.tool().name());
                let (compactions, count) = pick_streamed(&read, options.compaction)?;
                (source, compactions, count == 0)
            }
        },
    };
    let note = none.then(|| {
        if options.replay.is_some() {
            "the replay made no compaction that dropped or cleared anything".to_string()
        } else {
            "the file records no compaction (try --replay s08 to see what ctxlab's pipeline would drop)"
                .to_string()
        }
    });
    Ok(ForgotFindings {
        source,
        report: ForgotReport { compactions },
        note,
        load_warnings,
        most_held,
    })
}

/// The reader's warnings printed before the reports, at most.
const MAX_WARNINGS_SHOWN: usize = 5;

/// Writes the findings as lines (through the caller's sanitizing writer) or as JSON.
pub fn write_forgot(
    out: &mut dyn Write,
    findings: &ForgotFindings,
    json: bool,
    layout: &Layout,
) -> Result<(), ForgotError> {
    let w = |out: &mut dyn Write| -> std::io::Result<()> {
        if json {
            let text = serde_json::to_string(&findings.report).map_err(std::io::Error::other)?;
            writeln!(out, "{text}")?;
            return out.flush();
        }
        let n = findings.report.compactions.len();
        writeln!(out, "{n} compactions, {}", findings.source)?;
        for w in &findings.load_warnings {
            for line in wrap("warning:", w, 2, layout.width) {
                writeln!(out, "{line}")?;
            }
        }
        if let Some(note) = &findings.note {
            writeln!(out, "{note}")?;
        }
        for c in &findings.report.compactions {
            writeln!(out)?;
            for line in report_lines(c, layout) {
                writeln!(out, "{line}")?;
            }
        }
        writeln!(out)?;
        for line in wrap("facts check:", CHECK_RULE, 2, layout.width) {
            writeln!(out, "{line}")?;
        }
        out.flush()
    };
    w(out).map_err(ForgotError::Output)
}
