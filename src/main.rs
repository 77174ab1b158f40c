//! The `ctxlab` binary: parses flags and picks a front end. Everything else is in the
//! library; this file only adds context to errors and chooses exit codes.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use ctxlab::agent::StopReason;
use ctxlab::commands::export::{export_page, write_page};
use ctxlab::commands::pipeline::{HistoryInput, check_history, write_pipeline_report};
use ctxlab::commands::replay::{ReplayCommandError, run_replay, run_replay_stream};
use ctxlab::commands::run::{RunningAgent, SessionEnd, run_session};
use ctxlab::compact::{PipelineConfig, Strategy};
use ctxlab::pipeline_replay::ReplayOptions;
use ctxlab::process::{TerminationSignals, output_closed, signal_exit_code};
use ctxlab::session::{
    HistoryStream, LoadWarning, LoadedHistory, OpenedHistory, SessionError, load_history,
    open_history,
};
use ctxlab::startup::{LaunchOptions, prepare};
use ctxlab::tools::kill_running_process_groups;
use ctxlab::tui::TuiExit;

// The flags live in their own file; `main/` holds the binary-only modules.
#[path = "main/cli.rs"]
mod cli;
#[path = "main/watch.rs"]
mod watch;
use cli::*;
#[path = "main/open.rs"]
mod open;
#[path = "main/recording.rs"]
mod recording;
use open::cmd_open;

/// A line on stderr, through the sanitizer: it may quote file names, file content and
/// server text.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", ctxlab::sanitize::sanitize(&format!($($arg)*)))
    };
}

// The commands that read session files and print what they find.
#[path = "main/fork.rs"]
mod fork;
#[path = "main/lookups.rs"]
mod lookups;
use lookups::stdout_for;
#[path = "main/proxy.rs"]
mod proxy;

/// A failure the user caused (bad file, bad flag): exit 2 with one line. Failures of the
/// system (a folder that cannot be made, a copy that fails) exit 1.
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
    // ctxlab starts no children but the tools', so every orphan it adopts is one to end.
    ctxlab::process::adopt_orphans();
    // The provider keys are in our environment: a tool's shell must not read it from /proc.
    ctxlab::process::keep_environment_private();
    let result = session_cap().and_then(|()| match cli.command {
        Some(Command::Run(args)) => cmd_run(args),
        Some(Command::Pipeline(args)) => cmd_pipeline(args),
        Some(Command::Replay(args)) => cmd_replay(args),
        Some(Command::Export(args)) => cmd_export(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Inspect(args)) => lookups::cmd_inspect(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Forgot(args)) => lookups::cmd_forgot(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Sessions(args)) => lookups::cmd_sessions(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Open(args)) => cmd_open(args),
        Some(Command::Watch(args)) => watch::cmd_watch(args),
        Some(Command::Statusline(args)) => Ok(watch::cmd_statusline(&args)),
        Some(Command::Proxy(args)) => proxy::cmd_proxy(args),
        Some(Command::Fork(args)) => fork::cmd_fork(args).map(|()| ExitCode::SUCCESS),
        None => cmd_workbench(cli.agent, cli.step, None, None),
    });
    match result {
        Ok(code) => code,
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
                say!("ctxlab: {usage}");
                ExitCode::from(2)
            } else {
                say!("ctxlab: {}", error_text(&e));
                ExitCode::FAILURE
            }
        }
    }
}

/// The cap on one session file: `CTXLAB_MAX_SESSION_BYTES`, else `max_session_bytes` in
/// config.toml (a config file that does not load is reported by the commands that need
/// it, not here), else the default.
fn session_cap() -> anyhow::Result<()> {
    let bytes = match std::env::var("CTXLAB_MAX_SESSION_BYTES") {
        Ok(v) => Some(v.trim().parse::<u64>().map_err(|_| {
            UsageError(format!(
                "CTXLAB_MAX_SESSION_BYTES={v}: expected a number of bytes"
            ))
        })?),
        Err(_) => ctxlab::user_config::config_file_path()
            .filter(|p| p.is_file())
            .and_then(|p| ctxlab::user_config::load_file_settings(&p).ok())
            .and_then(|s| s.max_session_bytes),
    };
    if let Some(bytes) = bytes {
        ctxlab::session::open::set_max_file_bytes(bytes);
    }
    Ok(())
}

