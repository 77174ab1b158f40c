//! The line format of `ctxlab proxy`'s captures (docs/capture.md): one JSON object per
//! line, `type` first, a `header` line first of all naming the format and its version, then
//! one `exchange` line per request the proxy forwarded, written when the exchange completed.
//! The writer (the `proxy` module) and the reader (`super::read`) share these types, so the
//! two cannot drift apart. Header values are only ever present for names `header_value_kept`
//! allows: a key or a token never reaches a capture.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The value of the header's `format`.
pub const CAPTURE_FORMAT: &str = "ctxlab-capture";
/// The version this build writes and reads; a newer one is read as far as it is understood.
pub const CAPTURE_VERSION: u32 = 1;

/// One line of a capture. Unknown fields are ignored, so a later version may add some.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CaptureLine {
    /// Always the first line.
    Header(CaptureHeader),
    /// One request and its response, written when the response ended (or failed).
    Exchange(Box<Exchange>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureHeader {
    pub format: String,
    pub version: u32,
    /// The ctxlab version that wrote it.
    pub ctxlab: String,
    /// ISO 8601 UTC.
    pub started: String,
    /// The address the proxy listened on.
    pub listen: String,
    /// The `--upstream` URL, when one was given (else the default by path).
    #[serde(default)]
    pub upstream: Option<String>,
}

/// Which API a request's path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKind {
    /// `/v1/messages`.
    AnthropicMessages,
    /// `/v1/messages/count_tokens`.
    AnthropicCountTokens,
    /// `/v1/chat/completions`.
    OpenaiChat,
    /// `/v1/responses`.
    OpenaiResponses,
    /// Any other path: forwarded and recorded, not assembled.
    Other,
}

impl ApiKind {
    /// The API of a request path (its query removed, a prefix before `/v1/` allowed).
    pub fn of_path(path: &str) -> ApiKind {
        let path = path.split(['?', '#']).next().unwrap_or(path);
        let path = path.trim_end_matches('/');
        if path.ends_with("/v1/messages/count_tokens") {
            ApiKind::AnthropicCountTokens
        } else if path.ends_with("/v1/messages") {
            ApiKind::AnthropicMessages
        } else if path.ends_with("/v1/chat/completions") || path.ends_with("/chat/completions") {
            ApiKind::OpenaiChat
        } else if path.ends_with("/v1/responses") || path.ends_with("/responses") {
            ApiKind::OpenaiResponses
        } else {
            ApiKind::Other
        }
    }

    /// Whether a request of this API is a model call with a conversation.
    pub fn is_model_call(self) -> bool {
        matches!(
            self,
            ApiKind::AnthropicMessages | ApiKind::OpenaiChat | ApiKind::OpenaiResponses
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ApiKind::AnthropicMessages => "anthropic_messages",
            ApiKind::AnthropicCountTokens => "anthropic_count_tokens",
            ApiKind::OpenaiChat => "openai_chat",
            ApiKind::OpenaiResponses => "openai_responses",
            ApiKind::Other => "other",
        }
    }
}

/// One header: its name always, its value only for the names `header_value_kept` allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedHeader {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Header names whose values a capture keeps: what says how a request was made and answered,
/// never who made it.
const KEPT_VALUES: &[&str] = &[
    "content-type",
    "content-length",
    "content-encoding",
    "accept",
    "anthropic-version",
    "anthropic-beta",
    "openai-beta",
    "user-agent",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-request-id",
    "openai-processing-ms",
    "anthropic-ratelimit-requests-remaining",
    "x-ratelimit-remaining-requests",
    // Codex says what a request is for (`"request_kind":"compaction"`): the reader needs it
    // to tell a compaction request from a call. It names installation, session and turn ids,
    // no key.
    "x-codex-turn-metadata",
];

/// Whether a header's value may be written anywhere (a capture, a log, a line on screen).
/// An allow list, and on top of it a deny test that no allowed name can pass by mistake:
/// anything naming a key, a token, a secret, a cookie or auth is never kept.
pub fn header_value_kept(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let secret = [
        "key", "token", "auth", "cookie", "secret", "session", "password",
    ]
    .iter()
    .any(|w| lower.contains(w));
    !secret && KEPT_VALUES.contains(&lower.as_str())
}

