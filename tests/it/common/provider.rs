//! What every provider test shares, HTTP or scripted: a plain request, a retry policy that
//! waits milliseconds instead of seconds, and reading the `StreamEvent`s a call emitted.

use std::time::Duration;

use ctxlab::message::Message;
use ctxlab::provider::{ModelRequest, RetryPolicy, StreamEvent};
use tokio::sync::mpsc::UnboundedReceiver;

/// The default policy's shape with millisecond waits, so retry tests run in milliseconds.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

/// A request with the given history, a short system text and no tools.
pub fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages,
        tools: vec![],
        max_tokens: 512,
        kind: ctxlab::provider::RequestKind::Turn,
    }
}

/// The smallest request: one user message, "hi".
pub fn req() -> ModelRequest {
    request(vec![Message::user_text("hi")])
}

/// Every event already sent on the channel (the call has returned, so none is pending).
pub fn drain(rx: &mut UnboundedReceiver<StreamEvent>) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

/// The `(attempt, wait)` of every `Retrying` event, in order.
pub fn retries(events: &[StreamEvent]) -> Vec<(u32, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { attempt, wait, .. } => Some((*attempt, *wait)),
            _ => None,
        })
        .collect()
}
