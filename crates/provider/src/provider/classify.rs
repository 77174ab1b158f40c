//! Reading what a server says when something is wrong: JSON error bodies of every shape seen
//! in the wild, the over-length errors with their numbers, and `retry-after` hints, turned
//! into typed `ProviderError`s.
//!
//! Everything here reads server-controlled text and numbers, so nothing may panic or
//! overflow on any input: numbers that do not fit are treated as absent and durations are
//! clamped. It must not know either wire format's success shapes, and it never sees a key.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::ProviderError;

/// Longest server error message kept, so a proxy's HTML page does not flood the UI.
const MAX_ERROR_MESSAGE_CHARS: usize = 500;

/// The longest server hint kept as is. `Duration::from_secs_f64` panics on a value this
/// type cannot hold (`retry-after: 100000000000000000000`), so every hint is clamped here;
/// anything this long is far above what the retry loop waits out anyway (it gives the error
/// to the user instead).
pub(crate) const MAX_SERVER_HINT: Duration = Duration::from_secs(24 * 60 * 60);

/// `retry-after-ms` (milliseconds, sent by Anthropic and OpenAI) wins over `retry-after`
/// (seconds). An HTTP-date `retry-after` is ignored: the backoff covers it. Values that are
/// negative, not finite or absurdly large never panic: they are dropped or clamped to
/// `MAX_SERVER_HINT`.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(clamped_seconds(ms / 1000.0));
    }
    read("retry-after").map(clamped_seconds)
}

/// A non-negative number of seconds as a `Duration`, at most `MAX_SERVER_HINT`.
fn clamped_seconds(secs: f64) -> Duration {
    let secs = secs.clamp(0.0, MAX_SERVER_HINT.as_secs_f64());
    Duration::try_from_secs_f64(secs).unwrap_or(MAX_SERVER_HINT)
}

/// The parts of a JSON error body both providers care about, from any of the shapes seen in
/// the wild: Anthropic `{"type":"error","error":{"type","message"}}`, OpenAI
/// `{"error":{"message","type","code"}}`, llama.cpp (same with a numeric `code`, and
/// `n_prompt_tokens` / `n_ctx` on an over-length request; inside a stream the same object
/// without the `error` wrapper), vLLM's top-level `{"object":"error","message","type","code"}`
/// and Ollama's `{"error":"text"}`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ErrorBody {
    pub kind: Option<String>,
    pub code: Option<String>,
    pub message: String,
    /// llama.cpp's `n_prompt_tokens`: how long the rejected prompt was.
    pub prompt_tokens: Option<u64>,
    /// llama.cpp's `n_ctx`: the window it did not fit.
    pub window_tokens: Option<u64>,
}

impl ErrorBody {
    pub(crate) fn parse(text: &str) -> ErrorBody {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => ErrorBody::from_value(&v),
            Err(_) => ErrorBody {
                message: truncate(text.trim()),
                ..ErrorBody::default()
            },
        }
    }

    pub(crate) fn from_value(v: &Value) -> ErrorBody {
        let inner = match v.get("error") {
            Some(Value::String(s)) => {
                return ErrorBody {
                    message: truncate(s),
                    ..ErrorBody::default()
                };
            }
            Some(obj @ Value::Object(_)) => obj,
            _ => v,
        };
        let text = |key: &str| match inner.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        // `as_u64` is None for negatives, fractions and numbers beyond u64: a hostile
        // number is simply not known.
        let count = |key: &str| inner.get(key).and_then(Value::as_u64);
        ErrorBody {
            kind: text("type"),
            code: text("code"),
            message: truncate(&text("message").unwrap_or_default()),
            prompt_tokens: count("n_prompt_tokens"),
            window_tokens: count("n_ctx"),
        }
    }

    fn is(&self, name: &str) -> bool {
        self.kind.as_deref() == Some(name) || self.code.as_deref() == Some(name)
    }

    /// llama.cpp puts an HTTP status in `code` (`500`, `503`); inside a stream, where the
    /// real status was 200, it is the best status there is.
    fn status_from_code(&self) -> Option<u16> {
        self.code
            .as_deref()
            .and_then(|c| c.parse::<u16>().ok())
            .filter(|s| (400..=599).contains(s))
    }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

/// The two numbers of an over-length error: the prompt's size and the window, in tokens.
/// Either may be unknown (not given, or too large to hold).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TooLongNumbers {
    pub prompt_tokens: Option<u64>,
    pub window_tokens: Option<u64>,
}

