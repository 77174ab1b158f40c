//! What bounds the proxy's connections and exchanges in time and number (docs/capture.md,
//! "Limits"): a deadline on a request's head (which is also how long an idle keep-alive
//! connection is kept), an idle and a total deadline on a request body, a total deadline
//! on an exchange upstream, and a cap on open client connections drawn from the process's
//! file limit. Also the count of exchanges in flight, so a stop can wait for them to be
//! written. Plain data and counters, no I/O.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The bounds in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A request's head must arrive whole within this, counted from when the connection
    /// starts waiting for it: so it is also the idle deadline of a keep-alive connection.
    pub header_deadline: Duration,
    /// Most time between two chunks of a request body.
    pub body_idle: Duration,
    /// Most time for a whole request body.
    pub body_deadline: Duration,
    /// Most time for a whole exchange upstream, from the request to the answer's last
    /// byte (`--upstream-deadline`); past it the answer is cut off and recorded as such.
    pub upstream_deadline: Duration,
    /// Most client connections open at once (`default_max_connections`).
    pub max_connections: usize,
}

/// How long a stop waits for the exchanges in flight to be written.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// The default upstream deadline: an hour, far above a long streamed answer.
pub const DEFAULT_UPSTREAM_DEADLINE: Duration = Duration::from_secs(3600);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_deadline: Duration::from_secs(30),
            body_idle: Duration::from_secs(60),
            body_deadline: Duration::from_secs(600),
            upstream_deadline: DEFAULT_UPSTREAM_DEADLINE,
            max_connections: default_max_connections(),
        }
    }
}

/// A cap on client connections that leaves room in the process's file limit: each
/// exchange in flight holds its client's socket, an upstream socket and a spool file, and
/// the capture and the runtime hold a few more. At most 1,024; at least 4.
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    connections_for_files(soft)
}

fn connections_for_files(files: u64) -> usize {
    let usable = files.saturating_sub(32) / 3;
    usize::try_from(usable).unwrap_or(usize::MAX).clamp(4, 1024)
}

/// The exchanges in flight: each holds an `InFlight` until its capture line is written.
#[derive(Debug, Default)]
pub struct InFlightCount(Arc<AtomicUsize>);

impl InFlightCount {
    pub fn enter(&self) -> InFlight {
        self.0.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(&self.0))
    }

    pub fn now(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// Waits until none is in flight, or `grace` has passed; true when none is.
    pub async fn drained(&self, grace: Duration) -> bool {
        let until = tokio::time::Instant::now() + grace;
        while self.now() > 0 {
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }
}

/// One exchange in flight; dropped when its line is written (or it is abandoned).
#[derive(Debug)]
pub struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_room_in_the_file_limit() {
        // Issue 39, item 3: with 256 open files, 300 idle connections starved a request.
        assert_eq!(connections_for_files(256), 74);
        assert_eq!(connections_for_files(10), 4);
        assert_eq!(connections_for_files(u64::MAX), 1024);
        assert!(default_max_connections() >= 4);
    }

    #[tokio::test]
    async fn a_stop_waits_for_the_exchanges_in_flight_within_its_grace() {
        let count = InFlightCount::default();
        let one = count.enter();
        assert_eq!(count.now(), 1);
        assert!(!count.drained(Duration::from_millis(30)).await);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(one);
        });
        assert!(count.drained(Duration::from_secs(5)).await);
    }
}