/// The error and its causes on one line, each said once: an error that already quotes its
/// source (`cannot create X: File exists (os error 17)`) is not followed by the source again.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// A launch error, exiting 2 when the user's input is at fault and 1 otherwise.
fn launch_error(e: ctxlab::startup::LaunchError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

fn config_from(strategy: Strategy, thresholds: &Thresholds) -> anyhow::Result<PipelineConfig> {
    let mut config = PipelineConfig::for_strategy(strategy);
    config
        .apply_assignments(thresholds.set.iter().map(String::as_str))
        .map_err(|e| UsageError(format!("--set {e}")))?;
    Ok(config)
}

/// Why a session file could not be loaded, with the exit code it deserves: a file that
/// does not exist or does not parse is the user's mistake (2), one that exists but cannot
/// be read (a folder, no permission) an I/O failure (1). Every command that reads a
/// session says it the same way.
fn session_error(path: &Path, e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Read(io) if io.kind() != std::io::ErrorKind::NotFound => {
            anyhow::Error::new(io).context(format!("{}: cannot read", path.display()))
        }
        // Named, but not a file to read (a folder, a FIFO, a device): bad input, exit 2.
        e @ SessionError::NotRegular("a folder") => UsageError(format!(
            "{}: {e} (`ctxlab sessions {}` lists the sessions in a folder)",
            path.display(),
            path.display()
        ))
        .into(),
        e => UsageError(format!("{}: {e}", path.display())).into(),
    }
}

/// Any session file as the conversation the pipeline works on; warnings go to stderr. A
/// file that does not exist or does not parse is the user's mistake (exit 2); a file that
/// exists but cannot be read is an I/O failure (exit 1).
fn load_input(path: &Path) -> anyhow::Result<LoadedHistory> {
    let loaded = load_history(path).map_err(|e| session_error(path, e))?;
    print_warnings(path, &loaded.warnings);
    Ok(loaded)
}

/// A loaded session's warnings on stderr: the first five, then how many more.
fn print_warnings(path: &Path, warnings: &[LoadWarning]) {
    for w in warnings.iter().take(5) {
        say!("ctxlab: {}: line {}: {}", path.display(), w.line, w.message);
    }
    if warnings.len() > 5 {
        say!(
            "ctxlab: {}: {} more warnings (ctxlab inspect lists them)",
            path.display(),
            warnings.len() - 5
        );
    }
}

fn now_secs(now: Option<u64>) -> u64 {
    now.unwrap_or_else(ctxlab::util::unix_now)
}

/// Creates the workspace of `pipeline` / `replay` and removes the temp files a killed run
/// left in its store folders.
fn prepare_workspace(workspace: &Path) -> anyhow::Result<()> {
    if std::fs::metadata(workspace).is_ok_and(|m| !m.is_dir()) {
        return Err(UsageError(format!(
            "--workspace {}: it exists and is not a folder",
            workspace.display()
        ))
        .into());
    }
    std::fs::create_dir_all(workspace)
        .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
    ctxlab::store::Store::new(workspace).remove_stale_temp_files();
    Ok(())
}

