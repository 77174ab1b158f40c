//! `ctxlab fork`: undo a compaction by writing a NEW session, in the agent's own format and
//! place, that the agent itself resumes (docs/fork.md). The history it holds is the one
//! just before compaction N, either whole (`--summary none`, the original's own lines up to
//! that point, renamed), or with a summary standing in for it: a text the user wrote, or
//! what a ctxlab strategy would have left (`strategy.rs`, through the one replay loop).
//! `claude.rs` and `codex.rs` write the two formats, `place.rs` finds the agent's folder
//! and writes the file once, never over anything. The original is only read.

pub mod against;
pub mod claude;
pub mod codex;
pub mod ids;
pub mod lines;
pub mod place;
pub mod seed;
pub mod strategy;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::compact::{PipelineConfig, Strategy};
use crate::message::Message;
use crate::session::{Session, SessionError, SessionFormat, Tool};

/// Why a fork was not written.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("a fork is made of a Claude Code session or a Codex rollout, not a {0} file")]
    NotAnAgentSession(&'static str),
    #[error("the session has no compaction {asked} (it records {count})")]
    NoSuchCompaction { asked: usize, count: usize },
    #[error("line {line} of the session is not a JSON object (was the file changed meanwhile?)")]
    BadLine { line: usize },
    #[error(
        "line {0} of the file is not the compaction the reader found there (was the file changed meanwhile?)"
    )]
    CutNotFound(usize),
    #[error(
        "the history before compaction {compaction} is {} tokens, {} more than the {}-token window: it does not fit (use --summary)",
        group(*.tokens), group(*.over), group(*.window)
    )]
    DoesNotFit {
        compaction: usize,
        tokens: u64,
        window: u64,
        over: u64,
    },
    #[error(
        "the session records no working directory, so the agent's project folder is unknown (use --out DIR)"
    )]
    NoCwd,
    #[error("{0}: the fork's file exists; a fork never replaces a file")]
    Exists(PathBuf),
    #[error("the summary is empty")]
    EmptySummary,
    #[error("the strategy's replay: {0}")]
    Replay(String),
    #[error("the strategy left nothing to stand in for the history: {0}")]
    NoSummary(String),
    #[error("the summary call to the configured model failed: {0}")]
    SummaryCall(strategy::SummaryFailure),
    #[error("cannot encode a line: {0}")]
    Encode(String),
    #[error("{path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn group(n: u64) -> String {
    crate::util::group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

/// What stands in for the history before the compaction.
#[derive(Debug, Clone)]
pub enum SummaryChoice {
    /// Nothing: the whole history, if it fits the window.
    None,
    /// A summary the user wrote (or edited).
    Text(String),
    /// What this strategy would have left: its summary and the tail it keeps.
    Strategy(Strategy),
}

/// Where the agents keep their sessions (`place::homes_from_env`, as the agents look).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentHomes {
    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub claude: Option<PathBuf>,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex: Option<PathBuf>,
}

/// How to fork.
#[derive(Debug, Clone)]
pub struct ForkOptions {
    /// The compaction to undo, 1-based, as `ctxlab inspect` and `ctxlab forgot` number them.
    pub before: usize,
    pub summary: SummaryChoice,
    /// The focus the strategy's summary request carries.
    pub focus: Option<String>,
    /// The summary text a strategy's compaction gets (None: `model`'s, else the
    /// extractive summary).
    pub summary_text: Option<String>,
    /// The configured model, called by the command with the strategy's summary request.
    pub model: Option<strategy::ModelSummary>,
    /// The strategy's numbers (for `SummaryChoice::Strategy`).
    pub config: Option<PipelineConfig>,
    /// Write into this folder instead of the agent's own.
    pub out: Option<PathBuf>,
    pub homes: AgentHomes,
    pub now_ms: u64,
}

/// A fork made in memory, ready to be written.
#[derive(Debug, Clone)]
pub struct Fork {
    pub tool: Tool,
    pub session_id: String,
    pub dir: PathBuf,
    pub file_name: String,
    pub text: String,
    /// The working directory the agent resumes in.
    pub cwd: Option<String>,
    /// What the history holds, in words (for the report).
    pub holds: String,
    /// Subagents started before the fork point whose transcripts are files of their own
    /// (`<session>/subagents/`): not copied, as the fork holds what each reported (the
    /// `Agent` tool's result), which is all the agent resumes with (docs/fork.md).
    pub subagents_left_out: usize,
}