/// Anthropic's over-length message has one shape: `prompt is too long: N tokens > M
/// maximum`. Matching the whole shape (with the numbers) rather than a substring keeps
/// unrelated 400s from being mistaken for it. `None` when the shape is not there.
pub(crate) fn parse_prompt_too_long(message: &str) -> Option<TooLongNumbers> {
    const HEAD: &str = "prompt is too long: ";
    let mut rest = message;
    while let Some(pos) = rest.find(HEAD) {
        let after = &rest[pos + HEAD.len()..];
        if let Some((prompt, after_prompt)) = digits_then(after, " tokens > ")
            && let Some((window, _)) = digits_then(after_prompt, " maximum")
        {
            return Some(TooLongNumbers {
                prompt_tokens: prompt.parse().ok(),
                window_tokens: window.parse().ok(),
            });
        }
        rest = after;
    }
    None
}

/// If `s` starts with one or more ASCII digits followed by `tail`: the digits and what
/// comes after `tail`.
fn digits_then<'a>(s: &'a str, tail: &str) -> Option<(&'a str, &'a str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    s[n..].strip_prefix(tail).map(|rest| (&s[..n], rest))
}

/// The number right after `marker` in `text`, if digits follow it.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The numbers in OpenAI's and vLLM's `context_length_exceeded` prose: "This model's
/// maximum context length is 128000 tokens. However, your messages resulted in 130000
/// tokens" (vLLM: "... you requested 2100 tokens (2000 in the messages, ...").
fn openai_too_long_numbers(message: &str) -> TooLongNumbers {
    TooLongNumbers {
        prompt_tokens: number_after(message, "resulted in ")
            .or_else(|| number_after(message, "tokens ("))
            .or_else(|| number_after(message, "you requested ")),
        window_tokens: number_after(message, "maximum context length is "),
    }
}

