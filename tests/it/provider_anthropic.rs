//! The Anthropic provider against a local wiremock server speaking the real SSE wire shape.

use std::time::Duration;

use crate::common::http::anthropic::{
    KEY, end, error_body, model, simple_answer, sse, start, text_block,
};
use crate::common::http::{always, exactly, ok_sse, once};
use crate::common::provider::{drain, fast_retry, req, retries};
use ctxlab::message::{Message, ToolSpec, block};
use ctxlab::provider::{
    AnthropicModel, ApiKey, Model, ModelRequest, ProviderError, StreamEvent, Usage,
};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn streams_text_and_a_tool_use_split_across_many_deltas() {
    let server = MockServer::start().await;
    let input = r#"{"command": "grep -n \"in_quotes\" src/parser.rs", "note": "ünïcödé ✓"}"#;
    let mut ev = vec![start(), ("ping", json!({"type": "ping"}))];
    ev.extend(text_block(0, "Let me look."));
    ev.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}}}),
    ));
    let chars: Vec<char> = input.chars().collect();
    for piece in chars.chunks(5) {
        ev.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece.iter().collect::<String>()}}),
        ));
        ev.push(("ping", json!({"type": "ping"})));
    }
    ev.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    ev.extend(end("tool_use"));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ok_sse(sse(&ev)))
        .expect(1)
        .mount(&server)
        .await;

    // A stored history with an unknown field and a non-canonical key order: sent as is.
    let odd: Message = serde_json::from_str(
        r#"{"content":[{"text":"earlier","type":"text","cache_control":{"type":"ephemeral"}}],"role":"assistant","x_meta":1}"#,
    )
    .unwrap();
    let request = ModelRequest {
        system: "You are terse.".into(),
        messages: vec![
            Message::user_text("fix it"),
            odd.clone(),
            Message::user_text("go on"),
        ],
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Run a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        }],
        max_tokens: 1024,
        kind: ctxlab::provider::RequestKind::Turn,
    };
    let (tx, mut rx) = unbounded_channel();
    let m = model(&server, 3);
    let r = m.stream(&request, &tx).await.unwrap();

    assert_eq!(
        r.content,
        vec![
            block::text("Let me look."),
            block::tool_use("toolu_01", "bash", serde_json::from_str(input).unwrap()),
        ]
    );
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: Some(25),
            output_tokens: Some(42),
            cached_input_tokens: None,
        }
    );
    let events = drain(&mut rx);
    assert!(events.contains(&StreamEvent::TextDelta("Let me look.".into())));
    assert!(events.contains(&StreamEvent::ToolUseStarted {
        id: "toolu_01".into(),
        name: "bash".into()
    }));
    assert!(retries(&events).is_empty());

    let sent = &server.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body["model"], "claude-test-1");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["system"], "You are terse.");
    assert_eq!(
        body["tools"],
        json!([{"name": "bash", "description": "Run a command", "input_schema": request.tools[0].input_schema}])
    );
    // Lossless: the raw JSON text of the odd message appears byte for byte in the body.
    let raw = String::from_utf8(sent.body.clone()).unwrap();
    assert!(raw.contains(&serde_json::to_string(&odd).unwrap()), "{raw}");
    assert_eq!(body["messages"][1], odd.to_value());
    assert_eq!(
        sent.headers.get("content-type").unwrap(),
        "application/json"
    );
    assert_eq!(m.describe(), "anthropic claude-test-1");
    assert!(!format!("{m:?}").contains(KEY));
}

#[tokio::test]
async fn a_mid_stream_overloaded_error_is_retried_and_the_partial_text_dropped() {
    let server = MockServer::start().await;
    let mut broken = vec![start()];
    broken.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ));
    broken.push((
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "PARTIAL-GARBAGE"}}),
    ));
    broken.push(("error", error_body("overloaded_error", "Overloaded")));
    once(&server, ok_sse(sse(&broken))).await;
    exactly(&server, ok_sse(simple_answer("Clean answer.")), 1).await;
    let (tx, mut rx) = unbounded_channel();
    let r = model(&server, 3).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("Clean answer.")]);
    assert!(!format!("{:?}", r.content).contains("PARTIAL"));
    let events = drain(&mut rx);
    let pos_partial = events
        .iter()
        .position(|e| *e == StreamEvent::TextDelta("PARTIAL-GARBAGE".into()))
        .unwrap();
    let pos_retry = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap();
    assert!(
        pos_partial < pos_retry,
        "the retry notice follows the discarded text"
    );
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(retries(&events)[0].0, 2);
}

#[tokio::test]
async fn a_cut_stream_is_retried_then_reported_as_stream_cut() {
    let server = MockServer::start().await;
    let mut cut = vec![start()];
    cut.extend(text_block(0, "half an answer"));
    exactly(&server, ok_sse(sse(&cut)), 3).await;
    let (tx, mut rx) = unbounded_channel();
    let err = model(&server, 3).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(err, ProviderError::StreamCut);
    assert_eq!(
        retries(&drain(&mut rx))
            .iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        vec![2, 3]
    );
}

