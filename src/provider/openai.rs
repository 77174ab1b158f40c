//! OpenAI-compatible Chat Completions (`POST /v1/chat/completions`, streamed): OpenAI,
//! vLLM, llama.cpp's server, Ollama and friends.
//!
//! Owns the translation between ctxlab's Anthropic-shaped history and the chat format, both
//! ways: the history is mapped into a request body (it is never modified in place), and the
//! streamed chunks are assembled back into Anthropic blocks. It must not return a partial
//! answer (a stream that ends before `[DONE]` or a finish reason is `StreamCut`) and must
//! never crash on a model's malformed tool arguments (they come back under `_raw`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::http::{self, ClientBuildError, ErrorBody};
use super::retry::{AttemptFailure, with_retries};
use super::{
    ApiKey, Model, ModelRequest, ModelResponse, ProviderError, RetryPolicy, StreamEvent, Usage,
    emit, parse_tool_input,
};
use crate::message::{Content, Message, ResultContent, block, block_type};

pub const OPENAI_BASE_URL: &str = "https://api.openai.com";

/// A chat-completions model. The key is optional: local servers take none.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    client: reqwest::Client,
    base_url: String,
    api_key: Option<ApiKey>,
    model: String,
    retry: RetryPolicy,
}

impl OpenAiModel {
    /// Fails only when the HTTP client cannot be set up.
    pub fn new(model: impl Into<String>) -> Result<OpenAiModel, ClientBuildError> {
        Ok(OpenAiModel {
            client: http::default_client()?,
            base_url: OPENAI_BASE_URL.to_string(),
            api_key: None,
            model: model.into(),
            retry: RetryPolicy::default(),
        })
    }

    pub fn with_api_key(mut self, api_key: ApiKey) -> OpenAiModel {
        self.api_key = Some(api_key);
        self
    }

    /// Server root without the `/v1/chat/completions` path, e.g. `http://127.0.0.1:11434`.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> OpenAiModel {
        self.base_url = base_url.into().trim_end_matches('/').to_string();
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> OpenAiModel {
        self.retry = retry;
        self
    }

    pub fn with_client(mut self, client: reqwest::Client) -> OpenAiModel {
        self.client = client;
        self
    }

    /// The JSON body sent for `req`.
    pub fn request_body(&self, req: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.model.clone()));
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
        body.insert("max_tokens".into(), json!(req.max_tokens));
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        Value::Object(body)
    }

    async fn attempt(
        &self,
        body: &Value,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, AttemptFailure> {
        let mut request = self
            .client
            .post(format!("{}/v1/chat/completions", self.base_url));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let response = http::post_json(request, body).await?;
        http::read_stream(response, ChunkAssembler::default(), events).await
    }
}

#[async_trait]
impl Model for OpenAiModel {
    fn describe(&self) -> String {
        format!("openai {}", self.model)
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let body = self.request_body(req);
        with_retries(&self.retry, events, || self.attempt(&body, events)).await
    }
}

/// Maps the Anthropic-shaped history to chat messages.
///
/// - the system text becomes a leading `system` message;
/// - an assistant's text blocks become `content` (joined by newlines; `null` when it only
///   calls tools) and its `tool_use` blocks `tool_calls` with the input as a JSON string;
/// - a user's `tool_result` blocks become one `tool` message each, in order and before any
///   text of the same message, because the chat format wants tool answers right after the
///   call; the text blocks become one `user` message;
/// - other block types (images, documents) have no text form here and are left out.
pub fn to_chat_messages(system: &str, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in messages {
        let blocks = match m.content() {
            Content::Text(text) => {
                out.push(json!({"role": m.role(), "content": text}));
                continue;
            }
            Content::Blocks(blocks) => blocks,
        };
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        if m.role() == "assistant" {
            let calls: Vec<Value> = m
                .tool_uses()
                .map(|b| {
                    let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
                    let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                    json!({
                        "id": text("id"),
                        "type": "function",
                        "function": {"name": text("name"), "arguments": input.to_string()},
                    })
                })
                .collect();
            let content = if texts.is_empty() && !calls.is_empty() {
                Value::Null
            } else {
                Value::String(texts.join("\n"))
            };
            let mut msg = Map::new();
            msg.insert("role".into(), "assistant".into());
            msg.insert("content".into(), content);
            if !calls.is_empty() {
                msg.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(msg));
            continue;
        }
        for result in m.tool_results() {
            let id = result
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            out.push(json!({
                "role": "tool",
                "tool_call_id": id,
                "content": flatten_result(ResultContent::of(result)),
            }));
        }
        if !texts.is_empty() {
            out.push(json!({"role": m.role(), "content": texts.join("\n")}));
        }
    }
    out
}

/// A tool result as plain text: list content is its text items joined by newlines, other
/// items as compact JSON so nothing silently disappears.
fn flatten_result(content: ResultContent<'_>) -> String {
    match content {
        ResultContent::Text(s) => s.to_string(),
        ResultContent::Empty => String::new(),
        ResultContent::Blocks(items) => items
            .iter()
            .map(|item| match (block_type(item), item.get("text")) {
                (Some("text"), Some(Value::String(t))) => t.clone(),
                _ => item.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
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
        event: &eventsource_stream::Event,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<(), ProviderError> {
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
            return Err(http::classify(None, &ErrorBody::from_value(&v), None));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage.merge(Usage {
                input_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
                output_tokens: u.get("completion_tokens").and_then(Value::as_u64),
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
        // otherwise the agent would leave them unanswered.
        let stop_reason = if has_calls {
            Some("tool_use".to_string())
        } else {
            self.finish_reason.map(|r| match r.as_str() {
                "stop" => "end_turn".to_string(),
                "length" => "max_tokens".to_string(),
                "tool_calls" => "tool_use".to_string(),
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
    fn history_maps_to_chat_messages() {
        let history = vec![
            Message::user_text("fix it"),
            Message::assistant_blocks(vec![
                block::text("Looking."),
                block::tool_use("toolu_1", "bash", json!({"command": "ls"})),
                block::tool_use("toolu_2", "glob", json!({"pattern": "*.rs"})),
            ]),
            Message::user_blocks(vec![
                block::tool_result("toolu_1", "a\nb"),
                json!({"type": "tool_result", "tool_use_id": "toolu_2",
                       "content": [{"type": "text", "text": "x.rs"}, {"type": "text", "text": "y.rs"}]}),
                block::text("and hurry"),
            ]),
            Message::assistant_blocks(vec![block::tool_use("toolu_3", "compact", json!({}))]),
            Message::user_blocks(vec![
                json!({"type": "tool_result", "tool_use_id": "toolu_3"}),
            ]),
        ];
        let chat = to_chat_messages("be brief", &history);
        assert_eq!(
            Value::Array(chat),
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "fix it"},
                {"role": "assistant", "content": "Looking.", "tool_calls": [
                    {"id": "toolu_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                    {"id": "toolu_2", "type": "function", "function": {"name": "glob", "arguments": "{\"pattern\":\"*.rs\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a\nb"},
                {"role": "tool", "tool_call_id": "toolu_2", "content": "x.rs\ny.rs"},
                {"role": "user", "content": "and hurry"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "toolu_3", "type": "function", "function": {"name": "compact", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "toolu_3", "content": ""}
            ])
        );
        assert!(to_chat_messages("", &history[..1]).len() == 1);
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
                output_tokens: Some(7)
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
