//! The `bash` tool: runs one command line with `bash -c` in the workspace root and captures
//! its output within the cap.
//!
//! It owns the child's whole life: the child starts in a new session (so it has no
//! controlling terminal and cannot fight the TUI for it) and therefore leads its own process
//! group; on timeout, cancellation, a dropped future, and also right after the shell exits,
//! that whole group gets SIGKILL, so no background job or pipeline member outlives the call.
//! Running groups are also registered process-wide, so that a front end that receives
//! SIGTERM, SIGHUP or SIGINT can kill them all before it exits
//! ([`kill_running_process_groups`]). The child's environment lacks the variables
//! `ToolLimits::child_env` removes (provider keys, `*_API_KEY`, `*_TOKEN`, `*_SECRET`).
//!
//! **This is not a sandbox.** The command runs with the user's rights and can read and write
//! anything the user can, anywhere; the deny-list only stops a few obviously destructive
//! commands typed plainly, and a process that calls `setsid` itself escapes the group kill.
//! Confinement to the workspace applies to the file tools, not to `bash`.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::output::{CappedText, LossyDecoder, push_line, truncation_note};
use super::{ToolError, ToolLimits, ToolOutcome, Workspace, required_str};

/// Default wall-clock limit of one command.
pub const BASH_TIMEOUT: Duration = Duration::from_secs(120);

/// Start of the line reporting a nonzero exit: `[exit code: N]`.
pub const EXIT_CODE_PREFIX: &str = "[exit code:";

/// How long to keep reading the pipes after the shell exited and its group was killed. Only a
/// process that left the group (it called `setsid`) can still hold them open; past this we
/// stop reading rather than wait for it.
const PIPE_DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Bytes read from a pipe at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Words refused anywhere in a command, matched at word boundaries (`sudoku.txt` is fine).
const DENIED_WORDS: [&str; 4] = ["sudo", "shutdown", "reboot", "mkfs"];

