//! The command line: the flags and subcommands clap parses. `main.rs` turns them into
//! calls into the library.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use ctxlab::compact::Strategy;
use ctxlab::startup::LaunchOptions;
use ctxlab::user_config::ProviderKind;

/// A terminal workbench where a coding agent runs while its context compaction
/// pipeline (tool_result_budget, snip_compact, micro_compact, compact_history) happens live.
#[derive(Debug, Parser)]
#[command(name = "ctxlab", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Options for the workbench (when no subcommand is given).
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
    /// Start the workbench in step mode, paused before the first stage or model call
    /// (Space: one step; s: run to the next stage that changes something; c: to the next
    /// model call; p: back one model call).
    #[arg(long)]
    pub(crate) step: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one request to completion without the TUI and print what happens.
    Run(RunArgs),
    /// Run the pipeline stages on a history file and print what each stage did, as JSON.
    Pipeline(PipelineArgs),
    /// Replay a recorded session through the pipeline, model call by model call.
    Replay(ReplayArgs),
    /// Write a recorded session's timeline (plot, every stage event with its diff, the
    /// summaries, the final history) as one self-contained HTML page.
    Export(ExportArgs),
    /// Summarize a session file: format, calls, tool pairs, recorded compactions, peak context.
    Inspect(InspectArgs),
    /// What each compaction forgot: before and after, the summary, what was kept and
    /// dropped, which facts of the dropped part the summary does not mention, and the
    /// cleared tool results read again.
    Forgot(ForgotArgs),
    /// List the Claude Code and Codex sessions on this machine and ctxlab's own recordings
    /// (or the sessions under the given paths).
    Sessions(SessionsArgs),
    /// Start the workbench on the sessions browser, listing a file's or a folder's sessions
    /// (a file opens directly).
    Open(OpenArgs),
    /// Follow a Claude Code or Codex session, or a `ctxlab proxy` capture, as it is written:
    /// its calls, context curve and compactions, live, in the workbench's live view (default: the newest session of the
    /// project in this folder; --text or a stdout that is not a terminal: readable lines).
    Watch(WatchArgs),
    /// Claude Code's status line command: reads its JSON on stdin, prints one short line
    /// (context, window, compactions, headroom).
    Statusline(StatuslineArgs),
    /// An HTTP proxy on loopback that an agent (Claude Code, Codex, any Anthropic or OpenAI
    /// client) is pointed at: each request goes on unchanged, and each exchange is captured
    /// with the exact request body (a session ctxlab reads like the others).
    Proxy(ProxyArgs),
    /// Undo a compaction: write a NEW Claude Code session or Codex rollout, in the agent's
    /// own place, holding the history before compaction N (whole, or with the summary you
    /// choose standing in), and print the command that resumes it. The original is only
    /// read.
    Fork(ForkArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ForkArgs {
    /// The Claude Code session or Codex rollout to fork.
    pub(crate) session: PathBuf,
    /// The compaction to undo (1 is the first, as `ctxlab inspect` numbers them).
    #[arg(long, value_name = "N")]
    pub(crate) before: usize,
    /// What stands in for the history before it: `none` (the whole history, if it fits
    /// the window), a strategy (s08, s08-latest, s06, guarded: what it would have left),
    /// or a FILE holding a summary you wrote.
    #[arg(long, value_name = "none|STRATEGY|FILE", default_value = "none")]
    pub(crate) summary: String,
    /// Open $VISUAL / $EDITOR on the summary first (the original summary and the facts it
    /// did not carry, or the FILE given).
    #[arg(long)]
    pub(crate) edit: bool,
    /// The focus a strategy's summary request carries.
    #[arg(long, value_name = "TEXT")]
    pub(crate) focus: Option<String>,
    /// The summary a strategy's compaction gets (default: an extractive summary).
    #[arg(long, value_name = "TEXT")]
    pub(crate) summary_text: Option<String>,
    /// Write into this folder instead of the agent's own (~/.claude/projects/<project>/,
    /// $CODEX_HOME/sessions/YYYY/MM/DD/).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// One JSON object (path, session_id, resume) instead of readable lines.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Address to listen on; only a loopback address unless --allow-non-loopback.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8765")]
    pub(crate) listen: std::net::SocketAddr,
    /// Send every request here instead of the API's own server by path
    /// (https://api.anthropic.com for /v1/messages, https://api.openai.com for
    /// /v1/chat/completions and /v1/responses).
    #[arg(long, value_name = "URL")]
    pub(crate) upstream: Option<String>,
    /// The capture file (appended to if it is already a capture). Default: a new file in
    /// `captures/` of ctxlab's data dir.
    #[arg(long, value_name = "FILE")]
    pub(crate) capture: Option<PathBuf>,
    /// Listen on a non-loopback address: anyone who reaches it can spend the keys the
    /// clients send through it.
    #[arg(long)]
    pub(crate) allow_non_loopback: bool,
    /// Print one line per exchange on stdout as it completes.
    #[arg(long)]
    pub(crate) watch: bool,
    /// Most seconds for one exchange upstream, from the request to the answer's last byte;
    /// past it the answer is cut off (the client sees it broken) and recorded as such.
    #[arg(long, value_name = "SECS", default_value_t = ctxlab::proxy::DEFAULT_UPSTREAM_DEADLINE.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) upstream_deadline: u64,
}

#[derive(Debug, Args, Clone, Default)]
pub(crate) struct Thresholds {
    /// Override a pipeline number, e.g. `--set context_limit=800000` (repeatable).
    /// Keys: budget_chars, persist_threshold, preview_chars, snip_max_messages,
    /// snip_keep_head, micro_keep_recent, micro_min_chars, context_limit,
    /// reactive_keep_tail, summary_input_chars, summary_max_tokens.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
}

/// How the agent is started; shared by the workbench and `ctxlab run`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct AgentArgs {
    /// Which model to use (default: anthropic when ANTHROPIC_API_KEY is set, openai when
    /// OPENAI_API_KEY or OPENAI_BASE_URL is set, otherwise the embedded scripted model).
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderKind>,
    /// Model id (default: MODEL_ID, then config.toml, then the provider's default).
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Folder the agent works in (default: the current directory; for the scripted model
    /// a fresh copy of the demo project).
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Scenario the scripted model plays (default: tour).
    #[arg(long)]
    pub(crate) scenario: Option<String>,
    /// Milliseconds between the scripted model's streamed deltas (default 30; 0 = instant).
    #[arg(long, value_name = "MS")]
    pub(crate) pace_ms: Option<u64>,
    /// Compaction strategy: s08 (default; also `lesson`), s08-latest, s06 or guarded
    /// (default: `strategy` in config.toml, then s08).
    #[arg(long, value_name = "NAME")]
    pub(crate) strategy: Option<Strategy>,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

impl AgentArgs {
    pub(crate) fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            provider: self.provider,
            model: self.model.clone(),
            workspace: self.workspace.clone(),
            scenario: self.scenario.clone(),
            pace_ms: self.pace_ms,
            strategy: self.strategy,
            sets: self.thresholds.set.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
    /// One JSON event per line instead of readable lines.
    #[arg(long)]
    pub(crate) json: bool,
    /// The request (default for the scripted model: the scenario's own request). Several
    /// prompts run in sequence in one session; `/compact [focus]` compacts the history.
    pub(crate) prompts: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct PipelineArgs {
    /// History to run: {"messages": [...], "active_request": "..."}, a bare list of messages,
    /// a ctxlab transcript, or a Claude Code or Codex session file.
    #[arg(long, value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// Workspace the stages write into (.task_outputs/, .transcripts/); created if missing.
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: PathBuf,
    /// Compaction strategy: s08 (default; also `lesson`), s08-latest, s06 or guarded. Each
    /// prints the shape of its recorded cases.
    #[arg(long, value_name = "NAME", default_value = "s08")]
    pub(crate) strategy: Strategy,
    /// Unix seconds used in transcript names (default: the current time).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// Summary text for the compact_history and reactive_compact probes; without it they
    /// are omitted from the output.
    #[arg(long, value_name = "TEXT")]
    pub(crate) summary_text: Option<String>,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// A session: a ctxlab transcript or JSON array of messages, a Claude Code session
    /// (~/.claude/projects/...jsonl) or a Codex rollout (~/.codex/sessions/...jsonl).
    pub(crate) file: PathBuf,
    /// Workspace the stages write into; created if missing. With --compare, each strategy
    /// writes into DIR/NAME (which must be empty); without it, into a temporary folder.
    #[arg(long, value_name = "DIR", required_unless_present = "compare")]
    pub(crate) workspace: Option<PathBuf>,
    /// The summary every compaction gets (default: an extractive summary of the history).
    #[arg(long, value_name = "TEXT")]
    pub(crate) summary_text: Option<String>,
    /// Unix seconds used in transcript names (default: the current time).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// One JSON object per model call, then a totals object (with --compare: each with its
    /// strategy, and the totals object last for each strategy).
    #[arg(long)]
    pub(crate) json: bool,
    /// Compaction strategy: s08 (default; also `lesson`), s08-latest, s06 or guarded.
    #[arg(long, value_name = "NAME", default_value = "s08")]
    pub(crate) strategy: Strategy,
    /// Replay once per strategy (comma-separated, e.g. s06,s08,s08-latest,guarded) and print
    /// them side by side: stages, sizes, summaries and what each kept within reach.
    #[arg(
        long,
        value_name = "A,B,...",
        value_delimiter = ',',
        conflicts_with = "strategy"
    )]
    pub(crate) compare: Vec<Strategy>,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// A session: a ctxlab transcript or JSON array of messages, a Claude Code session
    /// or a Codex rollout (any format `ctxlab replay` reads).
    pub(crate) session: PathBuf,
    /// The HTML file to write (replaced when it exists).
    #[arg(long, value_name = "FILE.html")]
    pub(crate) out: PathBuf,
    /// The summary every compaction gets (default: an extractive summary of the history).
    #[arg(long, value_name = "TEXT")]
    pub(crate) summary_text: Option<String>,
    /// Unix seconds used in transcript names (default: the current time).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// Compaction strategy: s08 (default; also `lesson`), s08-latest, s06 or guarded.
    #[arg(long, value_name = "NAME", default_value = "s08")]
    pub(crate) strategy: Strategy,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The session file (any format ctxlab reads).
    pub(crate) file: PathBuf,
    /// Every model call's context by category instead of the summary.
    #[arg(long)]
    pub(crate) calls: bool,
    /// A `ctxlab proxy` capture's requests: each one's change since the previous one, its
    /// exact breakdown, and what each strategy would have sent instead.
    #[arg(long, conflicts_with = "calls")]
    pub(crate) requests: bool,
    /// One JSON object instead of readable lines.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// Files or folders to list (default: $CLAUDE_CONFIG_DIR or ~/.claude, projects/;
    /// $CODEX_HOME or ~/.codex, sessions/; and ctxlab's data dir, sessions/ and
    /// captures/).
    pub(crate) paths: Vec<PathBuf>,
    /// One JSON array instead of readable lines.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct OpenArgs {
    /// A session file, or a folder of sessions (default: the Claude Code and Codex folders).
    pub(crate) path: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ForgotArgs {
    /// The session file (any format ctxlab reads).
    pub(crate) session: PathBuf,
    /// Only this compaction (1 is the first).
    #[arg(long, value_name = "N")]
    pub(crate) compaction: Option<usize>,
    /// Analyse the compactions a replay under this strategy makes instead of the recorded
    /// ones (s08, s08-latest, s06 or guarded).
    #[arg(long, value_name = "NAME")]
    pub(crate) replay: Option<Strategy>,
    /// The summary every replayed compaction gets (default: an extractive summary).
    #[arg(long, value_name = "TEXT", requires = "replay")]
    pub(crate) summary_text: Option<String>,
    /// One JSON object {"compactions": [...]} instead of readable lines.
    #[arg(long)]
    pub(crate) json: bool,
    /// A fork of the session (`ctxlab fork`): which of the facts each compaction's summary
    /// did not carry the fork carries.
    #[arg(long, value_name = "FORK", conflicts_with = "replay")]
    pub(crate) against: Option<PathBuf>,
    /// Every fact found, carried ones included (default: the most important ones not
    /// carried).
    #[arg(long)]
    pub(crate) all: bool,
    /// Columns the lines may take (default: $COLUMNS, else 80).
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(40..))]
    pub(crate) width: Option<u16>,
    #[command(flatten)]
    pub(crate) thresholds: Thresholds,
}

