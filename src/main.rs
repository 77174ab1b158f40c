//! The `ctxlab` binary: parses flags and picks a front end. Everything else is in the
//! library; this file only adds context to errors and chooses exit codes.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use ctxlab::commands::pipeline::{parse_history_input, pipeline_report};
use ctxlab::commands::replay::{ReplayCommandError, run_replay};
use ctxlab::compact::PipelineConfig;
use ctxlab::replay::ReplayOptions;
use ctxlab::session::parse_session;
use ctxlab::startup::{LaunchOptions, prepare};
use ctxlab::user_config::ProviderKind;

/// A terminal workbench where a coding agent runs while its context compaction
/// pipeline (tool_result_budget, snip_compact, micro_compact, compact_history) happens live.
#[derive(Debug, Parser)]
#[command(name = "ctxlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Options for the workbench (when no subcommand is given).
    #[command(flatten)]
    agent: AgentArgs,
    /// Start the workbench in step mode, paused before the first stage or model call
    /// (Space: one step; s: run to the next stage that changes something; c: to the next
    /// model call).
    #[arg(long)]
    step: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one request to completion without the TUI and print what happens.
    Run(RunArgs),
    /// Run the pipeline stages on a history file and print what each stage did, as JSON.
    Pipeline(PipelineArgs),
    /// Replay a recorded session through the pipeline, model call by model call.
    Replay(ReplayArgs),
}

#[derive(Debug, Args, Clone, Default)]
struct Thresholds {
    /// Override a pipeline number, e.g. `--set context_limit=800000` (repeatable).
    /// Keys: budget_chars, persist_threshold, preview_chars, snip_max_messages,
    /// snip_keep_head, micro_keep_recent, micro_min_chars, context_limit,
    /// reactive_keep_tail, summary_input_chars, summary_max_tokens.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

/// How the agent is started; shared by the workbench and `ctxlab run`.
#[derive(Debug, Args, Clone, Default)]
struct AgentArgs {
    /// Which model to use (default: anthropic when ANTHROPIC_API_KEY is set, openai when
    /// OPENAI_API_KEY or OPENAI_BASE_URL is set, otherwise the embedded scripted model).
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    /// Model id (default: MODEL_ID, then config.toml, then the provider's default).
    #[arg(long)]
    model: Option<String>,
    /// Folder the agent works in (default: the current directory; for the scripted model
    /// a fresh copy of the demo project).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Scenario the scripted model plays (default: tour).
    #[arg(long)]
    scenario: Option<String>,
    /// Milliseconds between the scripted model's streamed deltas (default 30; 0 = instant).
    #[arg(long, value_name = "MS")]
    pace_ms: Option<u64>,
    #[command(flatten)]
    thresholds: Thresholds,
}

impl AgentArgs {
    fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            provider: self.provider,
            model: self.model.clone(),
            workspace: self.workspace.clone(),
            scenario: self.scenario.clone(),
            pace_ms: self.pace_ms,
            sets: self.thresholds.set.clone(),
        }
    }
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    agent: AgentArgs,
    /// One JSON event per line instead of readable lines.
    #[arg(long)]
    json: bool,
    /// The request (default for the scripted model: the scenario's own request).
    prompt: Option<String>,
}

#[derive(Debug, Args)]
struct PipelineArgs {
    /// History to run: {"messages": [...], "active_request": "..."} or a bare list of messages.
    #[arg(long, value_name = "FILE")]
    input: PathBuf,
    /// Workspace the stages write into (.task_outputs/, .transcripts/); created if missing.
    #[arg(long, value_name = "DIR")]
    workspace: PathBuf,
    /// Compaction strategy; only the lesson's is implemented.
    #[arg(long, default_value = "lesson", value_parser = ["lesson"])]
    strategy: String,
    /// Unix seconds used in transcript names (default: the current time).
    #[arg(long, value_name = "UNIX_SECONDS")]
    now: Option<u64>,
    /// Summary text for the compact_history and reactive_compact probes; without it they
    /// are omitted from the output.
    #[arg(long, value_name = "TEXT")]
    summary_text: Option<String>,
    #[command(flatten)]
    thresholds: Thresholds,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// A transcript (one message per line) or a JSON array of messages.
    file: PathBuf,
    /// Workspace the stages write into; created if missing.
    #[arg(long, value_name = "DIR")]
    workspace: PathBuf,
    /// The summary every compaction gets (default: an extractive summary of the history).
    #[arg(long, value_name = "TEXT")]
    summary_text: Option<String>,
    /// Unix seconds used in transcript names (default: the current time).
    #[arg(long, value_name = "UNIX_SECONDS")]
    now: Option<u64>,
    /// One JSON object per model call, then a totals object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    thresholds: Thresholds,
}

/// A failure the user caused (bad file, bad flag): exit 2 with one line.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Run(args)) => cmd_run(args),
        Some(Command::Pipeline(args)) => cmd_pipeline(args),
        Some(Command::Replay(args)) => cmd_replay(args),
        None => cmd_workbench(cli.agent, cli.step),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let closed_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if closed_pipe {
                // `ctxlab replay ... | head` is a reader that had enough, not a failure.
                return ExitCode::SUCCESS;
            }
            if let Some(usage) = e.downcast_ref::<UsageError>() {
                eprintln!("ctxlab: {usage}");
                ExitCode::from(2)
            } else {
                eprintln!("ctxlab: {e:#}");
                ExitCode::FAILURE
            }
        }
    }
}