fn cmd_pipeline(args: PipelineArgs) -> anyhow::Result<ExitCode> {
    let config = config_from(args.strategy, &args.thresholds)?;
    let loaded = load_input(&args.input)?;
    let warnings = check_history(&loaded.messages)
        .map_err(|e| UsageError(format!("{}: {e}", args.input.display())))?;
    for warning in warnings {
        say!("ctxlab: warning: {}: {warning}", args.input.display());
    }
    let input = HistoryInput {
        messages: loaded.messages,
        active_request: loaded.active_request,
    };
    prepare_workspace(&args.workspace)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_pipeline_report(
        input,
        &args.workspace,
        config,
        args.now,
        args.summary_text.as_deref(),
        &mut out,
    )
    .and_then(|()| {
        out.write_all(b"\n")?;
        out.flush()?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if !args.compare.is_empty() {
        return cmd_compare(args).map(|()| ExitCode::SUCCESS);
    }
    let mut config = config_from(args.strategy, &args.thresholds)?;
    let mut recorded = Vec::new();
    // A message array is replayed while it is parsed; other formats are read whole.
    let session = match open_history(&args.file).map_err(|e| session_error(&args.file, e))? {
        OpenedHistory::Streamed(stream) => ReplaySource::Streamed(stream),
        OpenedHistory::Loaded(loaded) => {
            print_warnings(&args.file, &loaded.warnings);
            let loaded = loaded
                .require_conversation()
                .map_err(|e| session_error(&args.file, e))?;
            config = recording::recorded_config(config, loaded.recorded_config, &args.thresholds);
            recorded = loaded.recorded;
            ReplaySource::Whole(loaded.messages)
        }
    };
    let workspace = args
        .workspace
        .ok_or_else(|| UsageError("replay needs --workspace DIR".into()))?;
    prepare_workspace(&workspace)?;
    // The source still exists: no sync per file, one at the end (docs/pipeline.md).
    let store = ctxlab::store::Store::new(&workspace).without_sync();
    let options = ReplayOptions {
        config,
        summary_text: args.summary_text,
        summarizer: None,
        now_secs: now_secs(args.now),
        recorded,
    };
    let mut out = stdout_for(args.json);
    let replayed = match session {
        ReplaySource::Whole(messages) => {
            run_replay(messages, &store, &options, args.json, &mut out).map(|_| ())
        }
        ReplaySource::Streamed(stream) => {
            run_replay_stream(stream, &store, &options, args.json, &mut out)
                .map(|(_, warnings)| print_warnings(&args.file, &warnings))
        }
    };
    // No sync at all: the source still exists and a sync of the file system waits for
    // every other writer's data too (docs/pipeline.md, "Replay").
    match replayed {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ReplayCommandError::Output(e)) => Err(e).context("cannot write to stdout"),
        Err(ReplayCommandError::Input(e)) => Err(session_error(&args.file, e)),
        Err(e) => Err(e.into()),
    }
}

/// What `ctxlab replay` replays: a file read whole, or a message array as it is parsed.
enum ReplaySource {
    Whole(Vec<ctxlab::message::Message>),
    Streamed(HistoryStream),
}

fn cmd_export(args: ExportArgs) -> anyhow::Result<()> {
    let config = config_from(args.strategy, &args.thresholds)?;
    // The session loader: the one `ctxlab replay` uses.
    let loaded = load_input(&args.session)?
        .require_conversation()
        .map_err(|e| session_error(&args.session, e))?;
    let config = recording::recorded_config(config, loaded.recorded_config, &args.thresholds);
    let recorded = loaded.recorded;
    let recorded_run = loaded.recorded_run;
    let session = loaded.messages;
    let name = args
        .session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.session.display().to_string());
    let root = args
        .session
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let options = ReplayOptions {
        config,
        summary_text: args.summary_text,
        summarizer: None,
        now_secs: now_secs(args.now),
        recorded,
    };
    let (page, totals) = export_page(&name, session, Some(recorded_run.as_ref()), root, &options)?;
    write_page(&args.out, &page, &[&args.session])?;
    say!(
        "wrote {} ({} model calls, {} bytes)",
        args.out.display(),
        totals.calls,
        page.len()
    );
    Ok(())
}

