//! The live view's follower: `session::watch::follow` on a thread of its own (it sleeps on
//! file-change notifications, so it never holds a runtime worker), each event sent to the
//! loop over a bounded channel as `LiveMsg::Event`. A full channel makes the follower wait
//! (a large file read at start cannot outrun the screen by more than the channel holds).
//! Dropping the `Follower` asks the thread to stop; it ends at its next look or send.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc::Sender;

use super::{FollowRequest, LiveMsg};

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

/// Starts following `request` on a new thread, sending to `tx`. Err: the thread could not
/// be started (said in the message).
pub fn spawn(request: FollowRequest, tx: Sender<LiveMsg>) -> Result<Follower, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let id = request.id();
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("ctxlab-follow".into())
        .spawn(move || {
            let options = request.options();
            let mut sink = |event| {
                !flag.load(Ordering::Relaxed)
                    && tx.blocking_send(LiveMsg::Event { id, event }).is_ok()
            };
            let result =
                crate::session::watch::follow(request.chosen().clone(), &options, &flag, &mut sink);
            let error = result.err().map(|e| e.to_string());
            // The loop is gone when this fails: nobody is watching any more.
            let _ = tx.blocking_send(LiveMsg::Ended { id, error });
        })
        .map_err(|e| format!("cannot start the follower: {e}"))?;
    Ok(Follower { id, stop })
}
