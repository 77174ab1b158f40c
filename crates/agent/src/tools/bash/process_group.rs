//! The `bash` tool's process handling on Unix: the shell starts in a new session (so it
//! has no controlling terminal and leads its own process group), its pipes are read within
//! the output cap, and the whole group gets SIGKILL on timeout, on cancellation, when the
//! future is dropped and right after the shell exits, so no background job or pipeline
//! member outlives the call. Validation and the deny-list happen before, in `bash.rs`.
//! Running groups are also registered process-wide, so that a front end that receives
//! SIGTERM, SIGHUP or SIGINT can kill them all before it exits
//! ([`kill_running_process_groups`]). The child's environment lacks the variables
//! `ToolLimits::child_env` removes (provider keys, `*_API_KEY`, `*_TOKEN`, `*_SECRET`).
//! Every kill of a group is followed by a sweep for the processes that left it
//! (`descendants.rs`).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::EXIT_CODE_PREFIX;
use super::descendants;
use crate::tools::output::{CappedText, LossyDecoder, push_line, truncation_note};
use crate::tools::{ToolError, ToolLimits, ToolOutcome};

/// How long to keep reading the pipes after the shell exited and its group was killed. Only a
/// process the sweep could not reach (on macOS, one that left the group) can still hold them
/// open; past this we stop reading rather than wait for it.
const PIPE_DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Bytes read from a pipe at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Runs `command` with `bash -c` in `root` and formats what it printed (see `bash::run`).
pub(super) async fn run(
    root: &Path,
    command: &str,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let deadline = Instant::now() + limits.bash_timeout;

    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A backstop only: the group guard below is what kills the children.
        .kill_on_drop(true);
    // No provider key (or other secret-named variable) reaches the command.
    for name in limits.child_env.removed_from_current_env() {
        cmd.env_remove(name);
    }
    // SAFETY: `pre_exec` is unsafe because the closure runs between fork and exec; `setsid`
    // is async-signal-safe, allocates nothing and touches no memory of the parent. It gives
    // the child a new session without a controlling terminal and makes it the leader of a
    // new process group whose id is its pid. (std's `process_group(0)` would keep the
    // terminal, which the workbench owns.)
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = cmd.spawn().map_err(ToolError::Spawn)?;
    let pgid = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(Pid::from_raw)
        .ok_or_else(|| ToolError::Internal("the shell has no process id".into()))?;
    let mut group = GroupGuard::new(pgid);

    let cap = limits.output_cap_chars;
    let stdout = child
        .stdout
        .take()
        .map(|p| tokio::spawn(read_capped(p, cap)));
    let stderr = child
        .stderr
        .take()
        .map(|p| tokio::spawn(read_capped(p, cap)));
    let readers = Readers { stdout, stderr };

    let status = tokio::select! {
        status = child.wait() => status,
        _ = tokio::time::sleep_until(deadline) => {
            stop(&mut group, &mut child, &readers).await;
            return Err(ToolError::Timeout(limits.bash_timeout));
        }
        _ = cancel.cancelled() => {
            stop(&mut group, &mut child, &readers).await;
            return Err(ToolError::Cancelled);
        }
    };
    // The shell is gone; background jobs it left would otherwise keep the pipes open (and
    // keep running after the tool reported). Pipe data already written survives the kill.
    group.kill();
    group.disarm();
    let status = status.map_err(|e| ToolError::Internal(format!("waiting for bash: {e}")))?;

    let drain_until = deadline.min(Instant::now() + PIPE_DRAIN_GRACE);
    let (out, out_complete) = join_reader(readers.stdout, drain_until, cap).await;
    let (err, err_complete) = join_reader(readers.stderr, drain_until, cap).await;
    let mut text = format_output(out, err, cap, status);
    if !(out_complete && err_complete) {
        text.push_str("\n[output stream held open by a detached process; stopped reading]");
    }
    // A nonzero exit is an error result that still carries the whole output.
    Ok(ToolOutcome::Output {
        content: text,
        is_error: !status.success(),
    })
}

/// How long to wait for the killed shell to be reaped before leaving it to `kill_on_drop`
/// and tokio's orphan reaper. SIGKILL cannot be caught, so this only guards against hangs.
const REAP_GRACE: Duration = Duration::from_secs(1);

/// Kills the group, reaps the shell and stops reading its pipes.
async fn stop(group: &mut GroupGuard, child: &mut tokio::process::Child, readers: &Readers) {
    group.kill();
    let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
    readers.abort();
}

