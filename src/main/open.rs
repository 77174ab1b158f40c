//! `ctxlab open`: the workbench on the sessions browser, or on one session file. Reading
//! sessions is not a run: no tour starts, no demo workspace is made in the data dir, the
//! agent's start-up notices are not shown and nothing is recorded (docs/architecture.md).

use std::process::ExitCode;

use anyhow::Context;

use crate::cli;
use crate::cmd_workbench;

/// `ctxlab open [PATH]`: the workbench on the sessions browser. A path that cannot be read
/// is an error before the screen is taken; a folder inside it that cannot be read is a row.
pub(crate) fn cmd_open(args: cli::OpenArgs) -> anyhow::Result<ExitCode> {
    let sessions = match args.path {
        None => ctxlab::tui::run::OpenSessions::Browse(Vec::new()),
        Some(path) => {
            let meta = std::fs::metadata(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            if meta.is_dir() {
                ctxlab::tui::run::OpenSessions::Browse(vec![path])
            } else if let Some(what) = ctxlab::session::open::not_regular(meta.file_type()) {
                // Said before the screen is taken: a device or a FIFO is never read.
                anyhow::bail!(
                    "{}: not a session file: it is {what}; only regular files are read",
                    path.display()
                );
            } else {
                ctxlab::tui::run::OpenSessions::File(path)
            }
        }
    };
    let mut agent = args.agent;
    let _idle_workspace = idle_workspace(&mut agent)?;
    cmd_workbench(agent, false, Some(sessions), None)
}

/// Reading or following sessions needs no demo: the agent idles in a folder removed at
/// exit, so `open` and `watch` leave nothing in the data dir (no `workspaces/tour-*`, no
/// recording). None when `--workspace` names one.
pub(crate) fn idle_workspace(
    agent: &mut cli::AgentArgs,
) -> anyhow::Result<Option<tempfile::TempDir>> {
    if agent.workspace.is_some() {
        return Ok(None);
    }
    let dir = tempfile::Builder::new()
        .prefix("ctxlab-open-")
        .tempdir()
        .context("cannot create a temporary workspace")?;
    agent.workspace = Some(dir.path().to_path_buf());
    Ok(Some(dir))
}
