//! The live view's follower: `session::watch::follow` on a thread of its own (it sleeps on
//! file-change notifications, so it never holds a runtime worker), each event sent to the
//! loop over a bounded channel as `LiveMsg::Event`. A full channel makes the follower wait
//! (a large file read at start cannot outrun the screen by more than the channel holds).
//! Dropping the `Follower` asks the thread to stop; it ends at its next look or send.
//!
//! Near the agent's threshold the thread also reads the session since its last compaction
//! (`session::watch::since`) and sends what a compaction now would put at risk (`RiskScout`, the rules `watch --text` uses): reading it
//! is slow on a large file, so it happens here, off the loop, and only when
//! `forgot::at_risk::RiskWatch` says a warning is due.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::path::PathBuf;

use tokio::sync::mpsc::Sender;

use super::{FollowRequest, LiveMsg};
use crate::forgot::at_risk::{AT_RISK_SHOWN, AtRisk, RiskWatch};
use crate::session::watch::since::LastCompaction;
use crate::session::watch::{HeadroomTracker, LiveItem, WatchEvent};

/// Events queued between the follower and the loop at most.
pub const QUEUE: usize = 1_024;

/// A running follower; dropped, it stops.
#[derive(Debug)]
pub struct Follower {
    id: u64,
    stop: Arc<AtomicBool>,
}

impl Follower {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The follower's thread could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the follower: {0}")]
pub struct SpawnError(#[source] std::io::Error);

/// Starts following `request` on a new thread, sending to `tx`. Err: the thread could not
/// be started (said in the message).
pub fn spawn(request: FollowRequest, tx: Sender<LiveMsg>) -> Result<Follower, SpawnError> {
    let stop = Arc::new(AtomicBool::new(false));
    let id = request.id();
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("ctxlab-follow".into())
        .spawn(move || {
            let options = request.options();
            let mut scout = RiskScout::new(request.at_risk_within());
            let mut sink = |event: WatchEvent| {
                let risk = scout.see(&event);
                !flag.load(Ordering::Relaxed)
                    && tx.blocking_send(LiveMsg::Event { id, event }).is_ok()
                    && risk.is_none_or(|risk| {
                        let risk = Box::new(risk);
                        tx.blocking_send(LiveMsg::AtRisk { id, risk }).is_ok()
                    })
            };
            let result =
                crate::session::watch::follow(request.chosen().clone(), &options, &flag, &mut sink);
            let error = result.err().map(|e| e.to_string());
            // The loop is gone when this fails: nobody is watching any more.
            let _ = tx.blocking_send(LiveMsg::Ended { id, error });
        })
        .map_err(SpawnError)?;
    Ok(Follower { id, stop })
}

/// The follower's side of the at-risk list: the headroom as the view computes it (the
/// agent's rule with its defaults, the format once known) and, when a warning is due, the
/// session since its last compaction read and `forgot::at_risk` run on it.
#[derive(Debug)]
pub struct RiskScout {
    watch: RiskWatch,
    tracker: HeadroomTracker,
    path: Option<PathBuf>,
    caught_up: bool,
    /// Where the messages a compaction now would summarise start.
    since: LastCompaction,
}

impl RiskScout {
    pub fn new(within: Option<u64>) -> RiskScout {
        RiskScout {
            watch: RiskWatch::new(within),
            tracker: HeadroomTracker::new(),
            path: None,
            caught_up: false,
            since: LastCompaction::default(),
        }
    }

    /// Folds `event`; the facts at risk when a warning is due: after a main call written
    /// while following, as `watch --text` (not on catching up: the whole session would be
    /// read at once on opening a large file).
    pub fn see(&mut self, event: &WatchEvent) -> Option<AtRisk> {
        self.since.see(event);
        match event {
            WatchEvent::Following { path, .. } => {
                // A new file, or the same one read again from its start.
                self.watch.restart();
                self.tracker = HeadroomTracker::new();
                self.path = Some(path.clone());
                self.caught_up = false;
                None
            }
            WatchEvent::Recognised { format } => {
                self.tracker.set_format(*format);
                None
            }
            WatchEvent::CaughtUp { format, .. } => {
                if let Some(f) = format {
                    self.tracker.set_format(*f);
                }
                self.caught_up = true;
                None
            }
            WatchEvent::Item { item, .. } => {
                self.tracker.push(item);
                match item {
                    LiveItem::Call(c) if !c.summary && self.caught_up => self.check(),
                    _ => None,
                }
            }
            WatchEvent::File { .. } | WatchEvent::Error { .. } => None,
        }
    }

    fn check(&mut self) -> Option<AtRisk> {
        if !self.watch.due(&self.tracker.headroom()) {
            return None;
        }
        // From the last compaction's line, not the whole file (`session::watch::since`).
        let since = self.since.read(self.path.as_deref()?).ok()?;
        let risk = AtRisk::of_part(&since.session, AT_RISK_SHOWN, since.cut, since.first_index);
        (risk.total > 0).then_some(risk)
    }
}