/// The process groups of the `bash` calls running now (see [`kill_running_process_groups`]).
static RUNNING_GROUPS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

fn running_groups() -> Vec<Pid> {
    match RUNNING_GROUPS.lock() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Sends SIGKILL to the process group of every `bash` call still running, and to what left
/// those groups (see `descendants.rs`); returns how many groups were signalled. For a front
/// end that is about to exit on a signal: the groups live in their own sessions, so nothing
/// else would stop them from outliving ctxlab.
pub fn kill_running_process_groups() -> usize {
    let groups = running_groups();
    for pgid in &groups {
        // A group that is already gone gives ESRCH: nothing to do.
        let _ = rustix::process::kill_process_group(*pgid, Signal::KILL);
    }
    descendants::sweep(&groups, &[]);
    groups.len()
}

/// Kills the child's process group when told to, and when dropped while armed: if the
/// caller drops the `run_tool` future mid-command, the whole group still dies.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    fn new(pgid: Pid) -> GroupGuard {
        if let Ok(mut running) = RUNNING_GROUPS.lock() {
            running.push(pgid);
        }
        GroupGuard { pgid: Some(pgid) }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid {
            // A group that is already gone gives ESRCH, the outcome we want anyway.
            let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
            let others: Vec<Pid> = running_groups()
                .into_iter()
                .filter(|g| *g != pgid)
                .collect();
            descendants::sweep(&[pgid], &others);
        }
    }

    /// Stops further kills once the group has been killed after the shell was reaped: from
    /// then on its id may be reused by an unrelated process group.
    fn disarm(&mut self) {
        if let Some(pgid) = self.pgid.take()
            && let Ok(mut running) = RUNNING_GROUPS.lock()
        {
            running.retain(|g| *g != pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        self.disarm();
    }
}

type ReaderTask = Option<tokio::task::JoinHandle<CappedText>>;

struct Readers {
    stdout: ReaderTask,
    stderr: ReaderTask,
}

impl Readers {
    fn abort(&self) {
        for task in [&self.stdout, &self.stderr].into_iter().flatten() {
            task.abort();
        }
    }
}

/// The captured text of one pipe, and whether the stream reached its end before `until`.
async fn join_reader(reader: ReaderTask, until: Instant, cap: usize) -> (CappedText, bool) {
    let Some(mut task) = reader else {
        return (CappedText::new(cap), true);
    };
    match tokio::time::timeout_at(until, &mut task).await {
        Ok(Ok(text)) => (text, true),
        // The reader task cannot panic on its own; treat a join failure as no output.
        Ok(Err(_)) => (CappedText::new(cap), true),
        Err(_) => {
            task.abort();
            (CappedText::new(cap), false)
        }
    }
}

/// Reads a pipe to its end, keeping at most `cap` chars. Read errors end the stream: what
/// was read so far is still worth showing.
async fn read_capped(mut pipe: impl AsyncRead + Unpin, cap: usize) -> CappedText {
    let mut text = CappedText::new(cap);
    let mut decoder = LossyDecoder::default();
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => decoder.feed(&buf[..n], &mut |s| text.push_str(s)),
        }
    }
    decoder.finish(&mut |s| text.push_str(s));
    text
}

/// Joins stdout and stderr, applies the cap to the joined text and appends the notes.
fn format_output(out: CappedText, err: CappedText, cap: usize, status: ExitStatus) -> String {
    let separator =
        if !out.text().is_empty() && !out.text().ends_with('\n') && err.total_chars() > 0 {
            "\n"
        } else {
            ""
        };
    let total = out.total_chars() + separator.chars().count() + err.total_chars();
    let mut joined = CappedText::new(cap);
    joined.push_str(out.text());
    joined.push_str(separator);
    joined.push_str(err.text());
    // Chars each stream dropped on its own were never pushed here; count them as cut too.
    let cut = total - (joined.total_chars() - joined.cut_chars());
    let mut text = joined.text().to_string();
    if cut > 0 {
        text.push_str(&truncation_note(cut));
    }
    let status_line = match (status.code(), status.signal()) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("{EXIT_CODE_PREFIX} {code}]")),
        (None, Some(signal)) => Some(format!("[killed by signal {signal}]")),
        (None, None) => Some("[exit status unknown]".to_string()),
    };
    if let Some(line) = status_line {
        push_line(&mut text, &line);
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    text
}