impl Fork {
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.file_name)
    }

    /// What was left out, in words, when anything was (the subagents' own transcripts).
    pub fn left_out(&self) -> Option<String> {
        (self.subagents_left_out > 0).then(|| {
            format!(
                "not copied: the transcript{} of {} subagent{} started before the fork point (the fork holds what each reported, the Agent tool's result, which is all the agent resumes with)",
                if self.subagents_left_out == 1 { "" } else { "s" },
                self.subagents_left_out,
                if self.subagents_left_out == 1 { "" } else { "s" },
            )
        })
    }

    /// The command that resumes it, run in its working directory.
    pub fn resume_command(&self) -> String {
        let resume = match self.tool {
            Tool::Codex => format!("codex resume {}", self.session_id),
            _ => format!("claude --resume {}", self.session_id),
        };
        match &self.cwd {
            Some(cwd) => format!("cd {} && {resume}", shell_quote(cwd)),
            None => resume,
        }
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The window a session's model had: what the file records, else the agent's default
/// (Claude Code's 200,000 tokens, or a million for a `[1m]` model).
pub fn window_of(session: &Session) -> Option<u64> {
    session.context_window().or_else(|| {
        (session.format == SessionFormat::ClaudeCode).then(|| {
            if session.meta.models.iter().any(|m| m.contains("[1m]")) {
                1_000_000
            } else {
                200_000
            }
        })
    })
}

/// The history before compaction `before` (1-based), as the model had it: the forgot
/// module's reading of the session, so both commands agree on it.
pub fn history_before(session: &Session, before: usize) -> Option<Vec<Message>> {
    let inputs = crate::forgot::from_session::inputs_of_session(session);
    let input = inputs.into_iter().nth(before.checked_sub(1)?)?;
    Some(input.before.into_iter().map(|n| n.message).collect())
}

/// Makes the fork of the session at `path` (read here, never changed).
pub fn make_fork(path: &Path, options: &ForkOptions) -> Result<Fork, ForkError> {
    let session = crate::session::load_session(path)?;
    let bytes = crate::session::open::read_session_bytes(path, &|_| {}, &|| false)?;
    let (text, _) = crate::session::text_of_bytes(bytes)?;
    let mut fork = make_fork_of(&session, &text, options)?;
    let at = options
        .before
        .checked_sub(1)
        .and_then(|i| session.compactions.get(i))
        .and_then(|c| c.timestamp.as_deref());
    fork.subagents_left_out = subagent_files_before(path, &session, at);
    Ok(fork)
}

/// The subagents of a Claude Code session with a transcript file of their own, started
/// before `at` (the compaction's time; all of them when it is unknown).
fn subagent_files_before(path: &Path, session: &Session, at: Option<&str>) -> usize {
    if session.format != SessionFormat::ClaudeCode {
        return 0;
    }
    let files: Vec<String> =
        crate::session::discover::claude_subagent_files(path, session.meta.session_id.as_deref())
            .iter()
            .filter_map(|f| f.file_stem()?.to_str().map(str::to_string))
            .collect();
    session
        .sidechains
        .iter()
        .filter(|s| {
            s.meta.agent_id.as_deref().is_some_and(|id| {
                files
                    .iter()
                    .any(|f| f == id || f.strip_prefix("agent-") == Some(id))
            })
        })
        // ISO times in one format: their order is the text's.
        .filter(|s| match (at, s.meta.started.as_deref()) {
            (Some(at), Some(started)) => started < at,
            _ => true,
        })
        .count()
}

/// `make_fork` on a session already read, with the file's text.
pub fn make_fork_of(
    session: &Session,
    text: &str,
    options: &ForkOptions,
) -> Result<Fork, ForkError> {
    let tool = match session.format {
        SessionFormat::ClaudeCode => Tool::ClaudeCode,
        SessionFormat::Codex => Tool::Codex,
        other => return Err(ForkError::NotAnAgentSession(other.name())),
    };
    let count = session.compactions.len();
    let compaction = options
        .before
        .checked_sub(1)
        .and_then(|i| session.compactions.get(i))
        .ok_or(ForkError::NoSuchCompaction {
            asked: options.before,
            count,
        })?;
    let lines = lines::parse_lines(text)?;
    let cwd = session.meta.cwd.clone();
    let place = place::place_for(tool, cwd.as_deref(), options)?;
    let written = match &options.summary {
        SummaryChoice::None => {
            let tokens = compaction.tokens_before.as_ref().map(|t| t.tokens);
            if let (Some(tokens), Some(window)) = (tokens, window_of(session))
                && tokens > window
            {
                return Err(ForkError::DoesNotFit {
                    compaction: options.before,
                    tokens,
                    window,
                    over: tokens - window,
                });
            }
            let mut out = match tool {
                Tool::Codex => codex::prefix(&lines, compaction.line, &place.session_id)?,
                _ => claude::prefix(&lines, compaction.line, &place.session_id)?,
            };
            out.holds = format!(
                "the whole history before compaction {}{}",
                options.before,
                match (tokens, window_of(session)) {
                    (Some(t), Some(w)) =>
                        format!(" ({} tokens of a {}-token window)", group(t), group(w)),
                    _ => String::new(),
                }
            );
            out
        }
        SummaryChoice::Text(summary) => {
            if summary.trim().is_empty() {
                return Err(ForkError::EmptySummary);
            }
            let tokens = compaction.tokens_before.as_ref().map(|t| t.tokens);
            let mut out = match tool {
                Tool::Codex => {
                    codex::with_summary_text(&lines, compaction.line, summary, &place.session_id)?
                }
                _ => claude::with_messages(
                    &lines,
                    compaction.line,
                    &claude::summary_message(summary),
                    &[],
                    &place.session_id,
                    options.now_ms,
                    tokens,
                )?,
            };
            out.holds = format!(
                "your summary in place of the history before compaction {}",
                options.before
            );
            out
        }
        SummaryChoice::Strategy(name) => {
            let history =
                history_before(session, options.before).ok_or(ForkError::NoSuchCompaction {
                    asked: options.before,
                    count,
                })?;
            let mut config = options
                .config
                .unwrap_or_else(|| PipelineConfig::for_strategy(*name));
            config.strategy = *name;
            let left = strategy::left_by(history, config, options)?;
            let tokens = compaction.tokens_before.as_ref().map(|t| t.tokens);
            let mut out = match tool {
                Tool::Codex => {
                    codex::with_messages(&lines, compaction.line, &left, &place.session_id)?
                }
                _ => {
                    let (first, rest) = left
                        .split_first()
                        .ok_or_else(|| ForkError::NoSummary(name.to_string()))?;
                    claude::with_messages(
                        &lines,
                        compaction.line,
                        first,
                        rest,
                        &place.session_id,
                        options.now_ms,
                        tokens,
                    )?
                }
            };
            out.holds = format!(
                "what {name} leaves of the history before compaction {}: its summary and {} kept messages",
                options.before,
                left.len().saturating_sub(1)
            );
            out
        }
    };
    Ok(Fork {
        tool,
        session_id: place.session_id,
        dir: place.dir,
        file_name: place.file_name,
        text: written.text,
        cwd,
        holds: written.holds,
        subagents_left_out: 0,
    })
}

/// Makes and writes the fork of compaction `before` with the whole history (`B` in the
/// workbench): the viewer's title and its lines, or why not.
pub fn fork_whole(
    path: &Path,
    before: usize,
    homes: AgentHomes,
) -> Result<(String, Vec<String>), ForkError> {
    let options = ForkOptions {
        before,
        summary: SummaryChoice::None,
        focus: None,
        summary_text: None,
        model: None,
        config: None,
        out: None,
        homes,
        now_ms: ids::now_ms(),
    };
    let fork = make_fork(path, &options)?;
    let written = place::write_fork(&fork)?;
    let mut lines = vec![
        format!("wrote {}", written.display()),
        format!("{}: {}", fork.tool.name(), fork.holds),
    ];
    lines.extend(fork.left_out());
    lines.extend([
        String::new(),
        "resume it with:".to_string(),
        format!("  {}", fork.resume_command()),
        String::new(),
        format!(
            "(ctxlab fork {} --before {before} --summary FILE|STRATEGY for a summary instead)",
            path.display()
        ),
    ]);
    Ok((format!("fork before compaction {before}"), lines))
}

/// What a writer made: the file's text and what it holds in words.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub text: String,
    pub holds: String,
}
