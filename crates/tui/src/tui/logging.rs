//! File logging for the TUI: while the TUI owns the terminal nothing may be written to
//! stdout or stderr, so tracing goes to a daily file under the platform data dir
//! (`…/ctxlab/logs/ctxlab.log.<date>`). Owns only the subscriber set-up.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Where the log files go: `<data dir>/logs`, or None when the platform has no home.
pub fn log_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ctxlab").map(|d| d.data_dir().join("logs"))
}

/// Installs a global subscriber writing to the log file. Keep the guard alive until exit
/// (dropping it flushes). None when there is no data dir, it cannot be created, or a
/// subscriber is already installed. `RUST_LOG` filters (default `info`).
pub fn init_file_logging() -> Option<WorkerGuard> {
    let dir = log_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::daily(&dir, "ctxlab.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
