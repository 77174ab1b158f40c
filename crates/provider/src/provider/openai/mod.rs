//! OpenAI-compatible Chat Completions (`POST /v1/chat/completions`, streamed): OpenAI,
//! vLLM, llama.cpp's server, Ollama and friends.
//!
//! Owns the translation between ctxlab's Anthropic-shaped history and the chat format, both
//! ways: the history is mapped into a request body (`chat`, encoded once by `wire`, whose
//! bytes are sent; it is never modified in place), and the
//! streamed chunks are assembled back into Anthropic blocks. It must not return a partial
//! answer (a stream that ends before `[DONE]` or a finish reason is `StreamCut`) and must
//! never crash on a model's malformed tool arguments (they come back under `_raw`).

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
use crate::message::block;

mod chat;
pub use chat::to_chat_messages;

pub const OPENAI_BASE_URL: &str = "https://api.openai.com";

/// A chat-completions model. The key is optional: local servers take none.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    endpoint: http::Endpoint,
    api_key: Option<ApiKey>,
    model: String,
}

impl OpenAiModel {
    /// Fails only when the HTTP client cannot be set up.
    pub fn new(model: impl Into<String>) -> Result<OpenAiModel, ClientBuildError> {
        Ok(OpenAiModel {
            endpoint: http::Endpoint::new(OPENAI_BASE_URL)?,
            api_key: None,
            model: model.into(),
        })
    }

    pub fn with_api_key(mut self, api_key: ApiKey) -> OpenAiModel {
        self.api_key = Some(api_key);
        self
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::OpenAiChat {
            model: Arc::from(self.model.as_str()),
        }
    }
}

http::endpoint_builders!(OpenAiModel);

