//! `ctxlab proxy` passes bodies through byte for byte, both ways, for the three APIs,
//! streamed and plain, with the status and headers such as `retry-after`; the capture
//! assembles each answer and never holds a key.

use serde_json::{Value, json};

use crate::proxy_upstream::{Reply, Upstream, capture_lines, data_only, sse, start_proxy};

const KEY: &str = "sk-ant-test-SECRET-0123456789";
const BEARER: &str = "Bearer sk-proj-SECRET-9876543210";

/// A request body with odd spacing: only a byte-exact pass keeps it.
fn anthropic_body(stream: bool) -> Vec<u8> {
    format!(
        "{{\"model\":  \"claude-test\", \"max_tokens\":100,\"stream\":{stream},\n \"system\":\"be brief\",\"tools\":[{{\"name\":\"read_file\",\"input_schema\":{{}}}}],\"messages\":[{{\"role\":\"user\",\"content\":\"hi \\u00e9\"}}]}}"
    )
    .into_bytes()
}

fn anthropic_stream() -> Vec<Vec<u8>> {
    let all = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":12,"cache_read_input_tokens":30,"output_tokens":1}}}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu_1","name":"read_file","input":{}}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.rs\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":1}),
        ),
        (
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":21}}),
        ),
        ("message_stop", json!({"type":"message_stop"})),
    ]);
    split_oddly(all)
}

/// Chunks that cut events (and a UTF-8 character) in odd places.
fn split_oddly(all: Vec<u8>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = all.as_slice();
    let mut size = 7;
    while !rest.is_empty() {
        let n = size.min(rest.len());
        out.push(rest[..n].to_vec());
        rest = &rest[n..];
        size = size * 3 % 97 + 5;
    }
    out
}

