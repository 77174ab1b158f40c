//! The Anthropic Messages API (`POST /v1/messages`, streamed).
//!
//! Owns the endpoint and the assembly of the SSE stream into a `ModelResponse`; the body
//! (messages sent exactly as stored: the history is already in this API's wire shape) is
//! encoded once by `wire` and those bytes are sent. It must not
//! alter messages, and it must not return a partial answer: a stream that ends without
//! `message_stop` is `StreamCut`, and the retry loop drops whatever was assembled.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::classify::{ErrorBody, classify};
use super::http::{self, ClientBuildError};
use super::wire::{SentRequest, WireFormat};
use super::{
    ApiKey, Model, ModelRequest, ModelResponse, ProviderError, StreamEvent, Usage, emit,
    parse_tool_input,
};
use crate::message::{BlockKind, block};

pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Claude model behind the Messages API (or anything that speaks it).
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    endpoint: http::Endpoint,
    api_key: ApiKey,
    model: String,
}

impl AnthropicModel {
    /// Fails only when the HTTP client cannot be set up.
    pub fn new(
        api_key: ApiKey,
        model: impl Into<String>,
    ) -> Result<AnthropicModel, ClientBuildError> {
        Ok(AnthropicModel {
            endpoint: http::Endpoint::new(ANTHROPIC_BASE_URL)?,
            api_key,
            model: model.into(),
        })
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::AnthropicMessages {
            model: Arc::from(self.model.as_str()),
        }
    }
}

http::endpoint_builders!(AnthropicModel);

/// The Messages API body for `req` (`wire::WireFormat::AnthropicMessages`).
pub(crate) fn body(model: &str, req: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_string()));
    body.insert("max_tokens".into(), json!(req.max_tokens));
    if !req.system.is_empty() {
        body.insert("system".into(), Value::String(req.system.clone()));
    }
    let messages = req.messages.iter().map(|m| m.to_value()).collect();
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), Value::Bool(true));
    Value::Object(body)
}

#[async_trait]
impl Model for AnthropicModel {
    fn describe(&self) -> String {
        format!("anthropic {}", self.model)
    }

    fn encode(&self, req: &ModelRequest) -> SentRequest {
        SentRequest::encode(self.wire_format(), req)
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        self.send(req, &self.encode(req), events).await
    }

    async fn send(
        &self,
        _req: &ModelRequest,
        sent: &SentRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let body = http::body_of(sent, &self.wire_format())?;
        self.endpoint
            .stream::<MessageAssembler>("/v1/messages", body, events, |request| {
                request
                    .header("x-api-key", self.api_key.expose())
                    .header("anthropic-version", ANTHROPIC_VERSION)
            })
            .await
    }
}

#[derive(Debug)]
enum PartialBlock {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// A block type this client does not use (e.g. thinking); dropped from the answer.
    Other,
}

/// Builds one response from the stream's events, in the order the API documents:
/// `message_start`, per block `content_block_start` / `_delta`* / `_stop`, `message_delta`,
/// `message_stop`; `ping` anywhere; `error` ends the attempt.
#[derive(Debug, Default)]
pub(crate) struct MessageAssembler {
    blocks: BTreeMap<u64, PartialBlock>,
    stop_reason: Option<String>,
    usage: Usage,
    finished: bool,
}

/// A `usage` object. With prompt caching, `input_tokens` counts only what came after the
/// last cache breakpoint; the prompt is that plus `cache_read_input_tokens` (served from
/// the cache) plus `cache_creation_input_tokens` (written to it). Sums saturate: the
/// numbers come from the server.
fn usage_of(v: Option<&Value>) -> Option<Usage> {
    let v = v?;
    let count = |key: &str| v.get(key).and_then(Value::as_u64);
    let (uncached, read, created) = (
        count("input_tokens"),
        count("cache_read_input_tokens"),
        count("cache_creation_input_tokens"),
    );
    let input_tokens = match (uncached, read, created) {
        (None, None, None) => None,
        _ => Some(
            uncached
                .unwrap_or(0)
                .saturating_add(read.unwrap_or(0))
                .saturating_add(created.unwrap_or(0)),
        ),
    };
    let usage = Usage {
        input_tokens,
        output_tokens: count("output_tokens"),
        cached_input_tokens: read,
    };
    (usage != Usage::default()).then_some(usage)
}