/// The chat-completions body for `req` (`wire::WireFormat::OpenAiChat`).
pub(crate) fn body(model: &str, req: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_string()));
    body.insert(
        "messages".into(),
        Value::Array(to_chat_messages(&req.system, &req.messages)),
    );
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert(max_tokens_field(model).into(), json!(req.max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

#[async_trait]
impl Model for OpenAiModel {
    fn describe(&self) -> String {
        format!("openai {}", self.model)
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
            .stream::<ChunkAssembler>("/v1/chat/completions", body, events, |request| match &self
                .api_key
            {
                Some(key) => request.bearer_auth(key.expose()),
                None => request,
            })
            .await
    }
}

/// The name of the output limit for `model`. OpenAI's reasoning models (`o1`, `o3-mini`,
/// `o4-mini`, ...) and the `gpt-5` family reject `max_tokens` and take
/// `max_completion_tokens`; every other server (llama.cpp, vLLM, Ollama, older OpenAI
/// models) knows `max_tokens`, and not all of them the newer name. A routing prefix
/// (`openai/o3`) is looked through.
pub fn max_tokens_field(model: &str) -> &'static str {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = name.starts_with('o') && name[1..].starts_with(|c: char| c.is_ascii_digit());
    if o_series || name.starts_with("gpt-5") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Builds one response from `data:` chunks: text deltas, tool calls accumulated by
/// `index` (id and name first, arguments in pieces), the finish reason, a usage chunk and
/// the closing `[DONE]`.
#[derive(Debug, Default)]
pub(crate) struct ChunkAssembler {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl http::StreamAssembler for ChunkAssembler {
    fn on_sse(
        &mut self,
        event: &crate::provider::sse::SseEvent,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError> {
        // llama.cpp names its in-stream errors with `event: error` (data `{"error": ...}`
        // on this endpoint); whatever the data's shape, the event name says it is one.
        if event.event == "error" {
            return Err(classify(None, &ErrorBody::parse(&event.data), None));
        }
        self.on_data(&event.data, events)
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    fn into_response(self) -> Result<ModelResponse, ProviderError> {
        self.finish()
    }
}

impl ChunkAssembler {
    pub(crate) fn on_data(
        &mut self,
        data: &str,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|_| ProviderError::StreamCut)?;
        if v.get("error").is_some() {
            return Err(classify(None, &ErrorBody::from_value(&v), None));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            // Unlike Anthropic's, `prompt_tokens` already includes the cached part.
            self.usage.merge(Usage {
                input_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
                output_tokens: u.get("completion_tokens").and_then(Value::as_u64),
                cached_input_tokens: u
                    .pointer("/prompt_tokens_details/cached_tokens")
                    .and_then(Value::as_u64),
            });
            emit(events, StreamEvent::Usage(self.usage));
        }
        let Some(choice) = v.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(piece) = choice.pointer("/delta/content").and_then(Value::as_str)
            && !piece.is_empty()
        {
            self.text.push_str(piece);
            emit(events, StreamEvent::TextDelta(piece.to_string()));
        }
        if let Some(calls) = choice
            .pointer("/delta/tool_calls")
            .and_then(Value::as_array)
        {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let partial = self.calls.entry(index).or_default();
                let piece = |ptr: &str| call.pointer(ptr).and_then(Value::as_str).unwrap_or("");
                partial.id.push_str(piece("/id"));
                partial.name.push_str(piece("/function/name"));
                partial.arguments.push_str(piece("/function/arguments"));
                if !partial.announced && !partial.name.is_empty() {
                    partial.announced = true;
                    if partial.id.is_empty() {
                        partial.id = format!("call_{index}");
                    }
                    emit(
                        events,
                        StreamEvent::ToolUseStarted {
                            id: partial.id.clone(),
                            name: partial.name.clone(),
                        },
                    );
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    /// Anthropic blocks: the text first, then the tool calls in index order.
    pub(crate) fn finish(self) -> Result<ModelResponse, ProviderError> {
        // Some servers omit `[DONE]`; a finish reason still proves the answer is whole.
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::StreamCut);
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(block::text(self.text));
        }
        let has_calls = !self.calls.is_empty();
        for (index, call) in self.calls {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            content.push(block::tool_use(
                id,
                call.name,
                parse_tool_input(&call.arguments),
            ));
        }
        // Some servers say `stop` even when they called tools; the calls are what counts,
        // otherwise the agent would leave them unanswered. But an answer cut at its token
        // limit (`length`) or stopped by a filter keeps its own reason: its last call may be
        // half written, and the agent runs no call of an answer that did not stop for
        // `tool_use` (it answers each with an error instead).
        let finished_with_calls = matches!(
            self.finish_reason.as_deref(),
            None | Some("stop" | "tool_calls" | "function_call")
        );
        let stop_reason = if has_calls && finished_with_calls {
            Some("tool_use".to_string())
        } else {
            self.finish_reason.map(|r| match r.as_str() {
                "stop" => "end_turn".to_string(),
                "length" => "max_tokens".to_string(),
                "tool_calls" | "function_call" => "tool_use".to_string(),
                _ => r,
            })
        };
        Ok(ModelResponse {
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(chunks: &[&str]) -> Result<ModelResponse, ProviderError> {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = ChunkAssembler::default();
        for c in chunks {
            a.on_data(c, &tx)?;
        }
        a.finish()
    }

    #[test]
    fn chunks_map_back_to_anthropic_blocks() {
        let r = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"check."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"bash","arguments":"{\"comm"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"not json"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\": \"ls\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_eq!(
            r.content,
            vec![
                block::text("Let me check."),
                block::tool_use("call_a", "bash", json!({"command": "ls"})),
                block::tool_use("call_b", "read_file", json!({"_raw": "not json"})),
            ]
        );
        assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: Some(11),
                output_tokens: Some(7),
                cached_input_tokens: None,
            }
        );
    }

    #[test]
    fn finish_reasons_and_cuts() {
        let stop = |reason: &str| {
            let chunk = format!(
                r#"{{"choices":[{{"index":0,"delta":{{"content":"x"}},"finish_reason":"{reason}"}}]}}"#
            );
            assemble(&[&chunk]).unwrap().stop_reason
        };
        assert_eq!(stop("stop").as_deref(), Some("end_turn"));
        assert_eq!(stop("length").as_deref(), Some("max_tokens"));
        assert_eq!(stop("content_filter").as_deref(), Some("content_filter"));
        assert_eq!(
            assemble(&[r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#]),
            Err(ProviderError::StreamCut)
        );
    }
}
