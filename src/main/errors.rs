//! How the binary fails: a one-line error on stderr, exit 2 when the user's input is at
//! fault (`UsageError`) and 1 when the system is; the session loader every command shares,
//! with its warnings; the session-size cap read before any command runs.

use std::path::Path;

use ctxlab::session::{LoadWarning, LoadedHistory, SessionError, load_history};

/// A failure the user caused (bad file, bad flag): exit 2 with one line. Failures of the
/// system (a folder that cannot be made, a copy that fails) exit 1.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The cap on one session file: `CTXLAB_MAX_SESSION_BYTES`, else `max_session_bytes` in
/// config.toml (a config file that does not load is reported by the commands that need
/// it, not here), else the default.
pub(crate) fn session_cap() -> anyhow::Result<()> {
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
pub(crate) fn error_text(e: &anyhow::Error) -> String {
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
pub(crate) fn launch_error(e: ctxlab::startup::LaunchError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

/// Why a session file could not be loaded, with the exit code it deserves: a file that
/// does not exist or does not parse is the user's mistake (2), one that exists but cannot
/// be read (a folder, no permission) an I/O failure (1). Every command that reads a
/// session says it the same way.
pub(crate) fn session_error(path: &Path, e: SessionError) -> anyhow::Error {
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
pub(crate) fn load_input(path: &Path) -> anyhow::Result<LoadedHistory> {
    let loaded = load_history(path).map_err(|e| session_error(path, e))?;
    print_warnings(path, &loaded.warnings);
    Ok(loaded)
}

/// A loaded session's warnings on stderr: the first five, then how many more.
pub(crate) fn print_warnings(path: &Path, warnings: &[LoadWarning]) {
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