/// One forwarded exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// 1-based, in the order requests arrived.
    pub n: u64,
    /// When the request arrived (ISO 8601 UTC, milliseconds).
    pub started: String,
    pub method: String,
    /// The request path, without its query (a query may carry a key).
    pub path: String,
    pub api: ApiKind,
    /// The upstream's root the request went to (scheme, host, port, path prefix).
    pub upstream: String,
    pub request: CapturedRequest,
    pub response: CapturedResponse,
    pub timing: Timing,
    /// The proxy's own failure, when the exchange did not complete: the upstream could not
    /// be reached, the client went away, the request body broke off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The request as it arrived and went on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedRequest {
    pub headers: Vec<RecordedHeader>,
    /// The body's length and SHA-256 (hex), over the exact bytes forwarded.
    pub bytes: u64,
    pub sha256: String,
    /// The body, when it is JSON and within the capture's cap (`CapturedRequest::body_omitted`
    /// says why not otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_omitted: Option<String>,
    /// Set when the request was a message on a WebSocket (Codex's Responses transport)
    /// rather than an HTTP request of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<WebsocketMessage>,
}

/// A request sent as a `response.create` message on a WebSocket (docs/capture.md,
/// "WebSocket"): `bytes` and `sha256` are the message's; `body` is the message with its
/// `input` preceded by the items the proxy carried over from the response it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebsocketMessage {
    /// The WebSocket's number in this capture (1-based, in the order they opened) and the
    /// message's on it: the exchanges of one connection share the first.
    pub connection: u64,
    pub message: u64,
    /// The `previous_response_id` the message names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// How many items (that response's input and output) the proxy put before the
    /// message's own input; None when it names no response, or one the proxy did not see
    /// on this connection (then the body is the message as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_carried: Option<u64>,
}

/// Token counts in the Anthropic sense: `input_tokens` without the cached part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_creation_tokens: u64,
}

/// A tool call of the answer, its arguments parsed when they are JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// The response as the proxy passed it on, and what it said, assembled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CapturedResponse {
    /// None when no response came from the upstream.
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub headers: Vec<RecordedHeader>,
    /// Body bytes passed to the client.
    #[serde(default)]
    pub bytes: u64,
    /// A `text/event-stream` body, and how many events it held.
    #[serde(default)]
    pub streamed: bool,
    #[serde(default)]
    pub events: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<CapturedToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CapturedUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The API's error, in its words (an error status's body, an SSE `error` event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the answer is not assembled when it is not (compressed, too large, not JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_assembled: Option<String>,
    /// The context edits the server says it applied before the model read the request
    /// (Anthropic's `context_management.applied_edits`), each as the API sent it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_edits: Vec<Value>,
    /// A compaction the server made itself (Anthropic's `compaction` block, the Responses
    /// API's `compaction` item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_compaction: Option<ServerCompaction>,
}

/// A server-side compaction in an answer: what replaces the history from the next request
/// on (docs/capture.md, "The server's own edits").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCompaction {
    /// Its summary text (Anthropic's block `content`, up to 4 MiB); empty when opaque (the
    /// Responses API's `encrypted_content`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The bytes of its content as sent (the text, or the encrypted content).
    pub bytes: u64,
}

/// Milliseconds since the request arrived at the proxy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// The upstream's status line and headers arrived.
    #[serde(default)]
    pub headers_ms: Option<f64>,
    /// The first body byte arrived (and was passed on).
    #[serde(default)]
    pub first_byte_ms: Option<f64>,
    /// The last body byte arrived.
    #[serde(default)]
    pub last_byte_ms: Option<f64>,
}

/// Whether a parsed line is a capture's header.
pub fn is_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("header")
        && v.get("format").and_then(Value::as_str) == Some(CAPTURE_FORMAT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_api() {
        assert_eq!(ApiKind::of_path("/v1/messages"), ApiKind::AnthropicMessages);
        assert_eq!(
            ApiKind::of_path("/v1/messages/count_tokens?beta=true"),
            ApiKind::AnthropicCountTokens
        );
        assert_eq!(
            ApiKind::of_path("/v1/messages?beta=true"),
            ApiKind::AnthropicMessages
        );
        assert_eq!(
            ApiKind::of_path("/v1/chat/completions"),
            ApiKind::OpenaiChat
        );
        assert_eq!(ApiKind::of_path("/v1/responses"), ApiKind::OpenaiResponses);
        assert_eq!(ApiKind::of_path("/v1/models"), ApiKind::Other);
    }

    #[test]
    fn no_secret_header_value_is_kept() {
        for name in [
            "authorization",
            "x-api-key",
            "Cookie",
            "x-goog-api-key",
            "api-key",
        ] {
            assert!(!header_value_kept(name), "{name}");
        }
        assert!(header_value_kept("Content-Type"));
        assert!(header_value_kept("retry-after"));
        assert!(!header_value_kept("x-custom"));
    }
}