/// Maps an error to its typed form. `status` is `None` for an error event inside a stream
/// that had started with 200.
pub(crate) fn classify(
    status: Option<u16>,
    body: &ErrorBody,
    retry_after: Option<Duration>,
) -> ProviderError {
    let status = status.or_else(|| body.status_from_code());
    let message = if body.message.is_empty() {
        match status {
            Some(s) => format!("HTTP {s}"),
            None => "error event in the response stream".to_string(),
        }
    } else {
        body.message.clone()
    };
    let anthropic_too_long = if body.is("invalid_request_error") {
        parse_prompt_too_long(&body.message)
    } else {
        None
    };
    let numbers = if let Some(numbers) = anthropic_too_long {
        Some(numbers)
    } else if body.is("exceed_context_size_error") {
        Some(TooLongNumbers {
            prompt_tokens: body.prompt_tokens,
            window_tokens: body.window_tokens,
        })
    } else if body.is("context_length_exceeded") {
        Some(openai_too_long_numbers(&body.message))
    } else {
        None
    };
    if let Some(n) = numbers {
        return ProviderError::ContextTooLong {
            message,
            prompt_tokens: n.prompt_tokens,
            window_tokens: n.window_tokens,
            window_chars: None,
        };
    }
    if body.is("overloaded_error") {
        return ProviderError::Overloaded;
    }
    if body.is("rate_limit_error") {
        return ProviderError::RateLimited { retry_after };
    }
    if body.is("authentication_error") || body.is("permission_error") {
        return ProviderError::Auth { message };
    }
    match status {
        Some(401 | 403) => ProviderError::Auth { message },
        Some(408) => ProviderError::Timeout,
        Some(429) => ProviderError::RateLimited { retry_after },
        Some(529) => ProviderError::Overloaded,
        Some(s @ 500..=599) => ProviderError::Server { status: s, message },
        Some(400..=499) => ProviderError::BadRequest { message },
        Some(s) => ProviderError::Server { status: s, message },
        None if body.is("invalid_request_error") => ProviderError::BadRequest { message },
        None => ProviderError::Server {
            status: 500,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_prompt_too_long(message: &str) -> bool {
        parse_prompt_too_long(message).is_some()
    }

    fn too_long(p: Option<u64>, w: Option<u64>, message: &str) -> ProviderError {
        ProviderError::ContextTooLong {
            message: message.into(),
            prompt_tokens: p,
            window_tokens: w,
            window_chars: None,
        }
    }

    #[test]
    fn prompt_too_long_needs_the_whole_shape() {
        assert!(is_prompt_too_long(
            "prompt is too long: 208310 tokens > 200000 maximum"
        ));
        assert!(!is_prompt_too_long("prompt is too long"));
        assert!(!is_prompt_too_long(
            "prompt is too long: many tokens > 5 maximum"
        ));
        assert!(!is_prompt_too_long(
            "prompt is too long: 5 tokens > maximum"
        ));
        assert!(!is_prompt_too_long("your prompt is too long: 12 tokens"));
        assert_eq!(
            parse_prompt_too_long("prompt is too long: 208310 tokens > 200000 maximum"),
            Some(TooLongNumbers {
                prompt_tokens: Some(208_310),
                window_tokens: Some(200_000)
            })
        );
        // Digits beyond u64 keep the shape but the number is unknown, never a panic.
        assert_eq!(
            parse_prompt_too_long(
                "prompt is too long: 99999999999999999999999 tokens > 200000 maximum"
            ),
            Some(TooLongNumbers {
                prompt_tokens: None,
                window_tokens: Some(200_000)
            })
        );
    }

    #[test]
    fn error_bodies_of_every_known_shape() {
        let a = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9 tokens > 8 maximum"}}"#,
        );
        assert_eq!(
            classify(Some(400), &a, None),
            too_long(Some(9), Some(8), "prompt is too long: 9 tokens > 8 maximum")
        );
        let other400 = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: prompt is too long"}}"#,
        );
        assert!(matches!(
            classify(Some(400), &other400, None),
            ProviderError::BadRequest { .. }
        ));
        let o = ErrorBody::parse(
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        );
        assert!(matches!(
            classify(Some(400), &o, None),
            ProviderError::ContextTooLong {
                prompt_tokens: Some(130_512),
                window_tokens: Some(128_000),
                ..
            }
        ));
        let l = ErrorBody::parse(
            r#"{"error":{"code":400,"message":"request (831 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":831,"n_ctx":512}}"#,
        );
        assert_eq!(l.code.as_deref(), Some("400"));
        assert_eq!(
            classify(Some(400), &l, None),
            too_long(
                Some(831),
                Some(512),
                "request (831 tokens) exceeds the available context size (512 tokens), try increasing it"
            )
        );
        let ollama = ErrorBody::parse(r#"{"error":"model not found"}"#);
        assert_eq!(
            classify(Some(404), &ollama, None),
            ProviderError::BadRequest {
                message: "model not found".into()
            }
        );
        let html = ErrorBody::parse("<html>bad gateway</html>");
        assert_eq!(
            classify(Some(502), &html, None),
            ProviderError::Server {
                status: 502,
                message: "<html>bad gateway</html>".into()
            }
        );
        assert_eq!(
            classify(Some(529), &ErrorBody::default(), None),
            ProviderError::Overloaded
        );
        assert!(matches!(
            classify(Some(403), &ErrorBody::default(), None),
            ProviderError::Auth { .. }
        ));
    }

    #[test]
    fn hostile_numbers_in_an_overflow_body_are_unknown_not_a_panic() {
        let l = ErrorBody::parse(
            r#"{"error":{"code":400,"message":"x","type":"exceed_context_size_error","n_prompt_tokens":100000000000000000000000,"n_ctx":-5}}"#,
        );
        assert_eq!(classify(Some(400), &l, None), too_long(None, None, "x"));
    }

    #[test]
    fn an_in_stream_error_takes_its_status_from_the_code() {
        // llama.cpp inside a stream: no `error` wrapper, the HTTP-like status in `code`.
        let l = ErrorBody::parse(
            r#"{"code":503,"message":"Loading model","type":"unavailable_error"}"#,
        );
        assert_eq!(
            classify(None, &l, None),
            ProviderError::Server {
                status: 503,
                message: "Loading model".into()
            }
        );
        let bad = ErrorBody::parse(r#"{"code":70000,"message":"m","type":"server_error"}"#);
        assert_eq!(
            classify(None, &bad, None),
            ProviderError::Server {
                status: 500,
                message: "m".into()
            }
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&d), None);
    }

    #[test]
    fn absurd_retry_after_values_are_clamped_not_a_panic() {
        for (name, value) in [
            ("retry-after", "100000000000000000000"),
            ("retry-after", "1e300"),
            ("retry-after-ms", "1e30"),
            ("retry-after-ms", "18446744073709551616000"),
        ] {
            let mut h = HeaderMap::new();
            h.insert(name, value.parse().unwrap());
            assert_eq!(retry_after(&h), Some(MAX_SERVER_HINT), "{name}: {value}");
        }
        for value in ["-1", "NaN", "inf", "1e400", "-0"] {
            let mut h = HeaderMap::new();
            h.insert("retry-after", value.parse().unwrap());
            let hint = retry_after(&h);
            assert!(
                hint.is_none() || hint == Some(Duration::ZERO),
                "{value}: {hint:?}"
            );
        }
    }
}
