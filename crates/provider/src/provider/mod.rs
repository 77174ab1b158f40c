//! Model providers: one request in, a streamed response or a typed error out.
//!
//! This module owns the `Model` trait the agent calls, the request/response types, the
//! typed `ProviderError`s and the retry policy for what is safe to retry (rate limits,
//! overload, 5xx, network failures, cut streams). It must not decide anything about the
//! conversation: a prompt that is too long comes back as `ContextTooLong` and the agent
//! compacts; the provider never edits, trims or re-orders the history it is given. It
//! never logs a key or a request body, and it never touches a terminal.
//!
//! Cancellation is by dropping the `stream` future: no implementation spawns tasks or holds
//! state outside the future, so a dropped call leaves nothing behind.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::message::{Message, ToolSpec};

pub mod anthropic;
mod classify;
mod http;
pub mod openai;
pub mod retry;
pub mod scripted;
mod sse;
pub mod wire;

pub use anthropic::AnthropicModel;
pub use http::ClientBuildError;
pub use openai::OpenAiModel;
pub use retry::{CallLimits, RetryPolicy};
pub use scripted::{Scenario, ScenarioError, ScriptedModel};
pub use sse::{DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_EVENT_BYTES, StreamLimits};
pub use wire::{SentRequest, WireFormat};
// For `ctxlab proxy` (crates/proxy/src/proxy/): the same client set-up and the same SSE framing.
pub use http::client_with_timeouts;
pub use sse::{SseDecoder, SseEvent};

/// What the agent asks a model for.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// What the request is for, set by whoever builds it; never sent to a server.
    pub kind: RequestKind,
}

/// What a request is for. The agent knows it when it builds the request, so nothing
/// downstream has to guess it from the prompt's words (the scripted model answers a summary
/// request with a summary instead of its next turn, whatever the strategy's wording).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RequestKind {
    /// A call of the conversation: the history, the tools, the model's next turn.
    #[default]
    Turn,
    /// A summarizing stage's summary request (`compact::SummaryRequest`).
    Summary,
}

/// Token counts, when the server reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The whole prompt, cached parts included: with prompt caching the Anthropic API
    /// counts only the uncached tail in its `input_tokens`, so the providers add the cache
    /// reads and writes back in (an 81-token prompt must not show as 1).
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The share of `input_tokens` served from the server's prompt cache, when it says.
    pub cached_input_tokens: Option<u64>,
}

impl Usage {
    /// Later reports win field by field: servers send input tokens first and output last.
    fn merge(&mut self, later: Usage) {
        if later.input_tokens.is_some() {
            self.input_tokens = later.input_tokens;
        }
        if later.output_tokens.is_some() {
            self.output_tokens = later.output_tokens;
        }
        if later.cached_input_tokens.is_some() {
            self.cached_input_tokens = later.cached_input_tokens;
        }
    }
}

/// Sent while a response streams, for live display only: the returned `ModelResponse` is
/// the truth.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ToolUseStarted {
        id: String,
        name: String,
    },
    Usage(Usage),
    /// An attempt failed and attempt number `attempt` (2 for the first retry) starts after
    /// `wait`: everything streamed so far in this call is discarded.
    Retrying {
        attempt: u32,
        reason: String,
        wait: Duration,
    },
}

/// A complete answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Anthropic-shaped blocks: `text` and `tool_use`, in the order the model produced them.
    pub content: Vec<Value>,
    pub stop_reason: Option<String>,
    pub usage: Usage,
}

/// Why a call failed, typed so the agent can react (compact, wait, ask for a key, give up).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The prompt does not fit the model's window. The numbers are the server's own, when
    /// its error gives them (llama.cpp's `n_prompt_tokens` / `n_ctx`, Anthropic's `N tokens
    /// > M maximum`), so the agent can say by how much and size a summary request to fit.
    /// `window_chars` is a window counted in chars, the scripted model's simulated one.
    #[error("prompt is too long for the model's context window: {message}")]
    ContextTooLong {
        message: String,
        prompt_tokens: Option<u64>,
        window_tokens: Option<u64>,
        window_chars: Option<u64>,
    },
    #[error("rate limited{}", match retry_after { Some(d) => format!(" (retry after {:.1}s)", d.as_secs_f64()), None => String::new() })]
    RateLimited { retry_after: Option<Duration> },
    #[error("the model is overloaded")]
    Overloaded,
    #[error("server error {status}: {message}")]
    Server { status: u16, message: String },
    #[error("authentication failed: {message}")]
    Auth { message: String },
    #[error("bad request: {message}")]
    BadRequest { message: String },
    #[error("network error: {message}")]
    Network { message: String },
    #[error("the request timed out")]
    Timeout,
    #[error("the response stream ended before the message was complete")]
    StreamCut,
    /// The answer cannot be read as sent (an event or the answer past its size limit,
    /// invalid UTF-8 in an event): sending the same request again would not help.
    #[error("the server's answer cannot be read: {message}")]
    InvalidStream { message: String },
    /// The whole call (every attempt and every wait) ran past `CallLimits::deadline`.
    #[error("the model call did not finish within its deadline of {} s", limit.as_secs())]
    Deadline { limit: Duration },
}

