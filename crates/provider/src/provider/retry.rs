//! Retrying a model call: how long to wait and when to give up.
//!
//! Owns `RetryPolicy` and the loop the HTTP providers run their attempts in. It decides
//! only *whether and when* to send the same request again; it never changes the request and
//! never keeps anything from a failed attempt (a partial answer is dropped with the attempt).
//! Errors that would fail the same way again (`ContextTooLong`, `Auth`, `BadRequest`,
//! `InvalidStream`) are returned at once. `CallLimits` bounds the whole call: an overall
//! deadline over every attempt and wait (a server dribbling keepalives keeps each attempt's
//! idle timer happy, never this one), and a budget for the time spent waiting to retry.

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

/// The bounds of one model call as a whole, whatever its attempts do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// Wall-clock limit of the call: every attempt and every wait between them.
    pub deadline: Duration,
    /// Most time spent waiting between attempts, all waits of the call together. A retry
    /// whose wait does not fit what is left is not made: the last error is returned.
    pub retry_budget: Duration,
}

/// 10 minutes: a long answer streams for a few minutes at most; a call still running after
/// this is a server holding the connection open, not an answer coming.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(600);
/// 2 minutes of waiting in all: the default policy's waits (1, 2, 4, 8 s before jitter) fit
/// many times over, and one server hint of up to `LONGEST_SERVER_WAIT` fits once.
pub const DEFAULT_RETRY_BUDGET: Duration = Duration::from_secs(120);

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            deadline: DEFAULT_CALL_DEADLINE,
            retry_budget: DEFAULT_RETRY_BUDGET,
        }
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

/// Runs `attempt` until it succeeds, fails for good, `policy.max_attempts` or
/// `limits.retry_budget` is spent, or `limits.deadline` passes (then the attempt under way
/// is dropped and the error is `Deadline`). Each retry is announced on `events` before the
/// wait.
pub(crate) async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    limits: &CallLimits,
    events: &UnboundedSender<StreamEvent>,
    attempt: F,
) -> Result<ModelResponse, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ModelResponse, AttemptFailure>>,
{
    let attempts = retry_loop(policy, limits.retry_budget, events, attempt);
    match tokio::time::timeout(limits.deadline, attempts).await {
        Ok(result) => result,
        Err(_) => Err(ProviderError::Deadline {
            limit: limits.deadline,
        }),
    }
}

async fn retry_loop<F, Fut>(
    policy: &RetryPolicy,
    retry_budget: Duration,
    events: &UnboundedSender<StreamEvent>,
    mut attempt: F,
) -> Result<ModelResponse, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ModelResponse, AttemptFailure>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut failed = 0u32;
    let mut waited = Duration::ZERO;
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
        if waited.saturating_add(wait) > retry_budget {
            return Err(failure.error);
        }
        waited += wait;
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
        let result = with_retries(&fast(3), &CallLimits::default(), &tx, || {
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
            window_chars: None,
        };
        let result = with_retries(&fast(5), &CallLimits::default(), &tx, || {
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
        let result = with_retries(&fast(5), &CallLimits::default(), &tx, || {
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

    /// An attempt that never ends (a server dribbling keepalives) is cut by the deadline,
    /// however many attempts are left.
    #[tokio::test]
    async fn the_deadline_ends_a_call_whose_attempt_never_does() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let limits = CallLimits {
            deadline: Duration::from_millis(50),
            ..CallLimits::default()
        };
        let result = with_retries(&fast(5), &limits, &tx, || {
            std::future::pending::<Result<ModelResponse, AttemptFailure>>()
        })
        .await;
        assert_eq!(
            result,
            Err(ProviderError::Deadline {
                limit: Duration::from_millis(50)
            })
        );
    }

    /// Attempts that each fail late (a silent server's idle timeout, scaled down): five of
    /// them would take 500 ms, and the 250 ms deadline cuts across them.
    #[tokio::test]
    async fn the_deadline_spans_every_attempt_and_wait() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = Cell::new(0);
        let limits = CallLimits {
            deadline: Duration::from_millis(250),
            retry_budget: Duration::from_secs(3600),
        };
        let result = with_retries(&fast(5), &limits, &tx, || {
            calls.set(calls.get() + 1);
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(AttemptFailure::from(ProviderError::Timeout))
            }
        })
        .await;
        assert!(
            matches!(result, Err(ProviderError::Deadline { .. })),
            "{result:?}"
        );
        assert!(calls.get() < 5, "{} attempts", calls.get());
    }

    /// Waits add up; the retry whose wait would overdraw the budget is not made, and the
    /// error is the last attempt's own.
    #[tokio::test]
    async fn the_retry_budget_bounds_the_waits_together() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = Cell::new(0);
        let limits = CallLimits {
            deadline: Duration::from_secs(3600),
            retry_budget: Duration::from_millis(25),
        };
        let result = with_retries(&fast(20), &limits, &tx, || {
            calls.set(calls.get() + 1);
            async {
                Err(AttemptFailure::from(ProviderError::RateLimited {
                    retry_after: Some(Duration::from_millis(10)),
                }))
            }
        })
        .await;
        assert!(matches!(result, Err(ProviderError::RateLimited { .. })));
        // Two waits of 10 ms fit in 25 ms; a third would not.
        assert_eq!(calls.get(), 3);
        let mut waits = Vec::new();
        while let Ok(StreamEvent::Retrying { wait, .. }) = rx.try_recv() {
            waits.push(wait);
        }
        assert_eq!(waits, vec![Duration::from_millis(10); 2]);
    }
}
