//! "Exact request" means the bytes sent (issue 25, point 4): for both HTTP providers a
//! local server records the body of each request it received, and the timeline's record,
//! the workbench's request view (`o`) and the exported page are compared with those bytes.
//! The scripted model's record says it is ctxlab's own request shape, not wire bytes.

use std::sync::Arc;
use std::time::Duration;

use crate::common::agent::until_done;
use crate::common::tour::tour;
use crate::support::key;
use crossterm::event::KeyCode;
use ctxlab::agent::{AgentEvent, AgentSetup, UserCommand, spawn};
use ctxlab::compact::PipelineConfig;
use ctxlab::message::Message;
use ctxlab::provider::wire::pretty;
use ctxlab::provider::{
    AnthropicModel, ApiKey, Model, ModelRequest, OpenAiModel, RetryPolicy, SentRequest, WireFormat,
};
use ctxlab::timeline::html::{escape, page};
use ctxlab::timeline::{Source, Timeline};
use ctxlab::tools::Workspace;
use ctxlab::tui::app::Layer;
use ctxlab::tui::{App, Msg};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// Answers a request whose last message is not a tool result with a `glob` call, and the
/// next one with text: two calls, the second holding a tool call and its result.
struct TwoCalls(Wire);

fn answered_a_tool(body: &Value) -> bool {
    let last = body["messages"].as_array().and_then(|m| m.last());
    match last {
        Some(m) if m["role"] == "tool" => true,
        Some(m) => m["content"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result")),
        None => false,
    }
}

impl Respond for TwoCalls {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let tool = !answered_a_tool(&body);
        let sse = match self.0 {
            Wire::OpenAi => {
                let (delta, finish) = if tool {
                    (
                        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1",
                            "type": "function", "function": {"name": "glob",
                            "arguments": "{\"pattern\": \"*.txt\"}"}}]}),
                        "tool_calls",
                    )
                } else {
                    (json!({"role": "assistant", "content": "done"}), "stop")
                };
                let chunk =
                    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                format!("data: {chunk}\n\ndata: [DONE]\n\n")
            }
            Wire::Anthropic => {
                let (block, delta, stop) = if tool {
                    (
                        json!({"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {}}),
                        json!({"type": "input_json_delta", "partial_json": "{\"pattern\": \"*.txt\"}"}),
                        "tool_use",
                    )
                } else {
                    (
                        json!({"type": "text", "text": ""}),
                        json!({"type": "text_delta", "text": "done"}),
                        "end_turn",
                    )
                };
                [
                    ("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 0}}})),
                    ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": block})),
                    ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta})),
                    ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                    ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 3}})),
                    ("message_stop", json!({"type": "message_stop"})),
                ]
                .iter()
                .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
                .collect()
            }
        };
        ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream")
    }
}

/// One turn of the agent over `wire` against a local server: the events and the bodies
/// the server received, raw.
async fn one_turn(wire: Wire) -> (Vec<AgentEvent>, Vec<Vec<u8>>) {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(TwoCalls(wire))
        .mount(&server)
        .await;
    let model: Arc<dyn Model> = match wire {
        Wire::OpenAi => Arc::new(
            OpenAiModel::new("smollm2")
                .unwrap()
                .with_base_url(server.uri())
                .with_retry(RetryPolicy::no_retries()),
        ),
        Wire::Anthropic => Arc::new(
            AnthropicModel::new(ApiKey::new("local"), "smollm2")
                .unwrap()
                .with_base_url(server.uri())
                .with_retry(RetryPolicy::no_retries()),
        ),
    };
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "caf\u{e9} <b>\n").unwrap();
    let setup = AgentSetup::new(
        model,
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    );
    let (commands, mut events, _handle) = spawn(setup);
    commands
        .send(UserCommand::Submit(
            "list the \"txt\" files, caf\u{e9}".into(),
        ))
        .unwrap();
    let seen = until_done(&mut events, Duration::from_secs(20)).await;
    let bodies = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.body)
        .collect();
    (seen, bodies)
}

