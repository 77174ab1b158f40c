//! `ctxlab proxy` and the Responses WebSocket transport (issue 35, item 1), against a
//! WebSocket upstream written here on 127.0.0.1: messages pass unchanged both ways, each
//! `response.create` is an exchange of the capture with the context its
//! `previous_response_id` names carried, pings and closes pass through, a refused upgrade
//! reaches the client as it came, and a stop writes the exchange in flight.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxlab::proxy::ConnectionLimits;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::proxy_upstream::capture_lines;

/// What the upstream saw: the handshake's headers and every message, in order.
#[derive(Default)]
struct Seen {
    headers: Vec<(String, String)>,
    messages: Vec<Message>,
}

/// The events answering request `n` (its response id is `resp_n`): created, a text delta
/// and completed with one output message and usage. `hold` leaves out the final event.
fn answer(n: usize, hold: bool) -> Vec<String> {
    let text = format!("answer {n}");
    let item = json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text}]});
    let mut events = vec![
        json!({"type": "response.created", "response": {"id": format!("resp_{n}"), "status": "in_progress"}}),
        json!({"type": "response.output_text.delta", "delta": text}),
    ];
    if !hold {
        events.push(json!({"type": "response.completed", "response": {
            "id": format!("resp_{n}"), "model": "gpt-test", "status": "completed",
            "output": [item],
            "usage": {"input_tokens": 100 * n, "input_tokens_details": {"cached_tokens": 10},
                      "output_tokens": 7}}}));
    }
    events.iter().map(Value::to_string).collect()
}

