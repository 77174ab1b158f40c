//! Both HTTP providers against a local wiremock server answering with the shapes a real
//! llama.cpp `llama-server` and the real APIs send: cached-usage `message_start`s,
//! `prompt_tokens_details`, llama.cpp's `event: error`, streams whose last event has no
//! closing blank line, absurd `retry-after` hints, base URLs written with `/v1`, and the
//! output limit's name for reasoning models. (The overflow bodies and the agent's reactions
//! are in `provider_reactive`.)

use std::time::Duration;

use crate::common::http::{always, exactly, ok_sse};
use ctxlab::message::{Message, block};
use ctxlab::provider::{
    AnthropicModel, ApiKey, Model, ModelRequest, OpenAiModel, ProviderError, RetryPolicy,
    StreamEvent, Usage,
};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

fn anthropic(server: &MockServer, attempts: u32) -> AnthropicModel {
    AnthropicModel::new(ApiKey::new("local"), "smollm2")
        .unwrap()
        .with_base_url(server.uri())
        .with_retry(retry(attempts))
}

fn openai(server: &MockServer, attempts: u32) -> OpenAiModel {
    OpenAiModel::new("smollm2")
        .unwrap()
        .with_base_url(server.uri())
        .with_retry(retry(attempts))
}

fn req() -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![Message::user_text("Say hello.")],
        tools: vec![],
        max_tokens: 64,
        kind: ctxlab::provider::RequestKind::Turn,
    }
}

/// An Anthropic stream as llama-server writes it for a cached prompt (recorded from
/// llama.cpp's `/v1/messages`: `input_tokens` is only the uncached tail).
fn llama_cached_message(text: &str, closing_blank_line: bool) -> String {
    let mut s = String::new();
    s.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"chatcmpl-oUv8\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"smollm2\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"cache_read_input_tokens\":38,\"input_tokens\":1,\"output_tokens\":0}}}\n\n");
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    s.push_str(&format!(
        "event: content_block_delta\ndata: {}\n\n",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
    ));
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    s.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":12}}\n\n");
    s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}");
    if closing_blank_line {
        s.push_str("\n\n");
    }
    s
}

fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "smollm2",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

#[tokio::test]
async fn anthropic_input_counts_the_cached_prompt_and_carries_the_cached_share() {
    let server = MockServer::start().await;
    always(&server, ok_sse(llama_cached_message("Hello!", true))).await;
    let (tx, mut rx) = unbounded_channel();
    let r = anthropic(&server, 1).stream(&req(), &tx).await.unwrap();
    let expected = Usage {
        input_tokens: Some(39),
        output_tokens: Some(12),
        cached_input_tokens: Some(38),
    };
    assert_eq!(r.usage, expected);
    let mut last_usage = None;
    while let Ok(e) = rx.try_recv() {
        if let StreamEvent::Usage(u) = e {
            last_usage = Some(u);
        }
    }
    assert_eq!(last_usage, Some(expected));

    // The real API with a cache write and read: all three parts count.
    let server = MockServer::start().await;
    let body = llama_cached_message("Hi", true).replace(
        r#""usage":{"cache_read_input_tokens":38,"input_tokens":1,"output_tokens":0}"#,
        r#""usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":20000,"output_tokens":1}"#,
    );
    always(&server, ok_sse(body)).await;
    let r = anthropic(&server, 1).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.usage.input_tokens, Some(21_203));
    assert_eq!(r.usage.cached_input_tokens, Some(20_000));
}

#[tokio::test]
async fn openai_usage_carries_the_cached_share() {
    let server = MockServer::start().await;
    // Recorded from llama.cpp's `/v1/chat/completions`: `prompt_tokens` includes the cache.
    let mut body = chat_chunk(json!({"role": "assistant", "content": "Hello"}), None);
    body.push_str(&chat_chunk(json!({}), Some("stop")));
    body.push_str("data: {\"choices\":[],\"created\":1,\"id\":\"chatcmpl-1\",\"model\":\"smollm2\",\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":5,\"prompt_tokens\":39,\"total_tokens\":44,\"prompt_tokens_details\":{\"cached_tokens\":38}}}\n\n");
    body.push_str("data: [DONE]\n\n");
    always(&server, ok_sse(body)).await;
    let (tx, _rx) = unbounded_channel();
    let r = openai(&server, 1).stream(&req(), &tx).await.unwrap();
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: Some(39),
            output_tokens: Some(5),
            cached_input_tokens: Some(38),
        }
    );
}