impl ProviderError {
    /// Only failures where sending the same request again can succeed. A prompt that is too
    /// long, a bad key or a malformed request fail the same way every time.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            ProviderError::ContextTooLong { .. }
                | ProviderError::Auth { .. }
                | ProviderError::BadRequest { .. }
                | ProviderError::InvalidStream { .. }
                | ProviderError::Deadline { .. }
        )
    }
}

/// A language model the agent can call.
#[async_trait]
pub trait Model: Send + Sync {
    /// Provider and model for the status bar, e.g. `anthropic claude-sonnet-4-5`.
    fn describe(&self) -> String;

    /// Sends one request and streams the answer. Retries (if any) happen inside; each one
    /// is announced with `StreamEvent::Retrying`. A closed `events` receiver is not an
    /// error: the call still completes.
    async fn stream(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError>;

    /// `req` as this model receives it, serialized once: an HTTP provider's wire body. A
    /// model inside the process reads the `ModelRequest` itself, so by default the record
    /// is ctxlab's own request shape (`WireFormat::Record`), which says no bytes were sent.
    fn encode(&self, req: &ModelRequest) -> SentRequest {
        SentRequest::encode(WireFormat::Record, req)
    }

    /// `stream` for a request already encoded by `encode`: an HTTP provider sends exactly
    /// `sent`'s bytes, so the record of them is what the server received.
    async fn send(
        &self,
        req: &ModelRequest,
        _sent: &SentRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        self.stream(req, events).await
    }

    /// Sets the pause between streamed pieces, for a model that plays at a pace (the
    /// scripted one, `/pace` in the workbench); applies from the next piece. Returns false
    /// when the model has no pace (a real API streams at its own speed).
    fn set_pace(&self, _pace: Duration) -> bool {
        false
    }

    /// Plays on as if `answered` turn calls had been answered already ("continue from call
    /// N" in the workbench): the scripted model goes to that turn of its script. Returns
    /// false for a model without a script (a real API answers what it is sent).
    fn resume_at(&self, _answered: usize) -> bool {
        false
    }
}

/// A secret API key. It prints as `ApiKey(***)` in both `Debug` and `Display` so it cannot
/// leak through a log line or an error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The raw key, for the one place that puts it in a header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// The body of a wire format, by its provider's encoder (`wire` dispatches here, so that
/// it imports no provider and each provider may import it).
pub(crate) fn wire_body(format: &WireFormat, req: &ModelRequest) -> Value {
    match format {
        WireFormat::AnthropicMessages { model } => anthropic::body(model, req),
        WireFormat::OpenAiChat { model } => openai::body(model, req),
        WireFormat::Record => format.body(req),
    }
}

/// Sends an event if anyone still listens; a UI that went away must not fail the call.
pub(crate) fn emit(events: &UnboundedSender<StreamEvent>, event: StreamEvent) {
    let _ = events.send(event);
}

/// Parses a tool's streamed argument text. Empty means no arguments; text that is not a JSON
/// object is kept under `_raw` so the agent can report it instead of crashing.
pub fn parse_tool_input(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        _ => serde_json::json!({ "_raw": raw }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn api_key_never_prints() {
        let key = ApiKey::new("sk-ant-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(format!("{key}"), "ApiKey(***)");
        assert!(!format!("{:?}", Some(key.clone())).contains("secret"));
        assert_eq!(key.expose(), "sk-ant-secret-123");
    }

    #[test]
    fn tool_input_parsing_never_fails() {
        assert_eq!(parse_tool_input(""), json!({}));
        assert_eq!(parse_tool_input("{\"a\": 1}"), json!({"a": 1}));
        assert_eq!(parse_tool_input("{\"a\": "), json!({"_raw": "{\"a\": "}));
        assert_eq!(parse_tool_input("[1]"), json!({"_raw": "[1]"}));
    }

    #[test]
    fn only_transient_errors_are_retryable() {
        assert!(ProviderError::Overloaded.is_retryable());
        assert!(ProviderError::StreamCut.is_retryable());
        assert!(ProviderError::RateLimited { retry_after: None }.is_retryable());
        assert!(
            !ProviderError::ContextTooLong {
                message: String::new(),
                prompt_tokens: None,
                window_tokens: None,
                window_chars: None,
            }
            .is_retryable()
        );
        assert!(
            !ProviderError::Auth {
                message: String::new()
            }
            .is_retryable()
        );
        assert!(
            !ProviderError::BadRequest {
                message: String::new()
            }
            .is_retryable()
        );
        assert!(
            !ProviderError::InvalidStream {
                message: String::new()
            }
            .is_retryable()
        );
        assert!(
            !ProviderError::Deadline {
                limit: Duration::from_secs(1)
            }
            .is_retryable()
        );
    }
}