fn viewer(a: &App) -> (String, String) {
    match a.top_layer() {
        Some(Layer::Viewer(v)) => (v.title().to_string(), v.lines().join("\n")),
        _ => panic!("no viewer open"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exact_request_is_the_body_the_server_received_for_both_providers() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let (events, received) = one_turn(wire).await;
        assert_eq!(received.len(), 2, "{wire:?}: a tool call and an answer");

        // The timeline's record holds the very bytes the server got.
        let t = Timeline::from_events(Source::Live, 0, &events);
        assert_eq!(t.calls.len(), 2);
        for (call, got) in t.calls.iter().zip(&received) {
            let exact = call.exact_request().expect("a live call records its body");
            assert!(exact.format.is_wire());
            assert!(!exact.rebuilt);
            assert_eq!(exact.body.as_deref().unwrap(), got.as_slice(), "{wire:?}");
            assert_eq!(exact.len, got.len());
        }
        // The shape is the provider's: the defect was an Anthropic-shaped view for OpenAI.
        let second: Value = serde_json::from_slice(&received[1]).unwrap();
        match wire {
            Wire::OpenAi => {
                assert!(second.get("system").is_none());
                assert_eq!(second["messages"][0]["role"], "system");
                assert!(second["tools"][0]["function"]["parameters"].is_object());
                assert!(
                    second["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|m| m["role"] == "tool")
                );
            }
            Wire::Anthropic => {
                assert!(second["system"].is_string());
                assert!(second["tools"][0]["input_schema"].is_object());
            }
        }

        // The workbench's `o` on each call shows those bytes, pretty-printed.
        let mut a = App::new(
            std::env::temp_dir(),
            "http".into(),
            PipelineConfig::default(),
            false,
        );
        a.update(Msg::Resize(120, 40));
        for ev in &events {
            a.update(Msg::Agent(ev.clone()));
        }
        a.update(key(KeyCode::Esc));
        a.update(key(KeyCode::Char('t')));
        a.update(key(KeyCode::Char('g')));
        for (n, got) in received.iter().enumerate() {
            if n > 0 {
                a.update(key(KeyCode::Char('j')));
            }
            a.update(key(KeyCode::Char('o')));
            let (title, text) = viewer(&a);
            assert_eq!(text, pretty(got), "{wire:?} call {}", n + 1);
            assert!(title.contains("body as sent"), "{title}");
            a.update(key(KeyCode::Esc));
        }

        // The exported page holds each body, escaped, and says what they are.
        let html = page(&t);
        for got in &received {
            assert!(html.contains(&escape(&pretty(got))), "{wire:?}");
        }
        assert!(html.contains("exactly what the model received"));
        let path = match wire {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        };
        assert!(html.contains(path), "{wire:?}");
    }
}

#[test]
fn the_scripted_models_record_is_said_to_be_its_own_shape_not_wire_bytes() {
    let t = tour();
    let timeline = Timeline::from_events(Source::Live, 0, &t.events);
    let call = &timeline.calls[2];
    let exact = call.exact_request().unwrap();
    assert_eq!(exact.format, WireFormat::Record);
    assert!(!exact.format.is_wire());
    // Only wire bodies are held as bytes: a record is the call's messages again.
    assert!(call.body.as_ref().unwrap().bytes().is_none());
    assert_eq!(timeline.kept_body_bytes(), 0);
    assert!(exact.short().starts_with("request record, no bytes sent"));
    // The record is ctxlab's request as the in-process model read it.
    let body: Value = serde_json::from_slice(exact.body.as_deref().unwrap()).unwrap();
    let messages: Vec<Value> = call.messages().map(Message::to_value).collect();
    assert_eq!(body["messages"], Value::Array(messages));
    let html = page(&timeline);
    assert!(!html.contains("exactly what the model received"));
    assert!(html.contains("no bytes were sent"));
}

fn big_request(n: usize) -> ModelRequest {
    ModelRequest {
        system: "sys".into(),
        messages: vec![Message::user_text(format!("{n}:{}", "x".repeat(1000)))],
        tools: Vec::new(),
        max_tokens: 16,
        ..ModelRequest::default()
    }
}

#[test]
fn kept_bodies_stay_within_the_budget_and_older_ones_are_rebuilt_and_checked() {
    let format = WireFormat::OpenAiChat {
        model: Arc::from("m"),
    };
    let mut t = Timeline::new(Source::Live, 0).with_body_budget(1500, 5000);
    let mut sent = Vec::new();
    for n in 0..12 {
        let req = big_request(n);
        let body = Arc::new(SentRequest::encode(format.clone(), &req));
        sent.push(body.bytes().unwrap().clone());
        t.request_sent(Some(&req));
        t.body_sent(body);
        assert!(t.kept_body_bytes() <= 5000, "{}", t.kept_body_bytes());
    }
    // The newest bodies are held as sent; the oldest gave theirs up and are rebuilt.
    assert!(
        t.calls
            .last()
            .unwrap()
            .body
            .as_ref()
            .unwrap()
            .bytes()
            .is_some()
    );
    assert!(t.calls[0].body.as_ref().unwrap().bytes().is_none());
    for (call, bytes) in t.calls.iter().zip(&sent) {
        let exact = call.exact_request().unwrap();
        assert_eq!(exact.body.as_ref().unwrap(), bytes);
    }
    // A body over the per-request cap is never held.
    let req = ModelRequest {
        messages: vec![Message::user_text("y".repeat(2000))],
        ..big_request(99)
    };
    t.request_sent(Some(&req));
    t.body_sent(Arc::new(SentRequest::encode(format, &req)));
    let last = t.calls.last().unwrap();
    assert!(last.body.as_ref().unwrap().bytes().is_none());
    assert!(last.exact_request().unwrap().rebuilt);
}
