//! The request body a model received, serialized once: the bytes an HTTP provider puts on
//! the wire, and the record the timeline keeps of them (docs/architecture.md, "The exact
//! request").
//!
//! Owns `WireFormat` (which shape a body has, and the one encoder of each shape) and
//! `SentRequest` (the body, its length and SHA-256). A provider encodes a request here and
//! sends those very bytes; the agent hands the same `SentRequest` to the front ends, so what
//! the timeline shows cannot drift from what went out. A record may drop its bytes to stay
//! within a memory budget (`without_bytes`): its length and digest stay, and `rebuild`
//! encodes the request again with the same encoder and checks the result against them.
//! It knows nothing of HTTP or of a terminal.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ModelRequest;

/// The shape of a request body, with what the encoder needs besides the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireFormat {
    /// `POST /v1/messages` of the Anthropic Messages API.
    AnthropicMessages { model: Arc<str> },
    /// `POST /v1/chat/completions` of an OpenAI-compatible server.
    OpenAiChat { model: Arc<str> },
    /// No wire: a model inside this process (the scripted one, a test's) read the
    /// `ModelRequest` itself; the record is ctxlab's own request shape (`system`, `tools`,
    /// `max_tokens`, `messages`), Anthropic-like.
    Record,
}

impl WireFormat {
    /// The body for `req`, as JSON.
    pub fn body(&self, req: &ModelRequest) -> Value {
        match self {
            // Each wire's encoder lives with its provider (`super::wire_body` dispatches).
            WireFormat::AnthropicMessages { .. } | WireFormat::OpenAiChat { .. } => {
                super::wire_body(self, req)
            }
            WireFormat::Record => record_body(req),
        }
    }

    /// The body for `req`, serialized: the bytes sent.
    pub fn encode(&self, req: &ModelRequest) -> Vec<u8> {
        // Serializing a `Value` cannot fail (its keys are strings).
        serde_json::to_vec(&self.body(req)).unwrap_or_default()
    }

    /// Whether the body went over a wire to a server.
    pub fn is_wire(&self) -> bool {
        !matches!(self, WireFormat::Record)
    }

    /// A few words for a title: `exact request: OpenAI chat body as sent`.
    pub fn label(&self) -> &'static str {
        match self {
            WireFormat::AnthropicMessages { .. } => "exact request: Anthropic body as sent",
            WireFormat::OpenAiChat { .. } => "exact request: OpenAI chat body as sent",
            WireFormat::Record => "request record, no bytes sent",
        }
    }

    /// What the body is, in a sentence.
    pub fn describe(&self) -> &'static str {
        match self {
            WireFormat::AnthropicMessages { .. } => {
                "the body sent to POST /v1/messages (Anthropic Messages), byte for byte"
            }
            WireFormat::OpenAiChat { .. } => {
                "the body sent to POST /v1/chat/completions (OpenAI chat), byte for byte"
            }
            WireFormat::Record => {
                "no bytes were sent: an in-process model (scripted) read ctxlab's own request \
                 record, shown here in that shape"
            }
        }
    }
}

/// One request as the model received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentRequest {
    format: WireFormat,
    /// None once dropped to save memory; `len` and `sha256` stay.
    bytes: Option<Bytes>,
    len: usize,
    sha256: [u8; 32],
}

/// A record's bytes could not be had again: the request rebuilt from the kept messages is
/// not the one sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the body was not kept ({len} bytes) and the request rebuilt from the kept messages differs from it"
)]
pub struct RebuildMismatch {
    pub len: usize,
}

impl SentRequest {
    /// Encodes `req` in `format`, once.
    pub fn encode(format: WireFormat, req: &ModelRequest) -> SentRequest {
        let bytes = format.encode(req);
        SentRequest::from_bytes(format, Bytes::from(bytes))
    }

