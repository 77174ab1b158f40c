//! The `ctxlab` binary: parses flags and picks a front end. Everything else is in the
//! library; the binary only adds context to errors and chooses exit codes. Its own modules
//! are in `main/`: the flags (`cli`), how it fails (`errors`), the commands that replay a
//! file (`replaying`), the ones that run an agent (`live`), and one file per other command.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::process::ExitCode;

use clap::Parser;

/// A line on stderr, through the sanitizer: it may quote file names, file content and
/// server text.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", ctxlab::sanitize::sanitize(&format!($($arg)*)))
    };
}

#[path = "main/cli.rs"]
mod cli;
#[path = "main/errors.rs"]
mod errors;
#[path = "main/live.rs"]
mod live;
#[path = "main/replaying.rs"]
mod replaying;
// The commands that read session files and print what they find, follow them, or sit
// between an agent and its API.
#[path = "main/fork.rs"]
mod fork;
#[path = "main/lookups.rs"]
mod lookups;
#[path = "main/open.rs"]
mod open;
#[path = "main/proxy.rs"]
mod proxy;
#[path = "main/recording.rs"]
mod recording;
#[path = "main/watch.rs"]
mod watch;

use cli::{Cli, Command};
use errors::{UsageError, error_text, session_cap};
// The names the command modules reach through `crate::`.
use errors::session_error;
use live::{RUNTIME_SHUTDOWN_GRACE, cmd_workbench, runtime};
use lookups::stdout_for;
use replaying::{config_from, now_secs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // ctxlab starts no children but the tools', so every orphan it adopts is one to end.
    ctxlab::process::adopt_orphans();
    // The provider keys are in our environment: a tool's shell must not read it from /proc.
    ctxlab::process::keep_environment_private();
    let result = session_cap().and_then(|()| match cli.command {
        Some(Command::Run(args)) => live::cmd_run(args),
        Some(Command::Pipeline(args)) => replaying::cmd_pipeline(args),
        Some(Command::Replay(args)) => replaying::cmd_replay(args),
        Some(Command::Export(args)) => replaying::cmd_export(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Inspect(args)) => lookups::cmd_inspect(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Forgot(args)) => lookups::cmd_forgot(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Sessions(args)) => lookups::cmd_sessions(args).map(|()| ExitCode::SUCCESS),
        Some(Command::Open(args)) => open::cmd_open(args),
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