#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// A session file or capture, or a folder (its most recently written session or
    /// capture, such as the captures folder). Default: the
    /// newest Claude Code or Codex session of the project in the current folder.
    pub(crate) path: Option<PathBuf>,
    /// One JSON object per line instead of the workbench's live view.
    #[arg(long)]
    pub(crate) json: bool,
    /// Readable lines instead of the workbench's live view (also what is printed when
    /// stdout is not a terminal).
    #[arg(long, conflicts_with = "json")]
    pub(crate) text: bool,
    /// No terminal bell on a compaction (default: `bell_on_compaction` in config.toml,
    /// which is true unless set).
    #[arg(long)]
    pub(crate) no_bell: bool,
    /// With --json: print what is already in the file, line by line, before following
    /// (default: one summary object, then only what is written from now on).
    #[arg(long)]
    pub(crate) from_start: bool,
    /// Milliseconds between two looks at the file when no change notification comes
    /// (the polling fallback; default 1000).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub(crate) poll_ms: u64,
    /// Poll only: do not ask for file-change notifications.
    #[arg(long)]
    pub(crate) no_notify: bool,
    /// Within this many tokens of the agent's compaction threshold, list the facts a
    /// compaction would put at risk and a ready /compact focus (--json: an `at_risk` event;
    /// 0: never).
    #[arg(long, value_name = "TOKENS", default_value_t = 20_000)]
    pub(crate) at_risk_within: u64,
}

#[derive(Debug, clap::Args)]
pub struct StatuslineArgs {
    /// Columns the line may take at most (default: $COLUMNS, else 120)
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(20..))]
    pub max_width: Option<u16>,
}
