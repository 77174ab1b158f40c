//! What both HTTP providers share: sending a JSON POST, reading an SSE body, and turning
//! HTTP statuses and JSON error bodies into typed `ProviderError`s.
//!
//! It must not know either wire format's success shapes (those live in `anthropic.rs` and
//! `openai.rs`), and it must never put a header value (the key) into an error or a log.

use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use serde_json::Value;

use tokio::sync::mpsc::UnboundedSender;

use super::retry::AttemptFailure;
use super::{ModelResponse, ProviderError, StreamEvent};

/// How long to wait for a connection, and for the next bytes of a streaming body. There is
/// no total timeout: a long answer may legitimately stream for minutes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest server error message kept, so a proxy's HTML page does not flood the UI.
const MAX_ERROR_MESSAGE_CHARS: usize = 500;

/// The HTTP client could not be set up (TLS, typically), so no model can be called.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the HTTP client: {0}")]
pub struct ClientBuildError(String);

/// The client both providers use unless a test hands in its own.
pub(crate) fn default_client() -> Result<reqwest::Client, ClientBuildError> {
    client_with_timeouts(reqwest::Client::builder())
}

/// `builder` with the connect and read-idle timeouts. A builder that fails is an error: a
/// fallback client would have no timeouts and could wait forever on a silent server.
pub(crate) fn client_with_timeouts(
    builder: reqwest::ClientBuilder,
) -> Result<reqwest::Client, ClientBuildError> {
    use_ring_for_tls();
    builder
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_IDLE_TIMEOUT)
        .build()
        .map_err(|e| ClientBuildError(error_chain(&e)))
}

/// rustls needs one process-wide crypto provider. reqwest is built without one (its default,
/// aws-lc-rs, compiles a large C library and dominated a cold build); ring is installed here
/// before the first client is built. If the embedding program installed a provider already,
/// that one stays, which is what rustls wants.
fn use_ring_for_tls() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Err only means another thread installed one first: fine either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// An error and its causes, `outer: inner: innermost`.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// `retry-after-ms` (milliseconds, sent by Anthropic and OpenAI) wins over `retry-after`
/// (seconds). An HTTP-date `retry-after` is ignored: the backoff covers it.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    read("retry-after").map(Duration::from_secs_f64)
}

/// A failed request or a broken body stream, from reqwest's point of view.
pub(crate) fn transport_error(err: &reqwest::Error) -> ProviderError {
    if err.is_timeout() {
        ProviderError::Timeout
    } else {
        // reqwest's own Display names the URL; a proxy URL can carry a key in its query,
        // so only the status or the cause chain is kept.
        let message = match err.status() {
            Some(status) => format!("HTTP {status}"),
            None => describe_transport(err),
        };
        ProviderError::Network { message }
    }
}

fn describe_transport(err: &reqwest::Error) -> String {
    let mut text = if err.is_connect() {
        "could not connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The parts of a JSON error body both providers care about, from any of the shapes seen in
/// the wild: Anthropic `{"type":"error","error":{"type","message"}}`, OpenAI
/// `{"error":{"message","type","code"}}`, llama.cpp (same with a numeric `code`), vLLM's
/// top-level `{"object":"error","message","type","code"}` and Ollama's `{"error":"text"}`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ErrorBody {
    pub kind: Option<String>,
    pub code: Option<String>,
    pub message: String,
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
        ErrorBody {
            kind: text("type"),
            code: text("code"),
            message: truncate(&text("message").unwrap_or_default()),
        }
    }

    fn is(&self, name: &str) -> bool {
        self.kind.as_deref() == Some(name) || self.code.as_deref() == Some(name)
    }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

/// Anthropic's over-length message has one shape: `prompt is too long: N tokens > M maximum`.
/// Matching the whole shape (with the numbers) rather than a substring keeps unrelated 400s
/// from being mistaken for it.
pub(crate) fn is_prompt_too_long(message: &str) -> bool {
    const HEAD: &str = "prompt is too long: ";
    let mut rest = message;
    while let Some(pos) = rest.find(HEAD) {
        let after = &rest[pos + HEAD.len()..];
        if let Some(after) = digits_then(after, " tokens > ")
            && digits_then(after, " maximum").is_some()
        {
            return true;
        }
        rest = after;
    }
    false
}

/// If `s` starts with one or more ASCII digits followed by `tail`, what comes after `tail`.
fn digits_then<'a>(s: &'a str, tail: &str) -> Option<&'a str> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    s[n..].strip_prefix(tail)
}