#[tokio::test]
async fn rate_limits_honour_retry_after_headers() {
    let server = MockServer::start().await;
    once(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(error_body("rate_limit_error", "slow down")),
    )
    .await;
    once(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "9")
            .insert_header("retry-after-ms", "30")
            .set_body_json(error_body("rate_limit_error", "slow down")),
    )
    .await;
    always(&server, ok_sse(simple_answer("ok"))).await;
    let (tx, mut rx) = unbounded_channel();
    let started = std::time::Instant::now();
    let r = model(&server, 5).stream(&req(), &tx).await.unwrap();
    assert_eq!(r.content, vec![block::text("ok")]);
    assert!(started.elapsed() >= Duration::from_millis(30));
    assert_eq!(
        retries(&drain(&mut rx)),
        vec![(2, Duration::ZERO), (3, Duration::from_millis(30))]
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn rate_limit_after_the_last_attempt_keeps_the_hint() {
    let server = MockServer::start().await;
    exactly(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after-ms", "1")
            .set_body_json(error_body("rate_limit_error", "slow down")),
        2,
    )
    .await;
    let (tx, _rx) = unbounded_channel();
    let err = model(&server, 2).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_millis(1))
        }
    );
}

#[tokio::test]
async fn overloaded_529_and_server_500_are_retried() {
    for (status, kind, expected) in [
        (529, "overloaded_error", ProviderError::Overloaded),
        (
            500,
            "api_error",
            ProviderError::Server {
                status: 500,
                message: "Internal server error".into(),
            },
        ),
    ] {
        let server = MockServer::start().await;
        once(
            &server,
            ResponseTemplate::new(status).set_body_json(error_body(kind, "Internal server error")),
        )
        .await;
        always(&server, ok_sse(simple_answer("recovered"))).await;
        let (tx, mut rx) = unbounded_channel();
        let r = model(&server, 3).stream(&req(), &tx).await.unwrap();
        assert_eq!(r.content, vec![block::text("recovered")]);
        assert_eq!(retries(&drain(&mut rx)).len(), 1);

        // And with no attempts left, the typed error comes back.
        let server = MockServer::start().await;
        exactly(
            &server,
            ResponseTemplate::new(status).set_body_json(error_body(kind, "Internal server error")),
            2,
        )
        .await;
        let err = model(&server, 2).stream(&req(), &tx).await.unwrap_err();
        assert_eq!(err, expected);
    }
}

#[tokio::test]
async fn auth_failures_are_not_retried() {
    let server = MockServer::start().await;
    exactly(
        &server,
        ResponseTemplate::new(401)
            .set_body_json(error_body("authentication_error", "invalid x-api-key")),
        1,
    )
    .await;
    let (tx, mut rx) = unbounded_channel();
    let err = model(&server, 5).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::Auth {
            message: "invalid x-api-key".into()
        }
    );
    assert!(!err.to_string().contains(KEY));
    assert!(retries(&drain(&mut rx)).is_empty());
}

#[tokio::test]
async fn prompt_too_long_is_context_too_long_and_sent_once() {
    let server = MockServer::start().await;
    exactly(
        &server,
        ResponseTemplate::new(400).set_body_json(error_body(
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum",
        )),
        1,
    )
    .await;
    let (tx, _rx) = unbounded_channel();
    let err = model(&server, 5).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::ContextTooLong {
            message: "prompt is too long: 208310 tokens > 200000 maximum".into(),
            prompt_tokens: Some(208_310),
            window_tokens: Some(200_000),
            window_chars: None,
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn other_bad_requests_are_not_mistaken_for_over_length() {
    let server = MockServer::start().await;
    exactly(
        &server,
        ResponseTemplate::new(400).set_body_json(error_body(
            "invalid_request_error",
            "messages.1: the prompt is too long to fit a tool_result id",
        )),
        1,
    )
    .await;
    let (tx, _rx) = unbounded_channel();
    let err = model(&server, 5).stream(&req(), &tx).await.unwrap_err();
    assert!(matches!(err, ProviderError::BadRequest { .. }), "{err:?}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_network_error_after_retries() {
    // Bind then drop a listener to get a local port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let m = AnthropicModel::new(ApiKey::new(KEY), "claude-test-1")
        .unwrap()
        .with_base_url(format!("http://127.0.0.1:{port}"))
        .with_retry(fast_retry(2));
    let (tx, mut rx) = unbounded_channel();
    let err = m.stream(&req(), &tx).await.unwrap_err();
    assert!(matches!(err, ProviderError::Network { .. }), "{err:?}");
    assert!(!err.to_string().contains(KEY));
    assert_eq!(retries(&drain(&mut rx)).len(), 1);
}
