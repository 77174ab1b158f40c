//! The process's own end of life, for the front ends: the signals that ask it to stop
//! (SIGTERM, SIGHUP, SIGINT) as something to `select!` on, and noticing that the reader of
//! stdout went away (`ctxlab run | head -1`) before anything more is written.
//!
//! It only reports: what to stop (the agent, the tools' process groups, the terminal) and
//! which exit code to use is the front end's business. Exit codes follow the shell's
//! convention, 128 + the signal number.

use std::io;
use std::time::Duration;

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
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
            _ = self.int.recv() => libc::SIGINT,
        }
    }
}

/// The conventional exit status after the signal `signo`: 128 + its number.
pub fn signal_exit_code(signo: i32) -> u8 {
    u8::try_from(128 + signo).unwrap_or(u8::MAX)
}

/// Resolves once file descriptor `fd`'s far end is gone: the reader of a pipe closed it
/// (POLLERR) or a terminal hung up (POLLHUP). A regular file never resolves. Watched from a
/// small thread that ends when the receiver is dropped.
pub fn output_closed(fd: i32) -> oneshot::Receiver<()> {
    let (tx, rx) = oneshot::channel();
    let watcher = move || {
        let timeout = i32::try_from(STDOUT_POLL.as_millis()).unwrap_or(100);
        while !tx.is_closed() {
            let mut pfd = libc::pollfd {
                fd,
                events: 0,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call; `fd` is only polled.
            let n = unsafe { libc::poll(&mut pfd, 1, timeout) };
            let gone = n > 0 && pfd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(signal_exit_code(libc::SIGINT), 130);
        assert_eq!(signal_exit_code(libc::SIGTERM), 143);
        assert_eq!(signal_exit_code(libc::SIGHUP), 129);
    }

    #[tokio::test]
    async fn a_pipe_whose_reader_closed_is_noticed_without_writing() {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe() returns.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let closed = output_closed(fds[1]);
        // SAFETY: closes the read end we own.
        unsafe { libc::close(fds[0]) };
        tokio::time::timeout(Duration::from_secs(5), closed)
            .await
            .expect("noticed in time")
            .unwrap();
        // SAFETY: closes the write end we own.
        unsafe { libc::close(fds[1]) };
    }
}
