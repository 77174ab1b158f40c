//! What both HTTP providers share: where to POST, sending a JSON POST, and reading an SSE
//! body into an assembler. Error bodies are read by `classify`.
//!
//! It must not know either wire format's success shapes (those live in `anthropic.rs` and
//! `openai.rs`), and it must never put a header value (the key) or a URL's query (a proxy
//! may carry a key there) into an error or a log.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use tokio::sync::mpsc::UnboundedSender;

use super::classify::{ErrorBody, classify, retry_after};
use super::retry::{AttemptFailure, CallLimits, RetryPolicy, with_retries};
use super::sse::{SseDecoder, SseError, SseEvent, StreamLimits};
use super::wire::{SentRequest, WireFormat};
use super::{ModelResponse, ProviderError, StreamEvent};

/// How long to wait for a connection, and for the next bytes of a streaming body. The whole
/// call (attempts and waits together) is bounded by `CallLimits::deadline` instead: a long
/// answer may legitimately stream for minutes, but not forever.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Most bytes of an error body read: only its first 500 chars are kept anyway, and a
/// server must not make the client buffer an endless error page.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The HTTP client could not be set up (TLS, typically), so no model can be called.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the HTTP client: {0}")]
pub struct ClientBuildError(String);

/// Where and how an HTTP provider sends: its client, the server root (without `/v1`) and
/// the retry policy, the call's deadline and retry budget, and the stream's size limits.
/// One request is one `stream` call; the wire format is the caller's.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub client: reqwest::Client,
    pub base_url: String,
    pub retry: RetryPolicy,
    pub limits: CallLimits,
    pub stream_limits: StreamLimits,
}

/// The builders every HTTP provider has (its `endpoint` field's settings, and the body it
/// would send), written once: `endpoint_builders!(AnthropicModel)` gives that type its
/// inherent `with_*` methods and `request_body` (from its own `wire_format`), so callers
/// need no trait in scope.
macro_rules! endpoint_builders {
    ($model:ty) => {
        impl $model {
            /// Server root, e.g. `http://127.0.0.1:8080`. A trailing `/v1` (the way
            /// `OPENAI_BASE_URL` is usually written) or slash is accepted and dropped: both
            /// forms mean the same server, since ctxlab adds the API's own path itself.
            pub fn with_base_url(mut self, base_url: impl Into<String>) -> $model {
                self.endpoint.base_url = $crate::provider::http::server_root(&base_url.into());
                self
            }

            pub fn with_retry(mut self, retry: $crate::provider::RetryPolicy) -> $model {
                self.endpoint.retry = retry;
                self
            }

            /// The call's overall deadline and retry budget.
            pub fn with_call_limits(mut self, limits: $crate::provider::CallLimits) -> $model {
                self.endpoint.limits = limits;
                self
            }

            /// The most one streamed event and one whole answer may hold.
            pub fn with_stream_limits(mut self, limits: $crate::provider::StreamLimits) -> $model {
                self.endpoint.stream_limits = limits;
                self
            }

            pub fn with_client(mut self, client: reqwest::Client) -> $model {
                self.endpoint.client = client;
                self
            }

            /// The JSON body sent for `req`.
            pub fn request_body(&self, req: &$crate::provider::ModelRequest) -> serde_json::Value {
                self.wire_format().body(req)
            }
        }
    };
}
pub(crate) use endpoint_builders;

impl Endpoint {
    /// The default client, at `base_url` as given (a provider's own default root).
    pub(crate) fn new(base_url: &str) -> Result<Endpoint, ClientBuildError> {
        Ok(Endpoint {
            client: default_client()?,
            base_url: base_url.to_string(),
            retry: RetryPolicy::default(),
            limits: CallLimits::default(),
            stream_limits: StreamLimits::default(),
        })
    }

