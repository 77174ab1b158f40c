//! Retrying a model call: how long to wait and when to give up.
//!
//! Owns `RetryPolicy` and the loop the HTTP providers run their attempts in. It decides
//! only *whether and when* to send the same request again; it never changes the request and
//! never keeps anything from a failed attempt (a partial answer is dropped with the attempt).
//! Errors that would fail the same way again (`ContextTooLong`, `Auth`, `BadRequest`) are
//! returned at once.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::{ModelResponse, ProviderError, StreamEvent, emit};

/// A server hint longer than this is not waited out silently: the error goes to the user,
/// who can decide to wait or switch models.
const LONGEST_SERVER_WAIT: Duration = Duration::from_secs(120);

/// How often and how patiently to retry. `max_attempts` counts the first try, so 1 means
/// "never retry".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn no_retries() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The exponential delay after failed attempt `failed` (1-based), before jitter:
    /// `base * 2^(failed-1)`, capped at `max_delay`.
    pub fn backoff(&self, failed: u32) -> Duration {
        let factor = 2u32.saturating_pow(failed.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// The delay actually used: a server hint wins; otherwise the backoff scaled by a random
    /// factor in [0.5, 1.0] so that many clients do not retry in lockstep.
    fn wait_for(&self, failed: u32, server_hint: Option<Duration>) -> Duration {
        if let Some(hint) = server_hint {
            return hint;
        }
        self.backoff(failed).mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// A failed attempt, with the server's `retry-after` hint when it sent one.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    pub error: ProviderError,
    pub retry_after: Option<Duration>,
}

impl From<ProviderError> for AttemptFailure {
    fn from(error: ProviderError) -> Self {
        let retry_after = match &error {
            ProviderError::RateLimited { retry_after } => *retry_after,
            _ => None,
        };
        AttemptFailure { error, retry_after }
    }
}

/// Runs `attempt` until it succeeds, fails for good, or `policy.max_attempts` is spent.
/// Each retry is announced on `events` before the wait.
pub(crate) async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    events: &UnboundedSender<StreamEvent>,
    mut attempt: F,
) -> Result<ModelResponse, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ModelResponse, AttemptFailure>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut failed = 0u32;
    loop {
        let failure = match attempt().await {
            Ok(response) => return Ok(response),
            Err(failure) => failure,
        };
        failed += 1;
        if !failure.error.is_retryable() || failed >= max_attempts {
            return Err(failure.error);
        }
        if failure
            .retry_after
            .is_some_and(|hint| hint > LONGEST_SERVER_WAIT.max(policy.max_delay))
        {
            return Err(failure.error);
        }
        let wait = policy.wait_for(failed, failure.retry_after);
        tracing::debug!(attempt = failed, error = %failure.error, ?wait, "model call failed, retrying");
        emit(
            events,
            StreamEvent::Retrying {
                attempt: failed + 1,
                reason: failure.error.to_string(),
                wait,
            },
        );
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn fast(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy {
            max_attempts: 9,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        assert_eq!(p.backoff(1), Duration::from_millis(100));
        assert_eq!(p.backoff(2), Duration::from_millis(200));
        assert_eq!(p.backoff(3), Duration::from_millis(400));
        assert_eq!(p.backoff(4), Duration::from_millis(500));
        assert_eq!(p.backoff(60), Duration::from_millis(500));
        for _ in 0..50 {
            let w = p.wait_for(2, None);
            assert!(w >= Duration::from_millis(100) && w <= Duration::from_millis(200));
        }
        assert_eq!(
            p.wait_for(2, Some(Duration::from_millis(7))),
            Duration::from_millis(7)
        );
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts_and_announces_each_retry() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = Cell::new(0);
        let result = with_retries(&fast(3), &tx, || {
            calls.set(calls.get() + 1);
            async { Err(AttemptFailure::from(ProviderError::Overloaded)) }
        })
        .await;
        assert_eq!(result, Err(ProviderError::Overloaded));
        assert_eq!(calls.get(), 3);
        let mut attempts = Vec::new();
        while let Ok(StreamEvent::Retrying { attempt, .. }) = rx.try_recv() {
            attempts.push(attempt);
        }
        assert_eq!(attempts, vec![2, 3]);
    }

    #[tokio::test]
    async fn permanent_errors_are_not_retried() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = Cell::new(0);
        let err = ProviderError::ContextTooLong {
            message: "x".into(),
            prompt_tokens: None,
            window_tokens: None,
        };
        let result = with_retries(&fast(5), &tx, || {
            calls.set(calls.get() + 1);
            let err = err.clone();
            async move { Err(AttemptFailure::from(err)) }
        })
        .await;
        assert!(matches!(result, Err(ProviderError::ContextTooLong { .. })));
        assert_eq!(calls.get(), 1);
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_huge_server_hint_is_returned_not_slept() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = Cell::new(0);
        let result = with_retries(&fast(5), &tx, || {
            calls.set(calls.get() + 1);
            async {
                Err(AttemptFailure::from(ProviderError::RateLimited {
                    retry_after: Some(Duration::from_secs(3600)),
                }))
            }
        })
        .await;
        assert!(matches!(result, Err(ProviderError::RateLimited { .. })));
        assert_eq!(calls.get(), 1);
    }
}