fn config_from(thresholds: &Thresholds) -> anyhow::Result<PipelineConfig> {
    let mut config = PipelineConfig::default();
    for assignment in &thresholds.set {
        config
            .apply_assignment(assignment)
            .map_err(|e| UsageError(format!("--set {e}")))?;
    }
    Ok(config)
}

fn read_input(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())).into())
}

fn now_secs(now: Option<u64>) -> u64 {
    now.unwrap_or_else(ctxlab::util::unix_now)
}

fn cmd_pipeline(args: PipelineArgs) -> anyhow::Result<()> {
    let config = config_from(&args.thresholds)?;
    let text = read_input(&args.input)?;
    let input = parse_history_input(&text)
        .map_err(|e| UsageError(format!("{}: {e}", args.input.display())))?;
    std::fs::create_dir_all(&args.workspace)
        .with_context(|| format!("cannot create workspace {}", args.workspace.display()))?;
    let report = pipeline_report(
        input,
        &args.workspace,
        config,
        now_secs(args.now),
        args.summary_text.as_deref(),
    )
    .context("the pipeline could not write to the workspace")?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

fn cmd_replay(args: ReplayArgs) -> anyhow::Result<()> {
    let config = config_from(&args.thresholds)?;
    let text = read_input(&args.file)?;
    let session =
        parse_session(&text).map_err(|e| UsageError(format!("{}: {e}", args.file.display())))?;
    std::fs::create_dir_all(&args.workspace)
        .with_context(|| format!("cannot create workspace {}", args.workspace.display()))?;
    let store = ctxlab::store::Store::new(&args.workspace);
    let options = ReplayOptions {
        config,
        summary_text: args.summary_text,
        now_secs: now_secs(args.now),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match run_replay(session, &store, &options, args.json, &mut out) {
        Ok(_) => Ok(()),
        Err(ReplayCommandError::Output(e)) => Err(e).context("cannot write to stdout"),
        Err(e) => Err(e.into()),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn cmd_run(args: RunArgs) -> anyhow::Result<()> {
    let launch = prepare(&args.agent.launch_options()).map_err(|e| UsageError(e.to_string()))?;
    let prompt = match (args.prompt, launch.scenario_request.clone()) {
        (Some(p), _) => p,
        (None, Some(p)) => p,
        (None, None) => {
            return Err(UsageError("a prompt is needed: ctxlab run \"...\"".into()).into());
        }
    };
    for notice in &launch.notices {
        eprintln!("{notice}");
    }
    let rt = runtime()?;
    let outcome = rt.block_on(async move {
        let (commands, mut events, handle) = ctxlab::agent::spawn(launch.setup);
        let mut stdout = std::io::stdout();
        let outcome = ctxlab::commands::run::run_headless(
            prompt,
            &commands,
            &mut events,
            args.json,
            &mut stdout,
        )
        .await;
        let _ = handle.await;
        outcome
    })?;
    if outcome.stop_reason == Some(ctxlab::agent::StopReason::Error) {
        anyhow::bail!("the run ended with an error");
    }
    Ok(())
}

/// How `/restart` prepares a fresh agent: the same flags; for the scripted model a fresh
/// copy of the demo project (the workspace the tour writes into starts clean), for a real
/// provider the same workspace with a new conversation.
fn restarter(options: LaunchOptions, scripted: bool) -> ctxlab::tui::run::Restarter {
    let mut options = options;
    if scripted {
        options.workspace = None;
    }
    ctxlab::tui::run::Restarter(std::sync::Arc::new(move || {
        let launch = prepare(&options).map_err(|e| e.to_string())?;
        Ok(ctxlab::tui::run::FreshAgent {
            setup: launch.setup,
            label: launch.label,
            notices: launch.notices,
            request: launch.scenario_request,
        })
    }))
}

fn cmd_workbench(args: AgentArgs, step: bool) -> anyhow::Result<()> {
    let mut launch = prepare(&args.launch_options()).map_err(|e| UsageError(e.to_string()))?;
    // Paused before the first stage or model call: the agent says so as it starts.
    launch.setup.step_mode = step;
    // Logs go to a file: nothing may reach stdout or stderr while the TUI owns the screen.
    let _log_guard = ctxlab::tui::init_file_logging();
    for notice in &launch.notices {
        tracing::info!("{notice}");
    }
    let options = ctxlab::tui::TuiOptions {
        workspace: launch.setup.workspace.root().to_path_buf(),
        provider_label: launch.label.clone(),
        config: launch.setup.config,
        no_color: ctxlab::tui::no_color_from_env(),
        notices: launch.notices.clone(),
        legend_marker: ctxlab::tui::run::legend_marker(),
        restart: Some(restarter(
            args.launch_options(),
            launch.scenario_request.is_some(),
        )),
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let (commands, events, handle) = ctxlab::agent::spawn(launch.setup);
        if let Some(request) = launch.scenario_request {
            // A first run always shows something real: the scenario starts by itself.
            let _ = commands.send(ctxlab::agent::UserCommand::Submit(request));
        }
        let result = ctxlab::tui::run(options, events, commands.clone()).await;
        let _ = commands.send(ctxlab::agent::UserCommand::Quit);
        handle.abort();
        result
    })
    .context("the workbench stopped with an error")?;
    Ok(())
}