    fn from_bytes(format: WireFormat, bytes: Bytes) -> SentRequest {
        let sha256 = Sha256::digest(&bytes).into();
        SentRequest {
            format,
            len: bytes.len(),
            bytes: Some(bytes),
            sha256,
        }
    }

    pub fn format(&self) -> &WireFormat {
        &self.format
    }

    /// The body's length in bytes (kept or not).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The body as sent, while kept. Cloning the `Bytes` shares them (no copy): the wire
    /// and the record hold one buffer.
    pub fn bytes(&self) -> Option<&Bytes> {
        self.bytes.as_ref()
    }

    /// The SHA-256 of the body, in hex.
    pub fn sha256_hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The same record without its bytes (length and digest kept).
    pub fn without_bytes(&self) -> SentRequest {
        SentRequest {
            format: self.format.clone(),
            bytes: None,
            len: self.len,
            sha256: self.sha256,
        }
    }

    /// The body: the kept bytes, or `req` encoded again and checked against the length and
    /// digest of the body sent. `req` must be the request the record was made from.
    pub fn body_or_rebuild(
        &self,
        req: impl FnOnce() -> ModelRequest,
    ) -> Result<Bytes, RebuildMismatch> {
        if let Some(b) = &self.bytes {
            return Ok(b.clone());
        }
        let again = self.format.encode(&req());
        let digest: [u8; 32] = Sha256::digest(&again).into();
        if again.len() == self.len && digest == self.sha256 {
            Ok(Bytes::from(again))
        } else {
            Err(RebuildMismatch { len: self.len })
        }
    }
}

/// `body` pretty-printed (keys in the order sent), for a viewer; text that is not JSON is
/// shown as text.
pub fn pretty(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_default(),
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    }
}

/// ctxlab's own request shape: what an in-process model reads.
fn record_body(req: &ModelRequest) -> Value {
    let mut out = Map::new();
    if !req.system.is_empty() {
        out.insert("system".into(), req.system.as_str().into());
    }
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or_default())
            .collect();
        out.insert("tools".into(), Value::Array(tools));
    }
    out.insert("max_tokens".into(), req.max_tokens.into());
    let messages = req.messages.iter().map(|m| m.to_value()).collect();
    out.insert("messages".into(), Value::Array(messages));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, ToolSpec};
    use serde_json::json;

    fn req() -> ModelRequest {
        ModelRequest {
            system: "be brief".into(),
            messages: vec![Message::user_text("hi \u{e9}")],
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: "run".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 64,
            ..ModelRequest::default()
        }
    }

    #[test]
    fn each_format_has_its_own_shape() {
        let openai = WireFormat::OpenAiChat {
            model: Arc::from("m"),
        }
        .body(&req());
        assert_eq!(openai["messages"][0]["role"], "system");
        assert!(openai.get("system").is_none());
        assert_eq!(
            openai["tools"][0]["function"]["parameters"]["type"],
            "object"
        );
        let anthropic = WireFormat::AnthropicMessages {
            model: Arc::from("m"),
        }
        .body(&req());
        assert_eq!(anthropic["system"], "be brief");
        assert_eq!(anthropic["tools"][0]["input_schema"]["type"], "object");
        assert!(WireFormat::Record.body(&req()).get("model").is_none());
    }

    #[test]
    fn a_record_without_its_bytes_rebuilds_them_or_says_it_cannot() {
        let format = WireFormat::OpenAiChat {
            model: Arc::from("m"),
        };
        let sent = SentRequest::encode(format, &req());
        let kept = sent.bytes().cloned().unwrap();
        let slim = sent.without_bytes();
        assert!(slim.bytes().is_none());
        assert_eq!(slim.len(), kept.len());
        assert_eq!(slim.body_or_rebuild(req).unwrap(), kept);
        let other = || ModelRequest {
            max_tokens: 65,
            ..req()
        };
        assert_eq!(
            slim.body_or_rebuild(other),
            Err(RebuildMismatch { len: kept.len() })
        );
        assert_eq!(sent.sha256_hex().len(), 64);
    }
}