/// Maps an error to its typed form. `status` is `None` for an error event inside a stream
/// that had started with 200.
pub(crate) fn classify(
    status: Option<u16>,
    body: &ErrorBody,
    retry_after: Option<Duration>,
) -> ProviderError {
    let message = if body.message.is_empty() {
        match status {
            Some(s) => format!("HTTP {s}"),
            None => "error event in the response stream".to_string(),
        }
    } else {
        body.message.clone()
    };
    let anthropic_too_long = body.is("invalid_request_error") && is_prompt_too_long(&body.message);
    if anthropic_too_long
        || body.is("context_length_exceeded")
        || body.is("exceed_context_size_error")
    {
        return ProviderError::ContextTooLong { message };
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

/// POSTs `body` and returns the response if its status is a success; otherwise reads the
/// error body and classifies it.
pub(crate) async fn post_json(
    request: reqwest::RequestBuilder,
    body: &Value,
) -> Result<reqwest::Response, AttemptFailure> {
    let response = request
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "text/event-stream")
        .json(body)
        .send()
        .await
        .map_err(|e| AttemptFailure::from(transport_error(&e)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let hint = retry_after(response.headers());
    let text = response.text().await.unwrap_or_default();
    let error = classify(Some(status.as_u16()), &ErrorBody::parse(&text), hint);
    Err(AttemptFailure {
        error,
        retry_after: hint,
    })
}

/// The body as SSE events. A broken connection mid-body is a cut stream (retryable); a
/// stalled one is a timeout.
/// A response being put together from server-sent events; each wire format has one.
pub(crate) trait StreamAssembler {
    fn on_sse(
        &mut self,
        event: &Event,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError>;
    /// The stream said it is done; anything after is not read.
    fn is_complete(&self) -> bool;
    fn into_response(self) -> Result<ModelResponse, ProviderError>;
}

/// Reads a streaming response into `assembler` until it completes or the stream ends.
pub(crate) async fn read_stream<A: StreamAssembler>(
    response: reqwest::Response,
    mut assembler: A,
    events: &UnboundedSender<StreamEvent>,
) -> Result<ModelResponse, AttemptFailure> {
    let mut stream = std::pin::pin!(sse_events(response));
    while let Some(event) = stream.next().await {
        assembler.on_sse(&event?, events)?;
        if assembler.is_complete() {
            break;
        }
    }
    Ok(assembler.into_response()?)
}

pub(crate) fn sse_events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<Event, ProviderError>> {
    response.bytes_stream().eventsource().map(|item| {
        item.map_err(|e| match e {
            EventStreamError::Transport(t) if t.is_timeout() => ProviderError::Timeout,
            _ => ProviderError::StreamCut,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_that_cannot_be_built_is_an_error_not_a_client_without_timeouts() {
        // No TLS version at or below 1.1 exists in rustls: the builder must fail.
        let builder = reqwest::Client::builder().max_tls_version(reqwest::tls::Version::TLS_1_1);
        let err = client_with_timeouts(builder).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot set up the HTTP client: "),
            "{err}"
        );
    }

    #[test]
    fn the_default_client_builds_with_ring() {
        assert!(default_client().is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
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
    }

    #[test]
    fn error_bodies_of_every_known_shape() {
        let a = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9 tokens > 8 maximum"}}"#,
        );
        assert!(matches!(
            classify(Some(400), &a, None),
            ProviderError::ContextTooLong { .. }
        ));
        let other400 = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: prompt is too long"}}"#,
        );
        assert!(matches!(
            classify(Some(400), &other400, None),
            ProviderError::BadRequest { .. }
        ));
        let o = ErrorBody::parse(
            r#"{"error":{"message":"too many","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        );
        assert!(matches!(
            classify(Some(400), &o, None),
            ProviderError::ContextTooLong { .. }
        ));
        let l = ErrorBody::parse(
            r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":9,"n_ctx":8}}"#,
        );
        assert_eq!(l.code.as_deref(), Some("400"));
        assert!(matches!(
            classify(Some(400), &l, None),
            ProviderError::ContextTooLong { .. }
        ));
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
}