    /// POSTs `body` to `path` under the server root and assembles the streamed answer with
    /// a fresh `A`, attempt after attempt as the retry policy says; `authorize` adds the
    /// wire's headers (the key) to each attempt's request.
    pub(crate) async fn stream<A: StreamAssembler + Default>(
        &self,
        path: &str,
        body: Bytes,
        events: &UnboundedSender<StreamEvent>,
        authorize: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<ModelResponse, ProviderError> {
        let url = format!("{}{path}", self.base_url);
        let (url, authorize, body) = (&url, &authorize, &body);
        with_retries(&self.retry, &self.limits, events, || async move {
            let request = authorize(self.client.post(url));
            // Each attempt sends the one encoded body (a shared buffer, not a copy).
            let response = post_json(request, url, body.clone()).await?;
            read_stream(response, A::default(), events, self.stream_limits).await
        })
        .await
    }
}

/// The bytes to send for `sent`, which must be a body this provider (`format`) encoded and
/// still holds: what goes out is what the record says went out.
pub(crate) fn body_of(sent: &SentRequest, format: &WireFormat) -> Result<Bytes, ProviderError> {
    match sent.bytes() {
        Some(bytes) if sent.format() == format => Ok(bytes.clone()),
        _ => Err(ProviderError::BadRequest {
            message: "the request was not encoded for this provider (or its body was dropped)"
                .into(),
        }),
    }
}

/// The client both providers use unless a test hands in its own.
pub(crate) fn default_client() -> Result<reqwest::Client, ClientBuildError> {
    client_with_timeouts(reqwest::Client::builder())
}

/// `builder` with the connect and read-idle timeouts. A builder that fails is an error: a
/// fallback client would have no timeouts and could wait forever on a silent server.
pub fn client_with_timeouts(
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

/// A server root as users write it, without the API version: `http://host:8080`,
/// `http://host:8080/`, `http://host:8080/v1` and `http://host:8080/v1/` all mean the same
/// server. Most docs and SDKs write `OPENAI_BASE_URL` with `/v1`; ctxlab adds `/v1/...`
/// itself, so a kept `/v1` would post to `/v1/v1/chat/completions`.
pub(crate) fn server_root(base_url: &str) -> String {
    let trimmed = base_url.trim().trim_end_matches('/');
    let root = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    root.trim_end_matches('/').to_string()
}

/// A URL without its query and fragment, for error messages.
fn url_for_display(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
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

/// A request that could not be sent: a connection that failed names the URL tried (without
/// its query), as a 404 does, since a wrong host or port is the usual cause.
fn send_error(err: &reqwest::Error, url: &str) -> ProviderError {
    let mut error = transport_error(err);
    if err.is_connect()
        && let ProviderError::Network { message } = &mut error
        && let Some(rest) = message.strip_prefix(CONNECT_FAILED)
    {
        *message = format!("{CONNECT_FAILED} to {}{rest}", url_for_display(url));
    }
    error
}

const CONNECT_FAILED: &str = "could not connect";

fn describe_transport(err: &reqwest::Error) -> String {
    let mut text = if err.is_connect() {
        CONNECT_FAILED.to_string()
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

/// The start of an error body, at most `MAX_ERROR_BODY_BYTES`.
async fn error_body_text(response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    let mut stream = std::pin::pin!(response.bytes_stream());
    while let Some(Ok(chunk)) = stream.next().await {
        let room = MAX_ERROR_BODY_BYTES - bytes.len();
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= MAX_ERROR_BODY_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// POSTs `body` to `url` and returns the response if its status is a success; otherwise
/// reads the error body and classifies it. A 404 names the URL tried: it is nearly always a
/// base URL with a path too many or too few; so does a connection that failed.
pub(crate) async fn post_json(
    request: reqwest::RequestBuilder,
    url: &str,
    body: Bytes,
) -> Result<reqwest::Response, AttemptFailure> {
    let response = request
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "text/event-stream")
        .body(body)
        .send()
        .await
        .map_err(|e| AttemptFailure::from(send_error(&e, url)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let hint = retry_after(response.headers());
    let text = error_body_text(response).await;
    let mut error = classify(Some(status.as_u16()), &ErrorBody::parse(&text), hint);
    if status == reqwest::StatusCode::NOT_FOUND
        && let ProviderError::BadRequest { message } = &mut error
    {
        *message = format!(
            "{message} (404 Not Found from POST {}; check the base URL)",
            url_for_display(url)
        );
    }
    Err(AttemptFailure {
        error,
        retry_after: hint,
    })
}

/// A response being put together from server-sent events; each wire format has one.
pub(crate) trait StreamAssembler {
    fn on_sse(
        &mut self,
        event: &SseEvent,
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
    limits: StreamLimits,
) -> Result<ModelResponse, AttemptFailure> {
    let mut stream = std::pin::pin!(sse_events(response.bytes_stream(), limits));
    while let Some(event) = stream.next().await {
        assembler.on_sse(&event?, events)?;
        if assembler.is_complete() {
            break;
        }
    }
    Ok(assembler.into_response()?)
}

/// The body as SSE events, decoded by `SseDecoder` (linear in the body, within `limits`).
/// A broken connection mid-body is a cut stream (retryable); a stalled one is a timeout; a
/// body past the limits or with invalid UTF-8 in an event is `InvalidStream` (not retried).
///
/// A body that ends cleanly dispatches its last event even without the blank line that
/// should close it, as the official SDKs do: real recorded Anthropic streams end with
/// `data: {"type":"message_stop"}` and nothing after. A stream that really stops
/// mid-message still fails: a half line is not valid JSON (the assemblers call that a cut),
/// and a whole line that is not the end leaves the message incomplete.
pub(crate) fn sse_events<S, B, E>(
    bytes: S,
    limits: StreamLimits,
) -> impl Stream<Item = Result<SseEvent, ProviderError>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: TransportError,
{
    struct State<S> {
        bytes: std::pin::Pin<Box<S>>,
        decoder: SseDecoder,
        ready: std::collections::VecDeque<SseEvent>,
        /// Handed out once the events decoded before it are.
        failure: Option<ProviderError>,
        /// The body ended or failed: nothing more is read.
        over: bool,
    }
    let state = State {
        bytes: Box::pin(bytes),
        decoder: SseDecoder::new(limits),
        ready: std::collections::VecDeque::new(),
        failure: None,
        over: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        let mut out = Vec::new();
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if let Some(failure) = state.failure.take() {
                return Some((Err(failure), state));
            }
            if state.over {
                return None;
            }
            let step = match state.bytes.next().await {
                Some(Ok(chunk)) => state.decoder.feed(chunk.as_ref(), &mut out),
                Some(Err(e)) => {
                    // A half event stays unsent: the transport failed before its end.
                    state.over = true;
                    state.failure = Some(if e.is_timeout() {
                        ProviderError::Timeout
                    } else {
                        ProviderError::StreamCut
                    });
                    continue;
                }
                None => {
                    state.over = true;
                    state.decoder.finish(&mut out)
                }
            };
            state.ready.extend(out.drain(..));
            if let Err(e) = step {
                state.over = true;
                state.failure = Some(invalid_stream(&e));
            }
        }
    })
}

fn invalid_stream(err: &SseError) -> ProviderError {
    ProviderError::InvalidStream {
        message: err.to_string(),
    }
}

/// What `sse_events` needs to know of a transport error.
pub(crate) trait TransportError {
    fn is_timeout(&self) -> bool;
}

impl TransportError for reqwest::Error {
    fn is_timeout(&self) -> bool {
        reqwest::Error::is_timeout(self)
    }
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

    #[derive(Debug)]
    struct Broken;

    impl TransportError for Broken {
        fn is_timeout(&self) -> bool {
            false
        }
    }

    fn events_of(chunks: Vec<Result<&'static str, Broken>>) -> Vec<Result<String, ProviderError>> {
        let stream = futures::stream::iter(chunks);
        futures::executor::block_on(
            sse_events(stream, StreamLimits::default())
                .map(|r| r.map(|e| format!("{}|{}", e.event, e.data)))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn base_urls_with_or_without_v1_name_the_same_root() {
        for url in [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
            " http://127.0.0.1:8080/v1// ",
        ] {
            assert_eq!(server_root(url), "http://127.0.0.1:8080", "{url}");
        }
        assert_eq!(
            server_root("https://openrouter.ai/api/v1"),
            "https://openrouter.ai/api"
        );
        assert_eq!(server_root("https://h/v1beta"), "https://h/v1beta");
        assert_eq!(url_for_display("http://h/x?key=secret#f"), "http://h/x");
    }

    #[test]
    fn the_last_event_is_dispatched_without_its_blank_line() {
        let got = events_of(vec![
            Ok("event: a\ndata: 1\n\n"),
            Ok("event: message_stop\ndata: {\"type\":\"message_stop\"}"),
        ]);
        assert_eq!(
            got,
            vec![
                Ok("a|1".to_string()),
                Ok("message_stop|{\"type\":\"message_stop\"}".to_string())
            ]
        );
        // With its newline but no blank line: the same.
        let got = events_of(vec![Ok("data: x\n")]);
        assert_eq!(got, vec![Ok("message|x".to_string())]);
    }

    #[test]
    fn a_broken_transport_is_a_cut_and_nothing_is_dispatched_after_it() {
        let got = events_of(vec![Ok("data: 1\n\ndata: hal"), Err(Broken)]);
        assert_eq!(got[0], Ok("message|1".to_string()));
        assert_eq!(got[1], Err(ProviderError::StreamCut));
        assert!(
            !got.iter().any(|e| matches!(e, Ok(s) if s.contains("hal"))),
            "{got:?}"
        );
    }
}
