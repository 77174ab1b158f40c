//! HTTP providers against a local wiremock server: a `text/event-stream` response, and the
//! two wire formats' SSE bodies (Anthropic's named events, OpenAI's `data:` chunks) built
//! from their real shapes, plus each provider pointed at the mock server.

use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A 200 answer streaming `body` as server-sent events.
pub fn ok_sse(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into(), "text/event-stream")
}

/// Answers the next POST (after the answers mounted before it are used) with `response`,
/// and checks that exactly one POST got it.
pub async fn once(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .respond_with(response)
        .up_to_n_times(1)
        .expect(1)
        .mount(server)
        .await;
}

/// Answers every POST from here on (after the answers mounted before) with `response`.
pub async fn always(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .respond_with(response)
        .mount(server)
        .await;
}

/// Like `always`, and checks that exactly `times` POSTs got it.
pub async fn exactly(server: &MockServer, response: ResponseTemplate, times: u64) {
    Mock::given(method("POST"))
        .respond_with(response)
        .expect(times)
        .mount(server)
        .await;
}

/// The Anthropic Messages API's stream: `event: NAME` / `data: JSON` pairs.
pub mod anthropic {
    use ctxlab::provider::{AnthropicModel, ApiKey};
    use serde_json::{Value, json};
    use wiremock::MockServer;

    use crate::common::provider::fast_retry;

    /// A key that must never show in an error, a log or a debug print.
    pub const KEY: &str = "sk-ant-test-secret-0042";

    /// The model, pointed at `server`, trying each call `attempts` times.
    pub fn model(server: &MockServer, attempts: u32) -> AnthropicModel {
        AnthropicModel::new(ApiKey::new(KEY), "claude-test-1")
            .unwrap()
            .with_base_url(server.uri())
            .with_retry(fast_retry(attempts))
    }

    /// The SSE body of `events`, in order.
    pub fn sse(events: &[(&str, Value)]) -> String {
        events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect()
    }

    pub fn start() -> (&'static str, Value) {
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "model": "claude-test-1", "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        )
    }

    /// One text block sent as a single delta.
    pub fn text_block(index: u64, text: &str) -> Vec<(&'static str, Value)> {
        vec![
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ),
        ]
    }

    pub fn end(stop_reason: &str) -> Vec<(&'static str, Value)> {
        vec![
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]
    }

    /// A whole, well-formed answer made of one text block.
    pub fn simple_answer(text: &str) -> String {
        let mut ev = vec![start()];
        ev.extend(text_block(0, text));
        ev.extend(end("end_turn"));
        sse(&ev)
    }

    /// The JSON error body Anthropic sends with a failing status (or as an `error` event).
    pub fn error_body(kind: &str, message: &str) -> Value {
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }
}

/// The Chat Completions stream: `data: CHUNK` lines, a usage chunk, `data: [DONE]`.
pub mod openai {
    use ctxlab::provider::{ApiKey, OpenAiModel};
    use serde_json::{Value, json};
    use wiremock::MockServer;

    use crate::common::provider::fast_retry;

    /// A key that must never show in an error, a log or a debug print.
    pub const KEY: &str = "sk-proj-test-secret-7777";

    /// The model with a key, pointed at `server`, trying each call `attempts` times.
    pub fn model(server: &MockServer, attempts: u32) -> OpenAiModel {
        OpenAiModel::new("gpt-test")
            .unwrap()
            .with_api_key(ApiKey::new(KEY))
            .with_base_url(server.uri())
            .with_retry(fast_retry(attempts))
    }

    pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    }

    /// The SSE body of `chunks`, closed by `[DONE]` when `done`.
    pub fn sse(chunks: &[Value], done: bool) -> String {
        let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        if done {
            s.push_str("data: [DONE]\n\n");
        }
        s
    }

    pub fn usage_chunk() -> Value {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
               "choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43}})
    }

    /// A whole answer: the text, a `stop`, the usage chunk and `[DONE]`.
    pub fn simple_answer(text: &str) -> String {
        sse(
            &[
                chunk(json!({"role": "assistant", "content": text}), None),
                chunk(json!({}), Some("stop")),
                usage_chunk(),
            ],
            true,
        )
    }
}