impl http::StreamAssembler for MessageAssembler {
    fn on_sse(
        &mut self,
        event: &crate::provider::sse::SseEvent,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError> {
        self.on_event(&event.event, &event.data, events)
    }

    fn is_complete(&self) -> bool {
        self.finished
    }

    fn into_response(self) -> Result<ModelResponse, ProviderError> {
        self.finish()
    }
}

impl MessageAssembler {
    pub(crate) fn on_event(
        &mut self,
        name: &str,
        data: &str,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        // A corrupt data line means the bytes were damaged in transit: same as a cut.
        let v: Value = serde_json::from_str(data).map_err(|_| ProviderError::StreamCut)?;
        // An error is named by the event (`event: error`, as llama.cpp sends it, with the
        // bare `{"code","message","type":"server_error"}` as data) or by the data's `type`
        // (`{"type":"error","error":{...}}`, as Anthropic sends it).
        let kind = if name == "error" {
            "error"
        } else {
            v.get("type").and_then(Value::as_str).unwrap_or(name)
        };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                self.add_usage(usage_of(v.pointer("/message/usage")), events);
            }
            "content_block_start" => {
                let start = v.get("content_block").cloned().unwrap_or(Value::Null);
                let text_of = |key: &str| {
                    start
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let block = match BlockKind::of(&start) {
                    BlockKind::Text => {
                        let text = text_of("text");
                        if !text.is_empty() {
                            emit(events, StreamEvent::TextDelta(text.clone()));
                        }
                        PartialBlock::Text(text)
                    }
                    BlockKind::ToolUse => {
                        let (id, name) = (text_of("id"), text_of("name"));
                        emit(
                            events,
                            StreamEvent::ToolUseStarted {
                                id: id.clone(),
                                name: name.clone(),
                            },
                        );
                        PartialBlock::ToolUse {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    _ => PartialBlock::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or("");
                match (
                    delta.get("type").and_then(Value::as_str),
                    self.blocks.get_mut(&index),
                ) {
                    (Some("text_delta"), Some(PartialBlock::Text(text))) => {
                        let piece = piece("text");
                        text.push_str(piece);
                        emit(events, StreamEvent::TextDelta(piece.to_string()));
                    }
                    (Some("input_json_delta"), Some(PartialBlock::ToolUse { json, .. })) => {
                        json.push_str(piece("partial_json"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                self.add_usage(usage_of(v.get("usage")), events);
            }
            "message_stop" => self.finished = true,
            "error" => {
                return Err(classify(None, &ErrorBody::from_value(&v), None));
            }
            // `ping`, `content_block_stop` (inputs are parsed once, at the end) and event
            // types added to the API later.
            _ => {}
        }
        Ok(())
    }

    fn add_usage(&mut self, usage: Option<Usage>, events: &UnboundedSender<StreamEvent>) {
        if let Some(usage) = usage {
            self.usage.merge(usage);
            emit(events, StreamEvent::Usage(self.usage));
        }
    }

    pub(crate) fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.finished {
            return Err(ProviderError::StreamCut);
        }
        let content = self
            .blocks
            .into_values()
            .filter_map(|b| match b {
                // The API rejects empty text blocks in later requests, so none is kept.
                PartialBlock::Text(text) if text.is_empty() => None,
                PartialBlock::Text(text) => Some(block::text(text)),
                PartialBlock::ToolUse { id, name, json } => {
                    Some(block::tool_use(id, name, parse_tool_input(&json)))
                }
                PartialBlock::Other => None,
            })
            .collect();
        Ok(ModelResponse {
            content,
            stop_reason: self.stop_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(&str, &str)]) -> Result<ModelResponse, ProviderError> {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = MessageAssembler::default();
        for (name, data) in events {
            a.on_event(name, data, &tx)?;
        }
        a.finish()
    }

    #[test]
    fn empty_tool_input_is_an_empty_object_and_empty_text_is_dropped() {
        let r = run(&[
            ("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}"#),
            ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            ("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"glob","input":{}}}"#),
            ("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#),
            ("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            ("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ])
        .unwrap();
        assert_eq!(r.content, vec![block::tool_use("t1", "glob", json!({}))]);
        assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: Some(3),
                output_tokens: Some(9),
                cached_input_tokens: None,
            }
        );
    }

    #[test]
    fn missing_message_stop_is_a_cut() {
        let r = run(&[(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"hi"}}"#,
        )]);
        assert_eq!(r, Err(ProviderError::StreamCut));
    }
}