/// A WebSocket upstream: each `response.create` is answered by `answer`; the second is held
/// (no final event) when `hold_second`.
async fn ws_upstream(hold_second: bool) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = s2.clone();
            tokio::spawn(async move {
                let record = seen.clone();
                // tungstenite's callback type, whose error is an HTTP response.
                #[allow(clippy::result_large_err)]
                let callback =
                    move |req: &tokio_tungstenite::tungstenite::handshake::server::Request,
                          resp| {
                        record.lock().unwrap().headers = req
                            .headers()
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                            .collect();
                        Ok(resp)
                    };
                let mut ws = tokio_tungstenite::accept_hdr_async(stream, callback)
                    .await
                    .unwrap();
                let mut n = 0;
                while let Some(Ok(msg)) = ws.next().await {
                    seen.lock().unwrap().messages.push(msg.clone());
                    if let Message::Text(t) = &msg
                        && t.as_str().contains("response.create")
                    {
                        n += 1;
                        for e in answer(n, hold_second && n == 2) {
                            ws.send(Message::text(e)).await.unwrap();
                        }
                    }
                    if matches!(msg, Message::Close(_)) {
                        break;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

async fn proxy(
    upstream: &str,
    capture: &std::path::Path,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (http, stop, run) =
        crate::proxy_limits::proxy_with(upstream, capture, ConnectionLimits::default()).await;
    let addr = http.trim_start_matches("http://");
    (format!("ws://{addr}/v1/responses"), stop, run)
}

type Client =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(url: &str) -> Client {
    let mut req = url.into_client_request().unwrap();
    let h = req.headers_mut();
    h.insert(
        "openai-beta",
        "responses_websockets=2026-02-06".parse().unwrap(),
    );
    h.insert("authorization", "Bearer sk-secret-test".parse().unwrap());
    let (ws, resp) = tokio_tungstenite::connect_async(req).await.unwrap();
    assert_eq!(resp.status(), 101);
    ws
}

/// The text messages up to and including the one whose type is `last`.
async fn texts_until(ws: &mut Client, last: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("no message")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = msg {
            let done = t.as_str().contains(last);
            out.push(t.to_string());
            if done {
                return out;
            }
        }
    }
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_pass_unchanged_and_each_request_is_an_exchange_with_its_context() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let (up, seen) = ws_upstream(false).await;
    let (url, _stop, _run) = proxy(&up, &capture).await;
    let mut ws = connect(&url).await;
    let first = json!({"type": "response.create", "model": "gpt-test",
        "instructions": "be brief", "input": [user("hello")],
        "tools": [{"type": "function", "name": "shell", "parameters": {}}]})
    .to_string();
    ws.send(Message::text(first.clone())).await.unwrap();
    let got = texts_until(&mut ws, "response.completed").await;
    assert_eq!(
        got,
        answer(1, false),
        "the upstream's messages, byte for byte"
    );
    let second = json!({"type": "response.create", "model": "gpt-test",
        "previous_response_id": "resp_1", "input": [user("again")],
        "tools": [{"type": "function", "name": "shell", "parameters": {}}]})
    .to_string();
    ws.send(Message::text(second.clone())).await.unwrap();
    ws.send(Message::Ping(b"p1".to_vec().into())).await.unwrap();
    assert_eq!(
        texts_until(&mut ws, "response.completed").await,
        answer(2, false)
    );
    ws.close(None).await.unwrap();
    while let Some(Ok(_)) = ws.next().await {}

    let lines = capture_lines(&capture, 2).await;
    {
        let seen = seen.lock().unwrap();
        let texts: Vec<String> = seen
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Text(t) => Some(t.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            vec![first.clone(), second.clone()],
            "the client's messages, byte for byte"
        );
        assert!(
            seen.messages
                .iter()
                .any(|m| matches!(m, Message::Ping(p) if &p[..] == b"p1")),
            "the ping went on: {:?}",
            seen.messages
        );
        assert!(
            seen.messages.iter().any(|m| matches!(m, Message::Close(_))),
            "the close went on"
        );
        let header = |n: &str| {
            seen.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            header("openai-beta").as_deref(),
            Some("responses_websockets=2026-02-06")
        );
        assert_eq!(
            header("authorization").as_deref(),
            Some("Bearer sk-secret-test")
        );
    }
    let text = std::fs::read_to_string(&capture).unwrap();
    assert!(!text.contains("sk-secret-test"), "no key in the capture");
    let ex: Vec<&Value> = lines.iter().filter(|l| l["type"] == "exchange").collect();
    assert_eq!(ex.len(), 2);
    let (a, b) = (ex[0], ex[1]);
    assert_eq!(a["request"]["websocket"]["message"], 1);
    assert_eq!(a["request"]["bytes"], first.len());
    assert_eq!(a["response"]["status"], 101);
    assert_eq!(a["response"]["text"], "answer 1");
    assert_eq!(a["response"]["usage"]["input_tokens"], 90);
    assert_eq!(a["response"]["usage"]["cache_read_tokens"], 10);
    assert_eq!(a["response"]["events"], 3);
    assert!(a.get("failure").is_none(), "{a}");
    let ws_b = &b["request"]["websocket"];
    assert_eq!(ws_b["connection"], a["request"]["websocket"]["connection"]);
    assert_eq!(ws_b["previous_response_id"], "resp_1");
    assert_eq!(ws_b["items_carried"], 2, "the first input and its output");
    let input = b["request"]["body"]["input"].as_array().unwrap();
    let texts: Vec<&str> = input
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec!["hello", "answer 1", "again"],
        "what the model saw"
    );
    assert_eq!(
        b["request"]["bytes"],
        second.len(),
        "the message's own length"
    );

    // Read back as a session: two calls of one thread, the second extending the first.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(["inspect", "--json"])
        .arg(&capture)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["calls"], 2, "{report}");
    assert_eq!(
        report["compactions"].as_array().unwrap().len(),
        0,
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upgrade_reaches_the_client_as_it_came_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    // A plain HTTP server that refuses every request with a 401.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let body = r#"{"error":{"message":"bad key"}}"#;
            let _ = s
                .write_all(
                    format!(
                        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                )
                .await;
        }
    });
    let (url, _stop, _run) = proxy(&format!("http://{addr}"), &capture).await;
    let err = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap_err();
    match err {
        tokio_tungstenite::tungstenite::Error::Http(resp) => {
            assert_eq!(resp.status(), 401);
            assert_eq!(
                resp.body().as_deref(),
                Some(&br#"{"error":{"message":"bad key"}}"#[..])
            );
        }
        other => panic!("expected the 401, got {other}"),
    }
    let lines = capture_lines(&capture, 1).await;
    assert_eq!(lines[1]["response"]["status"], 401);
    assert!(
        lines[1]["response"]["error"]
            .as_str()
            .unwrap()
            .contains("bad key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_writes_the_websocket_exchange_in_flight_marked_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let (up, _seen) = ws_upstream(true).await;
    let (url, stop, run) = proxy(&up, &capture).await;
    let mut ws = connect(&url).await;
    let req = json!({"type": "response.create", "model": "m", "input": [user("one")]}).to_string();
    ws.send(Message::text(req.clone())).await.unwrap();
    texts_until(&mut ws, "response.completed").await;
    ws.send(Message::text(req)).await.unwrap();
    texts_until(&mut ws, "output_text.delta").await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("the stop never ended")
        .unwrap();
    let lines = capture_lines(&capture, 2).await;
    let cut = lines
        .iter()
        .find(|l| l["request"]["websocket"]["message"] == 2)
        .unwrap();
    assert!(
        cut["failure"].as_str().unwrap().contains("incomplete"),
        "{cut}"
    );
    assert_eq!(
        cut["response"]["text"], "answer 2",
        "what had arrived is kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_on_another_path_is_not_a_websocket() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let (up, _seen) = ws_upstream(false).await;
    let (url, _stop, _run) = proxy(&up, &capture).await;
    let other = url.replace("/v1/responses", "/v1/messages");
    assert!(
        tokio_tungstenite::connect_async(other.as_str())
            .await
            .is_err()
    );
}