/// `replay --compare`: one empty workspace per strategy (DIR/NAME, or a temporary folder
/// removed afterwards), then the comparison.
fn cmd_compare(args: ReplayArgs) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    let temp = match &args.workspace {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("cannot create a temporary workspace")?),
    };
    let base = match (&args.workspace, &temp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(t)) => t.path().to_path_buf(),
        (None, None) => return Err(UsageError("replay needs --workspace DIR".into()).into()),
    };
    for (i, &strategy) in args.compare.iter().enumerate() {
        if args.compare[..i].contains(&strategy) {
            return Err(UsageError(format!("--compare names {strategy} twice")).into());
        }
        let config = config_from(strategy, &args.thresholds)?;
        let dir = base.join(strategy.name());
        if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(UsageError(format!(
                "{} is not empty; --compare replays each strategy on an empty workspace",
                dir.display()
            ))
            .into());
        }
        prepare_workspace(&dir)?;
        runs.push((config, ctxlab::store::Store::new(&dir).without_sync()));
    }
    let loaded = load_input(&args.file)?;
    for (config, _) in &mut runs {
        *config = recording::recorded_config(*config, loaded.recorded_config, &args.thresholds);
    }
    let session = loaded.messages;
    let options = ctxlab::compare::RunOptions {
        summary_text: args.summary_text,
        now_secs: now_secs(args.now),
        detail: false,
        recorded: loaded.recorded,
    };
    let mut out = stdout_for(args.json);
    let compared =
        ctxlab::commands::compare::run_compare(&session, &runs, &options, args.json, &mut out);
    match compared {
        Ok(_) => Ok(()),
        Err(ctxlab::commands::compare::CompareError::Output(e)) => {
            Err(e).context("cannot write to stdout")
        }
        Err(e) => Err(e.into()),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// How long the runtime's shutdown waits for blocking work (a file tool mid-read) before
/// the process exits anyway.
const RUNTIME_SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

fn cmd_run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let launch = prepare(&args.agent.launch_options()).map_err(launch_error)?;
    let prompts = match (args.prompts.is_empty(), launch.scenario_request.clone()) {
        (false, _) => args.prompts,
        (true, Some(p)) => vec![p],
        (true, None) => {
            return Err(UsageError("a prompt is needed: ctxlab run \"...\"".into()).into());
        }
    };
    let steps = prompts
        .iter()
        .map(|p| ctxlab::commands::run::HeadlessStep::parse(p))
        .collect();
    for notice in &launch.notices {
        say!("{notice}");
    }
    let rt = runtime()?;
    let end = rt.block_on(async move {
        let mut signals = TerminationSignals::install().context("cannot handle signals")?;
        let (commands, events, handle) = ctxlab::agent::spawn(launch.setup);
        let events = recording::recorded(events, "run", |line| say!("ctxlab: {line}"));
        let agent = RunningAgent {
            commands,
            events,
            handle,
        };
        let closed = output_closed(std::io::stdout());
        let mut stdout: Box<dyn Write> = if args.json {
            Box::new(std::io::stdout())
        } else {
            Box::new(ctxlab::sanitize::SanitizingWriter::new(std::io::stdout()))
        };
        let end = run_session(
            steps,
            agent,
            args.json,
            &mut stdout,
            async move {
                // A dropped watcher (no thread) never resolves: the next write notices.
                if closed.await.is_err() {
                    std::future::pending::<()>().await;
                }
            },
            signals.recv(),
        )
        .await?;
        anyhow::Ok(end)
    });
    // Whatever ended the run, no tool process group outlives it.
    kill_running_process_groups();
    rt.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    match end? {
        SessionEnd::Finished(outcome) => match outcome.stop_reason {
            Some(StopReason::Error) => {
                let cause = outcome
                    .last_error
                    .unwrap_or_else(|| "no error message".to_string());
                anyhow::bail!("the run ended with an error: {cause}")
            }
            Some(_) => Ok(ExitCode::SUCCESS),
            None => anyhow::bail!("the agent stopped before the turn ended"),
        },
        // Nobody reads any more: a reader that had enough, not a failure.
        SessionEnd::OutputClosed => Ok(ExitCode::SUCCESS),
        SessionEnd::Signal(signo) => Ok(ExitCode::from(signal_exit_code(signo))),
    }
}