#[tokio::test]
async fn a_stream_without_its_last_blank_line_is_whole() {
    // Anthropic: ends with `data: {"type":"message_stop"}` and nothing after, as the
    // official SDK's recorded fixtures do.
    let server = MockServer::start().await;
    exactly(&server, ok_sse(llama_cached_message("Complete.", false)), 1).await;
    let (tx, _rx) = unbounded_channel();
    let r = anthropic(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("Complete.")]);
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));

    // OpenAI: the final `data: [DONE]` without its newline.
    let server = MockServer::start().await;
    let mut body = chat_chunk(json!({"role": "assistant", "content": "Whole."}), None);
    body.push_str(&chat_chunk(json!({}), Some("stop")));
    body.push_str("data: [DONE]");
    exactly(&server, ok_sse(body), 1).await;
    let r = openai(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("Whole.")]);
}

#[tokio::test]
async fn a_stream_that_stops_mid_message_is_still_a_cut() {
    // Anthropic, two shapes of a real cut: after a whole event that is not the end, and in
    // the middle of a line.
    let whole = llama_cached_message("Half", true);
    let after_event = whole[..whole.find("event: message_delta").unwrap()].to_string();
    let mid_line = whole[..whole.find("\"stop_reason\":\"end_turn\"").unwrap()].to_string();
    for body in [after_event, mid_line] {
        let server = MockServer::start().await;
        exactly(&server, ok_sse(body.clone()), 2).await;
        let (tx, _rx) = unbounded_channel();
        let err = anthropic(&server, 2).stream(&req(), &tx).await.unwrap_err();
        assert_eq!(err, ProviderError::StreamCut, "{body}");
    }
    // OpenAI: a chunk cut in the middle, no finish reason, no [DONE].
    let server = MockServer::start().await;
    let mut body = chat_chunk(json!({"role": "assistant", "content": "Half"}), None);
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" an");
    exactly(&server, ok_sse(body), 2).await;
    let (tx, _rx) = unbounded_channel();
    let err = openai(&server, 2).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(err, ProviderError::StreamCut);
}

#[tokio::test]
async fn llama_cpp_error_events_are_errors_not_cuts() {
    // llama.cpp's `/v1/messages`: `event: error` with the bare error object as data.
    let server = MockServer::start().await;
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":0}}}\n\n\
                event: error\ndata: {\"code\":500,\"message\":\"Failed to decode the batch\",\"type\":\"server_error\"}\n\n";
    exactly(&server, ok_sse(body), 1).await;
    let (tx, _rx) = unbounded_channel();
    let err = anthropic(&server, 1).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::Server {
            status: 500,
            message: "Failed to decode the batch".into()
        }
    );

    // llama.cpp's `/v1/chat/completions`: `data: {"error": {...}}`, and `event: error` with
    // the bare object, both recognised.
    for body in [
        format!(
            "{}data: {{\"error\":{{\"code\":500,\"message\":\"Failed to decode the batch\",\"type\":\"server_error\"}}}}\n\n",
            chat_chunk(json!({"role": "assistant", "content": "x"}), None)
        ),
        format!(
            "{}event: error\ndata: {{\"code\":500,\"message\":\"Failed to decode the batch\",\"type\":\"server_error\"}}\n\n",
            chat_chunk(json!({"role": "assistant", "content": "x"}), None)
        ),
    ] {
        let server = MockServer::start().await;
        exactly(&server, ok_sse(body), 1).await;
        let err = openai(&server, 1).stream(&req(), &tx).await.unwrap_err();
        assert_eq!(
            err,
            ProviderError::Server {
                status: 500,
                message: "Failed to decode the batch".into()
            }
        );
    }

    // An overflow reported inside the stream is the typed over-length error.
    let server = MockServer::start().await;
    let body = "event: error\ndata: {\"code\":400,\"message\":\"request (831 tokens) exceeds the available context size (512 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":831,\"n_ctx\":512}\n\n";
    always(&server, ok_sse(body)).await;
    let err = anthropic(&server, 3).stream(&req(), &tx).await.unwrap_err();
    assert!(
        matches!(
            err,
            ProviderError::ContextTooLong {
                prompt_tokens: Some(831),
                window_tokens: Some(512),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// llama-server answers an over-long prompt on both routes, `/v1/messages` included, with
/// its own 400 body (not Anthropic's "prompt is too long" shape), streaming or not; both
/// providers read the counts from it, which is what sizes the next summary attempt.
#[tokio::test]
async fn llama_cpp_refusal_body_on_both_routes_carries_its_counts() {
    let body = json!({"error": {"code": 400,
        "message": "request (2337 tokens) exceeds the available context size (2048 tokens), try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": 2337, "n_ctx": 2048}});
    let (tx, _rx) = unbounded_channel();
    let server = MockServer::start().await;
    always(
        &server,
        ResponseTemplate::new(400).set_body_json(body.clone()),
    )
    .await;
    let a = anthropic(&server, 3).stream(&req(), &tx).await.unwrap_err();
    let o = openai(&server, 3).stream(&req(), &tx).await.unwrap_err();
    for err in [a, o] {
        assert!(
            matches!(
                err,
                ProviderError::ContextTooLong {
                    prompt_tokens: Some(2_337),
                    window_tokens: Some(2_048),
                    ..
                }
            ),
            "{err:?}"
        );
    }
    // Refused once each: an over-long prompt is not retried.
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn absurd_retry_after_hints_do_not_crash_either_provider() {
    for (name, value) in [
        ("retry-after", "100000000000000000000"),
        ("retry-after-ms", "1e30"),
    ] {
        let server = MockServer::start().await;
        always(&server, ResponseTemplate::new(429)
                    .insert_header(name, value)
                    .set_body_json(json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}))).await;
        let (tx, _rx) = unbounded_channel();
        // The hint is far over what the retry loop waits out: the error comes back at once.
        let a = anthropic(&server, 5).stream(&req(), &tx).await.unwrap_err();
        let o = openai(&server, 5).stream(&req(), &tx).await.unwrap_err();
        for err in [a, o] {
            match err {
                ProviderError::RateLimited {
                    retry_after: Some(wait),
                } => assert!(wait >= Duration::from_secs(3600), "{name}: {wait:?}"),
                other => panic!("{name}: {value}: {other:?}"),
            }
        }
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }
}

#[tokio::test]
async fn base_urls_with_v1_and_slashes_post_to_the_right_path() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ok_sse(format!(
            "{}{}data: [DONE]\n\n",
            chat_chunk(json!({"content": "ok"}), None),
            chat_chunk(json!({}), Some("stop"))
        )))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ok_sse(llama_cached_message("ok", true)))
        .mount(&server)
        .await;
    let (tx, _rx) = unbounded_channel();
    for base in [
        server.uri(),
        format!("{}/", server.uri()),
        format!("{}/v1", server.uri()),
        format!("{}/v1/", server.uri()),
    ] {
        let o = OpenAiModel::new("m")
            .unwrap()
            .with_base_url(base.clone())
            .with_retry(retry(1));
        let r = o.stream(&req(), &tx).await;
        assert_eq!(r.unwrap().content, vec![block::text("ok")], "{base}");
        let a = AnthropicModel::new(ApiKey::new("k"), "m")
            .unwrap()
            .with_base_url(base.clone())
            .with_retry(retry(1));
        let r = a.stream(&req(), &tx).await;
        assert_eq!(r.unwrap().content, vec![block::text("ok")], "{base}");
    }
}