/// Runs the `bash` tool.
///
/// Result format, in this order:
/// - everything the command wrote to stdout, then everything it wrote to stderr (the two are
///   captured separately, not interleaved in time; a newline is inserted between them when
///   stdout does not end with one);
/// - if that text is longer than the cap, only its first `output_cap_chars` chars followed by
///   `\n[output truncated: N chars cut]`;
/// - if the exit status is nonzero, a last line `[exit code: N]`, or `[killed by signal N]`
///   when a signal ended the shell (on its own line: a newline is added before it unless
///   the text is empty or already ends with one);
/// - `(no output)` when there is none of the above.
///
/// `is_error` is true when the exit status is not 0. A timeout, a cancellation, a refused
/// command or a failure to start is an error with a one-line message instead.
pub(super) async fn run(
    ws: &Workspace,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let command = required_str(input, "command")?;
    if command.trim().is_empty() {
        return Err(ToolError::InvalidInput(
            "`command` must not be empty".into(),
        ));
    }
    check_deny_list(command)?;
    let deadline = Instant::now() + limits.bash_timeout;

    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(ws.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A backstop only: the group guard below is what kills the children.
        .kill_on_drop(true);
    // No provider key (or other secret-named variable) reaches the command.
    for name in limits.child_env.removed_from_current_env() {
        cmd.env_remove(name);
    }
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent; it is the
    // only thing run between fork and exec. It gives the child a new session without a
    // controlling terminal and makes it the leader of a new process group whose id is its pid.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(ToolError::Spawn)?;
    let pgid = child
        .id()
        .and_then(|pid| libc::pid_t::try_from(pid).ok())
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

/// Refuses a few plainly destructive commands before anything runs. It is a tripwire for
/// accidents, not a security boundary: quoting, variables or `eval` get around it.
pub fn check_deny_list(command: &str) -> Result<(), ToolError> {
    for word in DENIED_WORDS {
        if contains_word(command, word) {
            return Err(ToolError::Denied(format!(
                "commands using `{word}` are not allowed"
            )));
        }
    }
    if contains_dd_if(command) {
        return Err(ToolError::Denied(
            "`dd if=` is not allowed (raw device copies)".into(),
        ));
    }
    if removes_root(command) {
        return Err(ToolError::Denied(
            "recursive removal of `/` is not allowed".into(),
        ));
    }
    Ok(())
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offsets where `word` occurs with a non-word char (or the text edge) on both sides.
fn word_positions<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    text.match_indices(word).filter_map(move |(at, _)| {
        let end = at + word.len();
        let before_ok = at == 0 || !is_word_byte(bytes[at - 1]);
        let after_ok = end == bytes.len() || !is_word_byte(bytes[end]);
        (before_ok && after_ok).then_some(at)
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    word_positions(text, word).next().is_some()
}

/// `dd` as a word, then blanks, then `if=`.
fn contains_dd_if(command: &str) -> bool {
    word_positions(command, "dd").any(|at| {
        let rest = &command[at + 2..];
        let trimmed = rest.trim_start_matches([' ', '\t']);
        trimmed.len() < rest.len() && trimmed.starts_with("if=")
    })
}

/// An `rm` with a recursive flag whose operands include the file-system root itself (`/`,
/// `/*`, `//`, quoted or not). Other absolute paths such as `/tmp/x` are allowed.
fn removes_root(command: &str) -> bool {
    command
        .split([';', '&', '|', '\n', '(', ')', '`'])
        .any(|segment| {
            let mut words = segment.split_whitespace();
            while let Some(word) = words.next() {
                if word == "rm" || word.ends_with("/rm") {
                    let args: Vec<&str> = words.by_ref().collect();
                    return rm_args_remove_root(&args);
                }
            }
            false
        })
}

fn rm_args_remove_root(args: &[&str]) -> bool {
    let mut recursive = false;
    let mut root_target = false;
    for arg in args {
        let arg = arg.trim_matches(['"', '\'']);
        if arg == "--recursive" {
            recursive = true;
        } else if let Some(flags) = arg.strip_prefix('-').filter(|f| !f.starts_with('-')) {
            recursive |= flags.contains(['r', 'R']);
        } else if is_root_target(arg) {
            root_target = true;
        }
    }
    recursive && root_target
}

fn is_root_target(arg: &str) -> bool {
    let without_glob = arg.strip_suffix('*').unwrap_or(arg);
    !without_glob.is_empty() && without_glob.chars().all(|c| c == '/')
}

/// The process groups of the `bash` calls running now (see [`kill_running_process_groups`]).
static RUNNING_GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Sends SIGKILL to the process group of every `bash` call still running; returns how many
/// groups were signalled. For a front end that is about to exit on a signal: the groups
/// live in their own sessions, so nothing else would stop them from outliving ctxlab.
pub fn kill_running_process_groups() -> usize {
    let groups = match RUNNING_GROUPS.lock() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for pgid in &groups {
        // SAFETY: killpg only sends a signal; a group that is already gone gives ESRCH.
        unsafe {
            libc::killpg(*pgid, libc::SIGKILL);
        }
    }
    groups.len()
}

/// Kills the child's process group when told to, and when dropped while armed: if the
/// caller drops the `run_tool` future mid-command, the whole group still dies.
struct GroupGuard {
    pgid: Option<libc::pid_t>,
}

impl GroupGuard {
    fn new(pgid: libc::pid_t) -> GroupGuard {
        if let Ok(mut running) = RUNNING_GROUPS.lock() {
            running.push(pgid);
        }
        GroupGuard { pgid: Some(pgid) }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; a group that is already gone gives ESRCH,
            // which is the outcome we want anyway.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    /// Stops further kills once the group has been killed after the shell was reaped: from
    /// then on its id may be reused by an unrelated process group.
    fn disarm(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            if let Ok(mut running) = RUNNING_GROUPS.lock() {
                running.retain(|g| *g != pgid);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_refuses_dangerous_commands() {
        for cmd in [
            "sudo ls",
            "echo hi && sudo rm x",
            "/usr/bin/sudo ls",
            "shutdown -h now",
            "reboot",
            "mkfs.ext4 /dev/sda1",
            "mkfs -t ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda",
            "x; dd  if=/dev/zero of=f",
            "rm -rf /",
            "rm -fr /",
            "rm -rf /*",
            "rm -Rf /",
            "rm -r -f /",
            "rm --recursive --force /",
            "rm -rf --no-preserve-root /",
            "cd /tmp && rm -rf / ",
            "rm -rf '/'",
            "/bin/rm -rf /",
            "true; rm -rf //",
        ] {
            assert!(
                matches!(check_deny_list(cmd), Err(ToolError::Denied(_))),
                "should refuse: {cmd}"
            );
        }
    }

    #[test]
    fn deny_list_allows_look_alikes() {
        for cmd in [
            "cat sudoku.txt",
            "ls pseudo_dir",
            "echo rebooting_soon",
            "grep shutdownHook src",
            "rm -rf /tmp/build",
            "rm -rf ./target",
            "rm -rf build/",
            "rm /",
            "odd if=x",
            "dd of=out.img",
            "echo add if=1",
            "ls -la /",
        ] {
            assert!(check_deny_list(cmd).is_ok(), "should allow: {cmd}");
        }
    }

    #[test]
    fn root_targets() {
        assert!(is_root_target("/"));
        assert!(is_root_target("/*"));
        assert!(is_root_target("//"));
        assert!(!is_root_target("/tmp"));
        assert!(!is_root_target("*"));
        assert!(!is_root_target(""));
    }
}
