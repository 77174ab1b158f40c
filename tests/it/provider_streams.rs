//! Hostile streams from a server on 127.0.0.1: bytes that are not UTF-8, events past the size
//! limits, and a server that never finishes (silent, or dribbling keepalive comments). Each
//! must end in a clear error without retries, or within the call's deadline.

use std::time::Duration;

use crate::common::http::anthropic::{end, model, sse, start, text_block};
use crate::common::http::{exactly, once};
use crate::common::provider::{drain, fast_retry, req, retries};
use ctxlab::provider::{
    AnthropicModel, ApiKey, CallLimits, Model, OpenAiModel, ProviderError, StreamLimits,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc::unbounded_channel;
use wiremock::{MockServer, ResponseTemplate};

fn raw_sse(body: Vec<u8>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// A whole answer, "hi", with `extra` put in front of its first event.
fn answer_after(extra: &[u8]) -> Vec<u8> {
    let mut events = vec![start()];
    events.extend(text_block(0, "hi"));
    events.extend(end("end_turn"));
    let mut body = extra.to_vec();
    body.extend_from_slice(sse(&events).as_bytes());
    body
}

#[tokio::test]
async fn a_comment_with_invalid_utf8_is_ignored() {
    let server = MockServer::start().await;
    once(&server, raw_sse(answer_after(b": \xff\xfe\n\n"))).await;
    let (tx, _rx) = unbounded_channel();
    let answer = model(&server, 5).stream(&req(), &tx).await.unwrap();
    assert_eq!(answer.content, vec![ctxlab::message::block::text("hi")]);
}

#[tokio::test]
async fn invalid_utf8_in_data_is_a_clear_error_sent_once() {
    let server = MockServer::start().await;
    exactly(
        &server,
        raw_sse(answer_after(
            b"event: ping\ndata: {\"type\":\"ping\",\"x\":\"\xff\"}\n\n",
        )),
        1,
    )
    .await;
    let (tx, mut rx) = unbounded_channel();
    let err = model(&server, 5).stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::InvalidStream {
            message: "an event's data is not valid UTF-8".into()
        }
    );
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    assert!(retries(&drain(&mut rx)).is_empty());
}

#[tokio::test]
async fn an_event_past_its_cap_is_an_error_sent_once() {
    let server = MockServer::start().await;
    // A data line of 64 KiB with no newline, under a 16 KiB cap per event.
    let mut body = b"event: content_block_delta\ndata: ".to_vec();
    body.extend(std::iter::repeat_n(b'x', 64 * 1024));
    exactly(&server, raw_sse(body), 1).await;
    let m = model(&server, 5).with_stream_limits(StreamLimits {
        max_event_bytes: 16 * 1024,
        ..StreamLimits::default()
    });
    let (tx, _rx) = unbounded_channel();
    let err = m.stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::InvalidStream {
            message: "one event is larger than 16384 bytes".into()
        }
    );
}

#[tokio::test]
async fn an_answer_past_its_cap_is_an_error_sent_once() {
    let server = MockServer::start().await;
    exactly(&server, raw_sse(answer_after(b"")), 1).await;
    let m = model(&server, 5).with_stream_limits(StreamLimits {
        max_answer_bytes: 100,
        ..StreamLimits::default()
    });
    let (tx, _rx) = unbounded_channel();
    let err = m.stream(&req(), &tx).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::InvalidStream {
            message: "the answer is larger than 100 bytes".into()
        }
    );
}

/// A server on 127.0.0.1 that answers every connection with a 200 event stream, then
/// `dribble` every 5 ms and never ends it. Returns its root URL.
async fn endless_server(dribble: &'static [u8]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                loop {
                    if !dribble.is_empty() && socket.write_all(dribble).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            });
        }
    });
    url
}

fn deadline_ms(ms: u64) -> CallLimits {
    CallLimits {
        deadline: Duration::from_millis(ms),
        ..CallLimits::default()
    }
}

/// Keepalive comments arrive forever: no read is ever idle, so only the overall deadline
/// can end the call, and it does, with its own error.
#[tokio::test]
async fn keepalives_do_not_extend_the_deadline() {
    let url = endless_server(b": keepalive\n\n").await;
    let m = AnthropicModel::new(ApiKey::new("k"), "m")
        .unwrap()
        .with_base_url(url)
        .with_retry(fast_retry(5))
        .with_call_limits(deadline_ms(300));
    let (tx, _rx) = unbounded_channel();
    let err = tokio::time::timeout(Duration::from_secs(60), m.stream(&req(), &tx))
        .await
        .expect("the deadline ends the call")
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Deadline {
            limit: Duration::from_millis(300)
        }
    );
    assert!(!err.is_retryable());
}

/// A server that sends headers and then nothing: the same for the OpenAI wire.
#[tokio::test]
async fn a_silent_server_is_held_no_longer_than_the_deadline() {
    let url = endless_server(b"").await;
    let m = OpenAiModel::new("m")
        .unwrap()
        .with_base_url(url)
        .with_retry(fast_retry(5))
        .with_call_limits(deadline_ms(300));
    let (tx, _rx) = unbounded_channel();
    let err = tokio::time::timeout(Duration::from_secs(60), m.stream(&req(), &tx))
        .await
        .expect("the deadline ends the call")
        .unwrap_err();
    assert!(matches!(err, ProviderError::Deadline { .. }), "{err:?}");
}
