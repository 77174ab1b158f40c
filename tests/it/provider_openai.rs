//! The OpenAI-compatible provider against a local wiremock server speaking the chat
//! completions SSE wire shape (`data:` chunks, a usage chunk, `data: [DONE]`).

use std::time::Duration;

use crate::common::http::openai::{KEY, chunk, model, simple_answer, sse, usage_chunk};
use crate::common::http::{always, exactly, ok_sse, once};
use crate::common::provider::{drain, fast_retry, req, retries};
use ctxlab::message::{Message, ToolSpec, block};
use ctxlab::provider::{Model, ModelRequest, OpenAiModel, ProviderError, StreamEvent, Usage};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn maps_the_history_and_assembles_tool_calls_split_by_index() {
    let server = MockServer::start().await;
    let chunks = vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Checking "}), None),
        chunk(json!({"content": "both."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_A", "type": "function", "function": {"name": "bash", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"comm"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_B", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "and\": \"wc -l\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": " \"src/lib.rs\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
    ];
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ok_sse(sse(&chunks, true)))
        .expect(1)
        .mount(&server)
        .await;

    let history = vec![
        Message::user_text("fix the parser"),
        Message::assistant_blocks(vec![
            block::text("Reading it."),
            block::tool_use("toolu_1", "read_file", json!({"path": "src/parser.rs"})),
        ]),
        Message::user_blocks(vec![block::tool_result("toolu_1", "fn parse_line() {}")]),
    ];
    let request = ModelRequest {
        system: "You are terse.".into(),
        messages: history,
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }],
        max_tokens: 777,
        kind: ctxlab::provider::RequestKind::Turn,
    };
    let (tx, mut rx) = unbounded_channel();
    let m = model(&server, 3);
    let r = m.stream(&request, &tx).await.unwrap();
    assert_eq!(
        r.content,
        vec![
            block::text("Checking both."),
            block::tool_use("call_A", "bash", json!({"command": "wc -l"})),
            block::tool_use("call_B", "read_file", json!({"path": "src/lib.rs"})),
        ]
    );
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: Some(31),
            output_tokens: Some(12),
            cached_input_tokens: None,
        }
    );
    let events = drain(&mut rx);
    let started: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolUseStarted { .. }))
        .collect();
    assert_eq!(started.len(), 2);
    assert!(events.contains(&StreamEvent::TextDelta("Checking ".into())));

    let sent = &server.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 777);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "bash", "description": "Run a command",
               "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "fix the parser"},
            {"role": "assistant", "content": "Reading it.", "tool_calls": [
                {"id": "toolu_1", "type": "function",
                 "function": {"name": "read_file", "arguments": "{\"path\":\"src/parser.rs\"}"}}]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "fn parse_line() {}"}
        ])
    );
    assert_eq!(m.describe(), "openai gpt-test");
    assert!(!format!("{m:?}").contains(KEY));
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = MockServer::start().await;
    exactly(&server, ok_sse(simple_answer("local")), 1).await;
    let m = OpenAiModel::new("llama")
        .unwrap()
        .with_base_url(server.uri())
        .with_retry(fast_retry(1));
    let (tx, _rx) = unbounded_channel();
    let r = m.stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("local")]);
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
    let sent = &server.received_requests().await.unwrap()[0];
    assert!(sent.headers.get("authorization").is_none());
}