/// How `/restart` prepares a fresh agent: the same flags; for the scripted model a fresh
/// copy of the demo project (the workspace the tour writes into starts clean), for a real
/// provider the same workspace with a new conversation.
fn restarter(options: LaunchOptions, scripted: bool) -> ctxlab::tui::run::Restarter {
    let mut options = options;
    if scripted {
        options.workspace = None;
    }
    ctxlab::tui::run::Restarter(std::sync::Arc::new(move |record| {
        let launch = prepare(&options).map_err(|e| e.to_string())?;
        Ok(ctxlab::tui::run::FreshAgent {
            // A restart is a new session, recorded in a file of its own.
            record: record
                .then(|| {
                    recording::start_recording("workbench")
                        .inspect_err(|why| tracing::warn!("not recording this session: {why}"))
                        .ok()
                })
                .flatten(),
            setup: launch.setup,
            label: launch.label,
            notices: launch.notices,
            request: launch.scenario_request,
        })
    }))
}

/// The workbench; `live`: the settings for following a session and, for `ctxlab watch`,
/// the session to follow at once (None: the bell as config.toml says, nothing followed).
pub(crate) fn cmd_workbench(
    args: AgentArgs,
    step: bool,
    sessions: Option<ctxlab::tui::run::OpenSessions>,
    live: Option<ctxlab::tui::live::LiveOptions>,
) -> anyhow::Result<ExitCode> {
    let live =
        live.unwrap_or_else(|| ctxlab::tui::live::LiveOptions::new(watch::bell_setting(false)));
    let following = live.follows();
    let browsing = sessions.is_some();
    // Reading or following sessions calls no model: no provider setting is looked up, so
    // a wrong one does not stop the workbench from opening.
    let launch = if browsing || following {
        ctxlab::startup::reading::prepare_reader(&args.launch_options())
    } else {
        prepare(&args.launch_options())
    };
    let mut launch = launch.map_err(launch_error)?;
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
        // Under `ctxlab open` and `ctxlab watch` the agent's notices (no API key, the demo)
        // are not the point: the session read or followed is.
        notices: launch
            .notices
            .clone()
            .into_iter()
            .filter(|_| !browsing && !following)
            .collect(),
        // The legend explains the panes; the live view of `ctxlab watch` covers them.
        legend_marker: ctxlab::tui::run::legend_marker().filter(|_| !following),
        sessions: sessions.clone(),
        restart: Some(restarter(
            args.launch_options(),
            launch.scenario_request.is_some(),
        )),
    };
    let rt = runtime()?;
    let result = rt.block_on(async move {
        let (commands, events, handle) = ctxlab::agent::spawn(launch.setup);
        // Reading sessions and following another agent's are not sessions of their own to
        // record.
        let events = if browsing || following {
            events
        } else {
            recording::recorded(events, "workbench", |line| tracing::info!("{line}"))
        };
        if let Some(request) = launch
            .scenario_request
            .filter(|_| sessions.is_none() && !following)
        {
            // A first run always shows something real: the scenario starts by itself
            // (not under `ctxlab open`: the session opened is what is to be seen).
            let _ = commands.send(ctxlab::agent::UserCommand::Submit(request));
        }
        let result = ctxlab::tui::run::run_following(options, live, events, commands.clone()).await;
        let _ = commands.send(ctxlab::agent::UserCommand::Quit);
        handle.abort();
        result
    });
    // The terminal is restored by now; no bash tool may keep running without us.
    kill_running_process_groups();
    rt.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    match result.context("the workbench stopped with an error")? {
        TuiExit::Quit => Ok(ExitCode::SUCCESS),
        TuiExit::Signal(signo) => Ok(ExitCode::from(signal_exit_code(signo))),
    }
}
