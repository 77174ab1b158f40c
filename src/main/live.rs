//! The commands that run an agent: `ctxlab run` (headless, one request, lines or JSON) and
//! the workbench; the async runtime both start, and what `/restart` prepares.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use ctxlab::agent::StopReason;
use ctxlab::commands::run::{RunningAgent, SessionEnd, run_session};
use ctxlab::process::{TerminationSignals, output_closed, signal_exit_code};
use ctxlab::startup::{LaunchOptions, prepare};
use ctxlab::tools::kill_running_process_groups;
use ctxlab::tui::TuiExit;

use crate::cli::{AgentArgs, RunArgs};
use crate::errors::{UsageError, launch_error};
use crate::{recording, watch};

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// How long the runtime's shutdown waits for blocking work (a file tool mid-read) before
/// the process exits anyway.
pub(crate) const RUNTIME_SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

pub(crate) fn cmd_run(args: RunArgs) -> anyhow::Result<ExitCode> {
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
        let events = recording::recorded(events, recording::FrontEnd::Run, |line| {
            say!("ctxlab: {line}")
        });
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
pub(crate) fn restarter(options: LaunchOptions, scripted: bool) -> ctxlab::tui::run::Restarter {
    let mut options = options;
    if scripted {
        options.workspace = None;
    }
    ctxlab::tui::run::Restarter(std::sync::Arc::new(move |record| {
        let launch = prepare(&options)
            .map_err(|e| ctxlab::tui::run::RestartError::Setup(e.to_string().into()))?;
        Ok(ctxlab::tui::run::FreshAgent {
            // A restart is a new session, recorded in a file of its own.
            record: record
                .then(|| {
                    recording::start_recording(recording::FrontEnd::Workbench)
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
        // A first run always shows something real: the scenario starts by itself, once the
        // first-run legend is closed (not under `ctxlab open`: the session opened is what
        // is to be seen).
        request: launch
            .scenario_request
            .clone()
            .filter(|_| !browsing && !following),
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
            recording::recorded(events, recording::FrontEnd::Workbench, |line| {
                tracing::info!("{line}")
            })
        };
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
