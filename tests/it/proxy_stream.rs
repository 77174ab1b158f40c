//! `ctxlab proxy` streams: a chunk reaches the client before the upstream has sent the next
//! one, and a client that goes away cancels the upstream request (the upstream sees its
//! connection closed).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Semaphore;

use crate::proxy_upstream::{Reply, Upstream, capture_lines, sse, start_proxy};

fn events() -> Vec<Vec<u8>> {
    vec![
        sse(&[(
            "message_start",
            json!({"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}),
        )]),
        sse(&[(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"one"}}),
        )]),
        sse(&[(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" two"}}),
        )]),
        sse(&[("message_stop", json!({"type":"message_stop"}))]),
    ]
}

async fn streamed_post(proxy: &str) -> reqwest::Response {
    crate::proxy_upstream::client()
        .post(format!("{proxy}/v1/messages"))
        .header("content-type", "application/json")
        .body(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}"#)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_chunk_reaches_the_client_before_the_upstream_sends_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let gate = Arc::new(Semaphore::new(0));
    let chunks = events();
    let (c2, g2) = (chunks.clone(), gate.clone());
    let upstream = Upstream::start(move |_| Reply::streamed(c2.clone(), Some(g2.clone()))).await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let mut resp = streamed_post(&proxy).await;
    for (i, expected) in chunks.iter().enumerate() {
        // The upstream sends chunk i+1 only after this permit: a proxy that held chunk i
        // back would wait here forever.
        let got = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("chunk {i} was held back by the proxy"))
            .unwrap()
            .unwrap();
        assert_eq!(&got[..], &expected[..], "chunk {i}");
        gate.add_permits(1);
    }
    assert!(resp.chunk().await.unwrap().is_none());
    let lines = capture_lines(&capture, 1).await;
    assert_eq!(lines[1]["response"]["text"], "one two");
    assert_eq!(lines[1]["response"]["events"], 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_the_upstream_request() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    // No permit is ever given: the upstream holds after the first chunk until the proxy
    // closes the connection.
    let gate = Arc::new(Semaphore::new(0));
    let (c2, g2) = (events(), gate.clone());
    let upstream = Upstream::start(move |_| Reply::streamed(c2.clone(), Some(g2.clone()))).await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let mut resp = streamed_post(&proxy).await;
    let first = resp.chunk().await.unwrap().unwrap();
    assert_eq!(&first[..], &events()[0][..]);
    drop(resp);
    for _ in 0..1000 {
        if upstream.closed_mid_answer.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        upstream.closed_mid_answer.load(Ordering::SeqCst),
        1,
        "the upstream never saw its connection closed"
    );
    let lines = capture_lines(&capture, 1).await;
    assert!(
        lines[1]["failure"]
            .as_str()
            .unwrap()
            .contains("client went away")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_after_the_completed_event_cancelled_nothing() {
    // Codex closes its connection once `response.completed` arrived, while the upstream
    // still holds the connection open (here: a keep-alive comment it never gets to send).
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("cap.jsonl");
    let completed = json!({"type": "response.completed", "response": {
        "model": "gpt-5.1-codex", "status": "completed",
        "output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "done"}]}],
        "usage": {"input_tokens": 10, "output_tokens": 2}}});
    let chunks = vec![
        sse(&[(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "delta": "done"}),
        )]),
        sse(&[("response.completed", completed)]),
        b": keep-alive\n\n".to_vec(),
    ];
    // One permit: the delta and the completed event go, the comment waits for ever.
    let gate = Arc::new(Semaphore::new(1));
    let (c2, g2) = (chunks.clone(), gate.clone());
    let upstream = Upstream::start(move |_| Reply::streamed(c2.clone(), Some(g2.clone()))).await;
    let proxy = start_proxy(&upstream.url, &capture).await;
    let mut resp = crate::proxy_upstream::client()
        .post(format!("{proxy}/v1/responses"))
        .header("content-type", "application/json")
        .body(r#"{"model":"gpt-5.1-codex","stream":true,"input":"go"}"#)
        .send()
        .await
        .unwrap();
    let mut got = Vec::new();
    while !String::from_utf8_lossy(&got).contains("response.completed") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
            .await
            .expect("the completed event never came")
            .unwrap()
            .unwrap();
        got.extend_from_slice(&chunk);
    }
    drop(resp);
    let lines = capture_lines(&capture, 1).await;
    assert_eq!(lines[1]["response"]["stop_reason"], "completed");
    assert!(
        lines[1].get("failure").is_none(),
        "a completed exchange was marked: {}",
        lines[1]["failure"]
    );
}
