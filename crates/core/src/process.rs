//! The process's own end of life, for the front ends: the signals that ask it to stop
//! (SIGTERM, SIGHUP, SIGINT) as something to `select!` on, and noticing that the reader of
//! stdout went away (`ctxlab run | head -1`) before anything more is written.
//!
//! It only reports: what to stop (the agent, the tools' process groups, the terminal) and
//! which exit code to use is the front end's business. Exit codes follow the shell's
//! convention, 128 + the signal number. It also answers the one question ctxlab asks about
//! other processes: is the process with this id still running ([`process_alive`]).

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{Pid, Signal as Sig};

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::oneshot;

/// How often the stdout watcher looks again.
const STDOUT_POLL: Duration = Duration::from_millis(100);

/// The signals that end ctxlab, installed once; from then on they no longer kill the
/// process outright, so the front end can restore the terminal and stop the tools first.
pub struct TerminationSignals {
    term: Signal,
    hup: Signal,
    int: Signal,
}

impl TerminationSignals {
    /// Installs the handlers. Must run inside a tokio runtime.
    pub fn install() -> io::Result<TerminationSignals> {
        Ok(TerminationSignals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next of the three; returns its number.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => Sig::TERM.as_raw(),
            _ = self.hup.recv() => Sig::HUP.as_raw(),
            _ = self.int.recv() => Sig::INT.as_raw(),
        }
    }
}

/// The conventional exit status after the signal `signo`: 128 + its number.
pub fn signal_exit_code(signo: i32) -> u8 {
    u8::try_from(128 + signo).unwrap_or(u8::MAX)
}

/// Resolves once `output`'s far end is gone: the reader of a pipe closed it (POLLERR) or a
/// terminal hung up (POLLHUP). A regular file never resolves. Watched from a small thread
/// that ends when the receiver is dropped.
pub fn output_closed<F: AsFd + Send + 'static>(output: F) -> oneshot::Receiver<()> {
    let (tx, rx) = oneshot::channel();
    let watcher = move || {
        let timeout = Timespec::try_from(STDOUT_POLL).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        });
        while !tx.is_closed() {
            let mut pfd = [PollFd::new(&output, PollFlags::empty())];
            let n = rustix::event::poll(&mut pfd, Some(&timeout)).unwrap_or(0);
            let gone = n > 0
                && pfd[0]
                    .revents()
                    .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL);
            if gone {
                let _ = tx.send(());
                return;
            }
        }
    };
    if std::thread::Builder::new()
        .name("stdout-watch".into())
        .spawn(watcher)
        .is_err()
    {
        // Without the watcher a closed output is still noticed at the next write.
        tracing::warn!("cannot start the stdout watcher");
    }
    rx
}

/// Whether a process with this id runs on this machine, as far as we may ask: `kill(pid, 0)`
/// succeeds, or fails only for lack of permission (another user's process). Pid 0 and ids
/// beyond `pid_t` name no single process and count as not running.
pub fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .filter(|p| *p > 0)
        .and_then(Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) | Err(Errno::PERM) => true,
        Err(_) => false,
    }
}

/// Makes ctxlab the reaper of its orphaned descendants (Linux's `PR_SET_CHILD_SUBREAPER`): a
/// process a tool call started whose parent dies becomes ctxlab's child instead of init's,
/// so it can still be found and ended when the call ends. For a process that starts no
/// children but the tools' (the binary); elsewhere, or when refused, returns false and the
/// tools fall back to what their process group and session reach.
pub fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Makes ctxlab's `/proc/<pid>/` files (its environment with the provider keys, its memory)
/// readable by root only, where they are readable by every process of the same user
/// otherwise, the tools' shells included (Linux's `PR_SET_DUMPABLE` 0; it also turns off
/// core dumps and a non-root debugger's attach). A tool's own process is dumpable again
/// after its `exec`. Removing the keys from the environment would not do: `/proc/<pid>/environ`
/// shows the environment the process started with, whatever it changes since. Returns false
/// where this does not exist (macOS) or is refused.
pub fn keep_environment_private() -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::DumpableBehavior;
        rustix::process::set_dumpable_behavior(DumpableBehavior::NotDumpable).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(signal_exit_code(Sig::INT.as_raw()), 130);
        assert_eq!(signal_exit_code(Sig::TERM.as_raw()), 143);
        assert_eq!(signal_exit_code(Sig::HUP.as_raw()), 129);
    }

    #[tokio::test]
    async fn a_pipe_whose_reader_closed_is_noticed_without_writing() {
        let (reader, writer) = std::io::pipe().unwrap();
        let closed = output_closed(writer);
        drop(reader);
        tokio::time::timeout(Duration::from_secs(5), closed)
            .await
            .expect("noticed in time")
            .unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_environment_is_kept_private_and_children_still_run() {
        use rustix::process::DumpableBehavior;
        assert!(keep_environment_private());
        assert_eq!(
            rustix::process::dumpable_behavior().unwrap(),
            DumpableBehavior::NotDumpable
        );
        // A child's exec makes it an ordinary process again: tools run as before.
        let out = std::process::Command::new("sh")
            .args(["-c", "echo ok"])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"ok\n");
    }

    #[test]
    fn liveness_is_kill_zero_for_any_process_not_only_our_children() {
        assert!(process_alive(std::process::id()));
        // pid 1 runs everywhere and belongs to root: EPERM for others still means alive.
        assert!(process_alive(1));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid), "a reaped child is gone");
        assert!(!process_alive(0));
        assert!(!process_alive(u32::MAX));
    }
}
