//! `ctxlab watch` and `ctxlab statusline` for the binary: which session is followed and
//! why, the workbench's live view on a terminal, the readable lines (`--text`, or stdout
//! not a terminal) and the JSON follower with their exits (Ctrl-C: 0; stdout closed: 0,
//! quietly), and the status line (always exit 0).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use ctxlab::commands::watch::{WatchEnd, watch_json};
use ctxlab::commands::watch_text::watch_text;
use ctxlab::process::{TerminationSignals, output_closed, signal_exit_code};
use ctxlab::session::watch::{Chosen, FollowOptions, choose_path, newest_for_cwd};

use crate::UsageError;
use crate::cli::WatchArgs;

fn chosen_session(args: &WatchArgs) -> anyhow::Result<Chosen> {
    match &args.path {
        Some(path) => choose_path(path).map_err(|e| UsageError(e).into()),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| UsageError(format!("cannot read the current folder: {e}")))?;
            let roots = ctxlab::session::discover::default_roots();
            newest_for_cwd(&cwd, &roots).map_err(|e| UsageError(e).into())
        }
    }
}

/// Whether a compaction seen while following rings the bell: `--no-bell`, else
/// `bell_on_compaction` in config.toml, else yes. A config file that does not load leaves
/// the default (the commands that need the rest of it report it).
pub(crate) fn bell_setting(no_bell: bool) -> bool {
    let settings = ctxlab::user_config::config_file_path()
        .filter(|p| p.is_file())
        .and_then(|p| ctxlab::user_config::load_file_settings(&p).ok());
    ctxlab::user_config::bell_on_compaction(settings.as_ref(), no_bell)
}

pub(crate) fn cmd_watch(args: WatchArgs) -> anyhow::Result<ExitCode> {
    let chosen = chosen_session(&args)?;
    let options = FollowOptions {
        poll: Duration::from_millis(args.poll_ms.clamp(10, 60_000)),
        notify: !args.no_notify,
    };
    let bell = bell_setting(args.no_bell);
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if !args.json && !args.text && terminal {
        // The workbench's live view (docs/architecture.md, "Following a session"); its
        // own loop handles signals and restores the terminal.
        let live = ctxlab::tui::live::LiveOptions::new(bell)
            .waiting(options.poll, options.notify)
            .following(chosen);
        let mut agent = crate::cli::AgentArgs::default();
        let _idle_workspace = crate::open::idle_workspace(&mut agent)?;
        return crate::cmd_workbench(agent, false, None, Some(live));
    }
    exit_on_signal_or_closed_stdout();
    let stop = AtomicBool::new(false);
    if !args.json {
        // Readable lines (`--text`, or stdout is not a terminal).
        // `watch_text` sanitizes each line itself, so its bell reaches the terminal.
        let mut out = std::io::stdout().lock();
        return match watch_text(chosen, bell, &options, &stop, &mut out) {
            WatchEnd::Stopped | WatchEnd::Closed => Ok(ExitCode::SUCCESS),
            WatchEnd::Failed(e) => Err(anyhow::Error::new(e).context("cannot follow the session")),
        };
    }
    let mut out = std::io::stdout().lock();
    let mut err = ctxlab::sanitize::SanitizingWriter::new(std::io::stderr().lock());
    match watch_json(chosen, args.from_start, &options, &stop, &mut out, &mut err) {
        WatchEnd::Stopped | WatchEnd::Closed => Ok(ExitCode::SUCCESS),
        WatchEnd::Failed(e) => Err(anyhow::Error::new(e).context("cannot follow the session")),
    }
}

/// Ends the process when a signal asks (Ctrl-C: 0, as a follow has no other end; SIGTERM
/// and SIGHUP: 128 + the signal) or when stdout's reader goes away (0): the follower may
/// be asleep until the next change of the file, and nothing of its state needs saving.
fn exit_on_signal_or_closed_stdout() {
    let spawned = std::thread::Builder::new()
        .name("watch-exit".into())
        .spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let code = rt.block_on(async {
                let Ok(mut signals) = TerminationSignals::install() else {
                    return None;
                };
                let closed = output_closed(std::io::stdout());
                tokio::select! {
                    signo = signals.recv() => Some(if signo == rustix::process::Signal::INT.as_raw() {
                        0
                    } else {
                        i32::from(signal_exit_code(signo))
                    }),
                    _ = closed => Some(0),
                }
            });
            // Every JSON line is flushed as it is written; `exit` flushes stdout only if no
            // one holds it (the follower holds its lock while it runs).
            if let Some(code) = code {
                std::process::exit(code);
            }
        });
    if spawned.is_err() {
        tracing::warn!("cannot start the signal watcher: Ctrl-C ends the process by default");
    }
}

pub(crate) fn cmd_statusline() -> ExitCode {
    use ctxlab::commands::statusline::{INPUT_DEADLINE, read_input, status_line};
    let input = read_input(std::io::stdin(), INPUT_DEADLINE);
    let line = status_line(&input);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    ExitCode::SUCCESS
}
