//! `ctxlab watch` and `ctxlab statusline` for the binary: which session is followed and
//! why, the workbench's live view on a terminal, the readable lines (`--text`, or stdout
//! not a terminal) and the JSON follower with their exits (Ctrl-C: 0; stdout closed: 0,
//! quietly), and the status line (always exit 0).

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use ctxlab::commands::watch::{WatchEnd, watch_json};
use ctxlab::commands::watch_text::watch_text;
use ctxlab::process::{TerminationSignals, output_closed, signal_exit_code};
use ctxlab::session::watch::{Chosen, FollowOptions, choose_path, newest_for_cwd};

use crate::UsageError;
use crate::cli::{StatuslineArgs, WatchArgs};

/// Bytes of status JSON read from stdin at most.
const MAX_STATUS_INPUT_BYTES: u64 = 1 << 20;
/// How long the status line waits for its JSON on stdin.
const STATUS_INPUT_DEADLINE: Duration = Duration::from_secs(2);

/// The session to follow: the file named, else the newest session of the current folder.
/// With none yet, waits for the first (`wait_for_first_session`): `watch` can be started
/// before the agent. None: the user quit while waiting.
fn chosen_session(args: &WatchArgs, poll: Duration) -> anyhow::Result<Option<Chosen>> {
    match &args.path {
        Some(path) => choose_path(path)
            .map(Some)
            .map_err(|e| UsageError(e.to_string()).into()),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| UsageError(format!("cannot read the current folder: {e}")))?;
            let roots = ctxlab::session::discover::default_roots();
            match newest_for_cwd(&cwd, &roots) {
                Ok(chosen) => Ok(Some(chosen)),
                // No folder to look in (no HOME, CLAUDE_CONFIG_DIR nor CODEX_HOME): no
                // session can ever appear.
                Err(e) if roots.is_empty() => Err(UsageError(e.to_string()).into()),
                Err(e) => wait_for_first_session(&cwd, &roots, poll, &e.to_string()),
            }
        }
    }
}

/// Looks for the first session of `cwd` every `poll` until there is one, saying so once
/// on stderr (`none`: why there is none yet). On a terminal, q, Esc or Ctrl-C quits (None);
/// elsewhere the signal watcher ends the process.
fn wait_for_first_session(
    cwd: &std::path::Path,
    roots: &[ctxlab::session::discover::Root],
    poll: Duration,
    none: &str,
) -> anyhow::Result<Option<Chosen>> {
    let keys = std::io::stdin().is_terminal();
    // `none` names the folders looked in: a file name can hold escape sequences.
    say!("ctxlab: {none}");
    say!(
        "ctxlab: waiting for the first session of this folder ({} quits)",
        if keys { "q or Ctrl-C" } else { "Ctrl-C" }
    );
    let quit_keys = if keys {
        Some(
            ctxlab::tui::terminal::QuitKeys::start()
                .map_err(|e| anyhow::anyhow!("cannot read keys while waiting: {e}"))?,
        )
    } else {
        None
    };
    // Keys are read four times a second; the folders are looked at every `poll`.
    let tick = poll.min(Duration::from_millis(250));
    let mut last_look = std::time::Instant::now();
    loop {
        match &quit_keys {
            Some(k) if k.pressed(tick)? => return Ok(None),
            Some(_) => {}
            None => std::thread::sleep(tick),
        }
        if last_look.elapsed() >= poll {
            last_look = std::time::Instant::now();
            if let Ok(chosen) = newest_for_cwd(cwd, roots) {
                return Ok(Some(chosen));
            }
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
    let options = FollowOptions {
        poll: Duration::from_millis(args.poll_ms.clamp(10, 60_000)),
        notify: !args.no_notify,
    };
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let workbench = !args.json && !args.text && terminal;
    if !workbench {
        // Before any wait for the first session: Ctrl-C ends that wait too.
        exit_on_signal_or_closed_stdout();
    }
    let Some(chosen) = chosen_session(&args, options.poll.max(Duration::from_millis(200)))? else {
        return Ok(ExitCode::SUCCESS);
    };
    let bell = bell_setting(args.no_bell);
    if workbench {
        // The workbench's live view (docs/architecture.md, "Following a session"); its
        // own loop handles signals and restores the terminal.
        let live = ctxlab::tui::live::LiveOptions::new(bell)
            .waiting(options.poll, options.notify)
            .at_risk_within(Some(args.at_risk_within))
            .following(chosen);
        let mut agent = crate::cli::AgentArgs::default();
        let _idle_workspace = crate::open::idle_workspace(&mut agent)?;
        return crate::cmd_workbench(agent, false, None, Some(live));
    }
    let stop = AtomicBool::new(false);
    if !args.json {
        // Readable lines (`--text`, or stdout is not a terminal).
        // `watch_text` sanitizes each line itself, so its bell reaches the terminal.
        let mut out = std::io::stdout().lock();
        return match watch_text(
            chosen,
            bell,
            Some(args.at_risk_within),
            &options,
            &stop,
            &mut out,
        ) {
            WatchEnd::Stopped | WatchEnd::Closed => Ok(ExitCode::SUCCESS),
            WatchEnd::Failed(e) => Err(anyhow::Error::new(e).context("cannot follow the session")),
        };
    }
    let mut out = std::io::stdout().lock();
    let mut err = ctxlab::sanitize::SanitizingWriter::new(std::io::stderr().lock());
    match watch_json(
        chosen,
        args.from_start,
        Some(args.at_risk_within),
        &options,
        &stop,
        &mut out,
        &mut err,
    ) {
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

pub(crate) fn cmd_statusline(args: &StatuslineArgs) -> ExitCode {
    let max_width = args.max_width.map(usize::from).unwrap_or_else(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|c| *c > 0)
            .unwrap_or(ctxlab::commands::statusline::DEFAULT_WIDTH)
    });
    let data_dir = ctxlab::session::discover::ctxlab_data_dir();
    let options = ctxlab::commands::statusline::StatusOptions {
        max_width,
        data_dir: data_dir.as_deref(),
        settings: ctxlab::session::watch::threshold::AgentSettings::read(),
        at_risk_within: None,
    };
    let line = match read_status_input(std::io::stdin(), STATUS_INPUT_DEADLINE) {
        Ok(input) => ctxlab::commands::statusline::status_line(&input, &options),
        Err(why) => format!("ctxlab: no status ({why})"),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// Reads Claude Code's status JSON: done as soon as what was read parses (a stdin that is
/// never closed does not hold the status line), at most `MAX_STATUS_INPUT_BYTES`, and given
/// up after `deadline`. The reading thread may stay blocked on a silent stdin; the process
/// exits without it.
fn read_status_input(
    stdin: impl Read + Send + 'static,
    deadline: Duration,
) -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<Vec<u8>>>();
    let spawned = std::thread::Builder::new()
        .name("statusline-stdin".into())
        .spawn(move || {
            let mut stdin = stdin.take(MAX_STATUS_INPUT_BYTES);
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.send(Ok(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        return Err(format!("cannot read stdin: {e}"));
    }
    let until = std::time::Instant::now() + deadline;
    let mut input = Vec::new();
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(chunk)) => {
                input.extend_from_slice(&chunk);
                if serde_json::from_slice::<serde::de::IgnoredAny>(&input).is_ok() {
                    break;
                }
            }
            Ok(Err(e)) => return Err(format!("cannot read stdin: {e}")),
            // Closed: what was read is all there is.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "stdin gave no complete status JSON within {} s",
                    deadline.as_secs()
                ));
            }
        }
    }
    Ok(String::from_utf8_lossy(&input).into_owned())
}