#[tokio::test]
async fn unparsable_arguments_come_back_raw() {
    let server = MockServer::start().await;
    let chunks = vec![
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_X", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": ls"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    always(&server, ok_sse(sse(&chunks, true))).await;
    let (tx, _rx) = unbounded_channel();
    let r = model(&server, 1).stream(&req(), &tx).await.unwrap();
    assert_eq!(
        r.content,
        vec![block::tool_use(
            "call_X",
            "bash",
            json!({"_raw": "{\"command\": ls"})
        )]
    );
}

#[tokio::test]
async fn a_cut_stream_is_retried_and_the_partial_text_dropped() {
    let server = MockServer::start().await;
    once(
        &server,
        ok_sse(sse(
            &[chunk(json!({"content": "PARTIAL-GARBAGE"}), None)],
            false,
        )),
    )
    .await;
    exactly(&server, ok_sse(simple_answer("whole")), 1).await;
    let (tx, mut rx) = unbounded_channel();
    let r = model(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("whole")]);
    let events = drain(&mut rx);
    assert!(events.contains(&StreamEvent::TextDelta("PARTIAL-GARBAGE".into())));
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn a_stream_that_always_cuts_ends_as_stream_cut() {
    let server = MockServer::start().await;
    exactly(
        &server,
        ok_sse(sse(&[chunk(json!({"content": "x"}), None)], false)),
        2,
    )
    .await;
    let (tx, _rx) = unbounded_channel();
    let err = model(&server, 2).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(err, ProviderError::StreamCut);
}

#[tokio::test]
async fn a_mid_stream_error_chunk_is_typed_and_retried() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "PARTIAL"}), None),
        json!({"error": {"message": "upstream overloaded", "type": "server_error", "code": null}})
    );
    once(&server, ok_sse(body)).await;
    always(&server, ok_sse(simple_answer("fine"))).await;
    let (tx, mut rx) = unbounded_channel();
    let r = model(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("fine")]);
    assert_eq!(retries(&drain(&mut rx)).len(), 1);
}

#[tokio::test]
async fn rate_limits_honour_retry_after() {
    let server = MockServer::start().await;
    once(&server, ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "25")
                .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}))).await;
    once(&server, ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}))).await;
    always(&server, ok_sse(simple_answer("ok"))).await;
    let (tx, mut rx) = unbounded_channel();
    let r = model(&server, 5).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("ok")]);
    assert_eq!(
        retries(&drain(&mut rx)),
        vec![(2, Duration::from_millis(25)), (3, Duration::ZERO)]
    );
}

#[tokio::test]
async fn statuses_map_to_typed_errors_and_only_transient_ones_retry() {
    let cases: Vec<(u16, Value, ProviderError, usize)> = vec![
        (
            529,
            json!({"error": {"message": "busy"}}),
            ProviderError::Overloaded,
            2,
        ),
        (
            503,
            json!({"error": {"message": "unavailable"}}),
            ProviderError::Server {
                status: 503,
                message: "unavailable".into(),
            },
            2,
        ),
        (
            401,
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ProviderError::Auth {
                message: "Incorrect API key provided".into(),
            },
            1,
        ),
        (
            404,
            json!({"error": "model 'nope' not found"}),
            ProviderError::BadRequest {
                message: "model 'nope' not found".into(),
            },
            1,
        ),
        (
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
                   "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
            ProviderError::ContextTooLong {
                message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.".into(),
                prompt_tokens: Some(9000),
                window_tokens: Some(8192),
                window_chars: None,
            },
            1,
        ),
        (
            400,
            json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                   "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}),
            ProviderError::ContextTooLong {
                message: "the request exceeds the available context size, try increasing it".into(),
                prompt_tokens: Some(5000),
                window_tokens: Some(4096),
                window_chars: None,
            },
            1,
        ),
    ];
    for (status, body, expected, requests) in cases {
        let server = MockServer::start().await;
        always(&server, ResponseTemplate::new(status).set_body_json(body)).await;
        // A 404 also names the URL that was tried.
        let expected = match expected {
            ProviderError::BadRequest { message } if status == 404 => ProviderError::BadRequest {
                message: format!(
                    "{message} (404 Not Found from POST {}/v1/chat/completions; check the base URL)",
                    server.uri()
                ),
            },
            other => other,
        };
        let (tx, _rx) = unbounded_channel();
        let err = model(&server, 2).stream(&req(), &tx).await.unwrap_err();
        assert_eq!(err, expected, "status {status}");
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            requests,
            "status {status}"
        );
    }
}

#[tokio::test]
async fn a_500_is_retried_then_succeeds() {
    let server = MockServer::start().await;
    once(&server, ResponseTemplate::new(500).set_body_string("oops")).await;
    always(&server, ok_sse(simple_answer("back"))).await;
    let (tx, mut rx) = unbounded_channel();
    let r = model(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("back")]);
    assert_eq!(retries(&drain(&mut rx)).len(), 1);
}