#[tokio::test]
async fn a_404_names_the_url_that_was_tried() {
    let server = MockServer::start().await;
    // What llama-server answers on an unknown path.
    always(
        &server,
        ResponseTemplate::new(404).set_body_json(
            json!({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}),
        ),
    )
    .await;
    let m = OpenAiModel::new("m")
        .unwrap()
        .with_base_url(format!("{}/proxy?token=secret", server.uri()))
        .with_retry(retry(3));
    let (tx, _rx) = unbounded_channel();
    let err = m.stream(&req(), &tx).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "File Not Found (404 Not Found from POST {}/proxy",
            server.uri()
        )),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[test]
fn reasoning_models_get_max_completion_tokens() {
    let body = |model: &str| OpenAiModel::new(model).unwrap().request_body(&req());
    for model in [
        "o1",
        "o3-mini",
        "o4-mini-2025-04-16",
        "gpt-5",
        "gpt-5-mini",
        "openai/o3",
    ] {
        let b = body(model);
        assert_eq!(b["max_completion_tokens"], 64, "{model}");
        assert!(b.get("max_tokens").is_none(), "{model}");
    }
    for model in [
        "gpt-4o-mini",
        "smollm2",
        "ollama/qwen2.5",
        "omni-model",
        "gpt-4.1",
    ] {
        let b = body(model);
        assert_eq!(b["max_tokens"], 64, "{model}");
        assert!(b.get("max_completion_tokens").is_none(), "{model}");
    }
}

#[tokio::test]
async fn a_cut_off_answer_with_a_half_written_call_is_max_tokens_not_tool_use() {
    let server = MockServer::start().await;
    let mut body = chat_chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
               "function": {"name": "write_file", "arguments": ""}}]}),
        None,
    );
    body.push_str(&chat_chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"notes.txt\", \"content\": \"a long bl"}}]}),
        None,
    ));
    body.push_str(&chat_chunk(json!({}), Some("length")));
    body.push_str("data: [DONE]\n\n");
    always(&server, ok_sse(body)).await;
    let (tx, _rx) = unbounded_channel();
    let r = openai(&server, 1).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("max_tokens"));
}