async fn post(url: &str, path: &str, body: Vec<u8>) -> reqwest::Response {
    crate::proxy_upstream::client()
        .post(format!("{url}{path}"))
        .header("x-api-key", KEY)
        .header("authorization", BEARER)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

fn exchange(lines: &[Value], n: usize) -> &Value {
    lines
        .iter()
        .filter(|l| l["type"] == "exchange")
        .nth(n)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_streamed_and_plain_pass_byte_for_byte_and_are_assembled() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let streamed = anthropic_stream();
    let plain = serde_json::to_vec(
        &json!({"id":"m2","type":"message","role":"assistant","model":"claude-test",
        "content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn",
        "usage":{"input_tokens":40,"output_tokens":3}}),
    )
    .unwrap();
    let (s2, p2) = (streamed.clone(), plain.clone());
    let upstream = Upstream::start(move |r| {
        if r.body.windows(13).any(|w| w == b"\"stream\":true") {
            Reply::streamed(s2.clone(), None)
        } else {
            Reply::full(200, "application/json", &p2)
        }
    })
    .await;
    let proxy = start_proxy(&upstream.url, &capture).await;

    let resp = post(&proxy, "/v1/messages", anthropic_body(true)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let got = resp.bytes().await.unwrap();
    assert_eq!(
        got.as_ref(),
        streamed.concat().as_slice(),
        "streamed body changed"
    );

    let resp = post(&proxy, "/v1/messages", anthropic_body(false)).await;
    let got = resp.bytes().await.unwrap();
    assert_eq!(got.as_ref(), plain.as_slice(), "plain body changed");

    let reqs = upstream.requests();
    assert_eq!(reqs[0].body, anthropic_body(true), "request body changed");
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(
        reqs[0].header("x-api-key"),
        Some(KEY),
        "the key must reach the upstream"
    );
    assert_eq!(reqs[0].header("authorization"), Some(BEARER));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));

    let lines = capture_lines(&capture, 2).await;
    assert_eq!(lines[0]["type"], "header");
    assert_eq!(lines[0]["format"], "ctxlab-capture");
    let first = exchange(&lines, 0);
    assert_eq!(first["api"], "anthropic_messages");
    assert_eq!(first["request"]["body"]["messages"][0]["content"], "hi é");
    assert_eq!(first["request"]["bytes"], anthropic_body(true).len());
    let r = &first["response"];
    assert_eq!(r["status"], 200);
    assert_eq!(r["streamed"], true);
    assert_eq!(r["text"], "Let me look.");
    assert_eq!(
        r["tool_calls"][0],
        json!({"id":"tu_1","name":"read_file","input":{"path":"a.rs"}})
    );
    assert_eq!(r["stop_reason"], "tool_use");
    assert_eq!(r["usage"]["input_tokens"], 12);
    assert_eq!(r["usage"]["cache_read_tokens"], 30);
    assert_eq!(r["usage"]["output_tokens"], 21);
    assert!(
        first["timing"]["first_byte_ms"].as_f64().unwrap()
            <= first["timing"]["last_byte_ms"].as_f64().unwrap()
    );
    let second = exchange(&lines, 1);
    assert_eq!(second["response"]["text"], "Done.");
    assert_eq!(second["response"]["stop_reason"], "end_turn");

    // Header names are recorded, key values never.
    let text = std::fs::read_to_string(&capture).unwrap();
    assert!(text.contains("\"x-api-key\""));
    assert!(!text.contains("SECRET"), "a key value reached the capture");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&capture).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_chat_streamed_and_plain_pass_byte_for_byte_and_are_assembled() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let streamed = split_oddly(data_only(&[
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}),
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}),
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":"}}]},"finish_reason":null}]}),
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]},"finish_reason":null}]}),
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
        json!({"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":20}}}),
    ]));
    let plain = serde_json::to_vec(&json!({"id":"c2","object":"chat.completion","model":"gpt-test",
        "choices":[{"index":0,"message":{"role":"assistant","content":"Plain."},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":7,"completion_tokens":2}})).unwrap();
    let (s2, p2) = (streamed.clone(), plain.clone());
    let upstream = Upstream::start(move |r| {
        if r.body.windows(13).any(|w| w == b"\"stream\":true") {
            Reply::streamed(s2.clone(), None)
        } else {
            Reply::full(200, "application/json", &p2)
        }
    })
    .await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let body = |stream: bool| {
        format!("{{\"model\":\"gpt-test\",\"stream\":{stream},\"messages\":[{{\"role\":\"system\",\"content\":\"sys\"}},{{\"role\":\"user\",\"content\":\"hi\"}}]}}").into_bytes()
    };
    let got = post(&proxy, "/v1/chat/completions", body(true))
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), streamed.concat().as_slice());
    let got = post(&proxy, "/v1/chat/completions", body(false))
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), plain.as_slice());
    assert_eq!(upstream.requests()[0].body, body(true));
    assert_eq!(upstream.requests()[0].path, "/v1/chat/completions");

    let lines = capture_lines(&capture, 2).await;
    let r = &exchange(&lines, 0)["response"];
    assert_eq!(r["text"], "Hello");
    assert_eq!(
        r["tool_calls"][0],
        json!({"id":"call_1","name":"bash","input":{"cmd":"ls"}})
    );
    assert_eq!(r["stop_reason"], "tool_calls");
    assert_eq!(
        r["usage"],
        json!({"input_tokens":30,"output_tokens":9,"cache_read_tokens":20,"cache_creation_tokens":0})
    );
    let r = &exchange(&lines, 1)["response"];
    assert_eq!(r["text"], "Plain.");
    assert_eq!(r["stop_reason"], "stop");
    assert!(
        !std::fs::read_to_string(&capture)
            .unwrap()
            .contains("SECRET")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_streamed_and_plain_pass_byte_for_byte_and_are_assembled() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let final_response = json!({"id":"r1","object":"response","status":"completed","model":"gpt-5-test",
        "output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi there"}]},
                  {"type":"function_call","call_id":"fc_1","name":"shell","arguments":"{\"command\":[\"ls\"]}"}],
        "usage":{"input_tokens":100,"output_tokens":12,"input_tokens_details":{"cached_tokens":64}}});
    let streamed = split_oddly(sse(&[
        (
            "response.created",
            json!({"type":"response.created","response":{"id":"r1","status":"in_progress"}}),
        ),
        (
            "response.output_text.delta",
            json!({"type":"response.output_text.delta","delta":"Hi "}),
        ),
        (
            "response.output_text.delta",
            json!({"type":"response.output_text.delta","delta":"there"}),
        ),
        (
            "response.completed",
            json!({"type":"response.completed","response":final_response}),
        ),
    ]));
    let plain = serde_json::to_vec(&final_response).unwrap();
    let (s2, p2) = (streamed.clone(), plain.clone());
    let upstream = Upstream::start(move |r| {
        if r.body.windows(13).any(|w| w == b"\"stream\":true") {
            Reply::streamed(s2.clone(), None)
        } else {
            Reply::full(200, "application/json", &p2)
        }
    })
    .await;
    // An upstream written with /v1, as OpenAI base URLs are: no doubled /v1.
    let proxy = start_proxy(&format!("{}/v1", upstream.url), &capture).await;
    let body = |stream: bool| {
        format!("{{\"model\":\"gpt-5-test\",\"stream\":{stream},\"instructions\":\"sys\",\"input\":[{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"list\"}}]}}]}}").into_bytes()
    };
    let got = post(&proxy, "/v1/responses", body(true))
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), streamed.concat().as_slice());
    let got = post(&proxy, "/v1/responses", body(false))
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), plain.as_slice());
    assert_eq!(upstream.requests()[0].path, "/v1/responses");

    let lines = capture_lines(&capture, 2).await;
    for n in 0..2 {
        let r = &exchange(&lines, n)["response"];
        assert_eq!(r["text"], "Hi there", "exchange {n}");
        assert_eq!(r["tool_calls"][0]["input"], json!({"command":["ls"]}));
        assert_eq!(r["stop_reason"], "completed");
        assert_eq!(r["usage"]["cache_read_tokens"], 64);
        assert_eq!(r["usage"]["input_tokens"], 36);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_passes_through_and_its_error_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let body = br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
    let upstream = Upstream::start(move |_| {
        let mut reply = Reply::full(429, "application/json", body);
        reply.headers.push(("retry-after".into(), "17".into()));
        reply
            .headers
            .push(("x-custom-upstream".into(), "kept".into()));
        reply
    })
    .await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let resp = post(&proxy, "/v1/messages", anthropic_body(false)).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "17");
    assert_eq!(resp.headers()["x-custom-upstream"], "kept");
    assert_eq!(resp.bytes().await.unwrap().as_ref(), body.as_slice());
    let lines = capture_lines(&capture, 1).await;
    let r = &exchange(&lines, 0)["response"];
    assert_eq!(r["status"], 429);
    assert_eq!(r["error"], "slow down");
    let retry = r["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "retry-after")
        .unwrap();
    assert_eq!(retry["value"], "17");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_upstream_is_a_502_in_the_apis_shape_and_a_recorded_failure() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    // A port nobody listens on: bind one, then let it go.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}?key=SECRET-in-query", gone.local_addr().unwrap());
    drop(gone);
    let proxy = start_proxy(&url, &capture).await;
    let resp = post(&proxy, "/v1/messages", anthropic_body(false)).await;
    assert_eq!(resp.status(), 502);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["type"], "error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be reached")
    );
    let lines = capture_lines(&capture, 1).await;
    assert!(
        exchange(&lines, 0)["failure"]
            .as_str()
            .unwrap()
            .contains("could not connect")
    );
    assert!(
        !std::fs::read_to_string(&capture)
            .unwrap()
            .contains("SECRET")
    );
}
