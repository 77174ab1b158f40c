//! The agent task's death is an event, not silence: [`supervise`] runs the agent loop as a
//! task and, if it panics, sends an `Error` (kind `internal`, with the panic's message) and a
//! `TurnDone { error }`, so `ctxlab run` fails visibly and the workbench shows the error with
//! the session still on screen.
//!
//! While the loop is polled, [`in_agent_task`] is true on that thread; the workbench's panic
//! hook reads it to leave such a panic to this supervisor instead of ending the process.

use std::any::Any;
use std::future::Future;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::{AbortHandle, JoinHandle};

use super::events::{AgentEvent, ErrorKind, StopReason};

tokio::task_local! {
    /// Set while the supervised agent loop is being polled.
    static AGENT_TASK: ();
}

/// Whether the current code runs inside the supervised agent task (for a panic hook).
pub fn in_agent_task() -> bool {
    AGENT_TASK.try_with(|_| ()).is_ok()
}

/// Aborts the agent task when the supervisor is aborted or dropped.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The text of a panic payload (`panic!("...")` carries a `&str` or a `String`).
fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

/// Runs `work` (an agent loop) as a task and watches it: a panic becomes an `Error` event and
/// a `TurnDone { error }` on `events`. The returned handle ends when the loop ends; aborting
/// it aborts the loop.
pub fn supervise<F>(work: F, events: UnboundedSender<AgentEvent>) -> JoinHandle<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let task = tokio::spawn(AGENT_TASK.scope((), work));
    tokio::spawn(async move {
        let _abort = AbortOnDrop(task.abort_handle());
        let Err(e) = task.await else { return };
        if !e.is_panic() {
            return; // aborted: someone stopped it on purpose
        }
        let message = format!(
            "the agent stopped unexpectedly (panic: {}); the session stays on screen, but no \
             new request can run: quit and start again",
            panic_text(e.into_panic().as_ref())
        );
        tracing::error!("{message}");
        let _ = events.send(AgentEvent::Error {
            kind: ErrorKind::Internal,
            message,
        });
        let _ = events.send(AgentEvent::TurnDone {
            stop_reason: StopReason::Error,
        });
    })
}
