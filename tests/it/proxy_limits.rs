//! `ctxlab proxy` under slow, idle, endless and interrupted traffic (issue 39, items 3 and
//! 7): a head sent a byte at a time and an idle connection are closed at the head
//! deadline, a stalled body ends its exchange, idle connections at the connection cap
//! give way to a request, an answer past the upstream deadline is cut off and recorded,
//! and a stop writes the exchange in flight, marked incomplete.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxlab::proxy::{CaptureTarget, ConnectionLimits, Proxy, ProxyConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use crate::proxy_upstream::{Reply, Upstream, capture_lines, client, sse};

fn quick() -> ConnectionLimits {
    ConnectionLimits {
        header_deadline: Duration::from_millis(400),
        body_idle: Duration::from_millis(400),
        body_deadline: Duration::from_secs(5),
        upstream_deadline: Duration::from_secs(30),
        max_connections: 64,
    }
}

/// A proxy with these limits; it stops when the returned sender is used (or dropped), and
/// the handle ends when its `run` has returned. `proxy_websocket` starts its proxies here too.
pub(crate) async fn proxy_with(
    upstream: &str,
    capture: &std::path::Path,
    limits: ConnectionLimits,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let config = ProxyConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: Some(upstream.to_string()),
        allow_non_loopback: false,
        capture: CaptureTarget::File(capture.to_path_buf()),
        limits,
    };
    let proxy = Proxy::bind(config, None).await.unwrap();
    let addr = proxy.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(async move {
        proxy
            .run(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    (format!("http://{addr}"), stop, run)
}

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
    ]
}

/// Waits until the peer closes `socket` (a read of 0 or an error); the time it took.
async fn closed_within(socket: &mut TcpStream, most: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(most, socket.read(&mut buf)).await {
            Err(_) => panic!("the proxy kept the connection open past {most:?}"),
            Ok(Ok(0) | Err(_)) => return start.elapsed(),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_head_and_an_idle_connection_are_closed_at_the_head_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
    let (proxy, _stop, _run) =
        proxy_with(&upstream.url, &dir.path().join("c.jsonl"), quick()).await;
    let addr = proxy.trim_start_matches("http://").to_string();
    // A byte every 100 ms, forever: before, never closed.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    let writer = {
        let (mut read, mut write) = slow.into_split();
        let writer = tokio::spawn(async move {
            for b in
                b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-long: aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            {
                if write.write_all(&[*b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let start = Instant::now();
        let mut buf = [0u8; 256];
        let n = tokio::time::timeout(Duration::from_secs(5), read.read(&mut buf))
            .await
            .expect("a head sent a byte at a time was never cut off");
        assert!(matches!(n, Ok(_) | Err(_)));
        assert!(start.elapsed() < Duration::from_secs(3));
        writer
    };
    writer.abort();
    slow = TcpStream::connect(&addr).await.unwrap();
    let took = closed_within(&mut slow, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(300),
        "closed at once: {took:?}"
    );
    assert!(upstream.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_ends_its_exchange_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
    let (proxy, _stop, _run) = proxy_with(&upstream.url, &capture, quick()).await;
    let mut socket = TcpStream::connect(proxy.trim_start_matches("http://"))
        .await
        .unwrap();
    socket
        .write_all(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"model\":")
        .await
        .unwrap();
    closed_within(&mut socket, Duration::from_secs(5)).await;
    let lines = capture_lines(&capture, 1).await;
    let failure = lines[1]["failure"].as_str().unwrap();
    assert!(failure.contains("stalled"), "{failure}");
    assert_eq!(lines[1]["request"]["bytes"], 9);
}

/// Reaching the cap closes no connection: only a connection waiting at the cap makes the
/// idle ones close. Before, the cap being reached at all closed the idle connections, a
/// client's between its connect and its request among them (the test below failed now and
/// then under load through this).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_that_fills_the_cap_keeps_its_place_until_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
    let limits = ConnectionLimits {
        header_deadline: Duration::from_secs(60),
        max_connections: 2,
        ..quick()
    };
    let (proxy, _stop, _run) = proxy_with(&upstream.url, &dir.path().join("c.jsonl"), limits).await;
    let addr = proxy.trim_start_matches("http://").to_string();
    // Two clients connect, a moment apart, and are quiet for a moment (between connecting
    // and writing): the second fills the cap, and no third waits.
    let mut socket = TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _second = TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    socket
        .write_all(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_at_the_cap_give_way_to_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
    let limits = ConnectionLimits {
        header_deadline: Duration::from_secs(60),
        max_connections: 4,
        ..quick()
    };
    let (proxy, _stop, _run) = proxy_with(&upstream.url, &dir.path().join("c.jsonl"), limits).await;
    let addr = proxy.trim_start_matches("http://").to_string();
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Before: the request waited behind the idle connections until the client gave up.
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client()
            .post(format!("{proxy}/v1/messages"))
            .header("content-type", "application/json")
            .body("{}")
            .send(),
    )
    .await
    .expect("a request waited behind idle connections")
    .unwrap();
    assert_eq!(answer.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_the_upstream_deadline_is_cut_off_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    // The gate is never opened: the answer would stream forever.
    let gate = Arc::new(Semaphore::new(0));
    let g2 = gate.clone();
    let upstream = Upstream::start(move |_| Reply::streamed(events(), Some(g2.clone()))).await;
    let limits = ConnectionLimits {
        upstream_deadline: Duration::from_millis(700),
        ..quick()
    };
    let (proxy, _stop, _run) = proxy_with(&upstream.url, &capture, limits).await;
    let mut resp = client()
        .post(format!("{proxy}/v1/messages"))
        .header("content-type", "application/json")
        .body(r#"{"model":"m","stream":true,"messages":[]}"#)
        .send()
        .await
        .unwrap();
    assert!(resp.chunk().await.unwrap().is_some());
    let rest = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
        .await
        .expect("the answer was never cut off");
    assert!(rest.is_err(), "a cut answer must not end cleanly: {rest:?}");
    let lines = capture_lines(&capture, 1).await;
    let failure = lines[1]["failure"].as_str().unwrap();
    assert!(failure.contains("--upstream-deadline"), "{failure}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_writes_the_exchange_in_flight_marked_incomplete() {
    // Issue 39, item 7: Ctrl-C while an answer streamed lost that exchange.
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let gate = Arc::new(Semaphore::new(1));
    let g2 = gate.clone();
    let upstream = Upstream::start(move |_| Reply::streamed(events(), Some(g2.clone()))).await;
    let (proxy, stop, run) = proxy_with(&upstream.url, &capture, quick()).await;
    let done = client()
        .post(format!("{proxy}/v1/messages"))
        .header("content-type", "application/json")
        .body(r#"{"model":"m","messages":[{"role":"user","content":"first"}]}"#)
        .send()
        .await
        .unwrap();
    // The first answer is let through whole (two permits after the one given).
    gate.add_permits(1);
    assert!(done.bytes().await.is_ok());
    let mut streaming = client()
        .post(format!("{proxy}/v1/messages"))
        .header("content-type", "application/json")
        .body(r#"{"model":"m","messages":[{"role":"user","content":"second"}]}"#)
        .send()
        .await
        .unwrap();
    assert!(streaming.chunk().await.unwrap().is_some());
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("the stop never ended")
        .unwrap();
    let lines = capture_lines(&capture, 2).await;
    let exchanges: Vec<_> = lines.iter().filter(|l| l["type"] == "exchange").collect();
    assert_eq!(exchanges.len(), 2, "both exchanges are in the capture");
    let cut = exchanges.iter().find(|e| e["n"] == 2).unwrap();
    let failure = cut["failure"].as_str().unwrap();
    assert!(failure.contains("incomplete"), "{failure}");
    assert_eq!(
        cut["request"]["body"]["messages"][0]["content"], "second",
        "the request is kept whole"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_256_open_files_300_idle_connections_do_not_starve_a_request() {
    // Issue 39, item 3: the proxy ran out of files and a normal request timed out.
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" proxy --listen 127.0.0.1:0 --upstream "$1" --capture "$2""#)
        .arg(env!("CARGO_BIN_EXE_ctxlab"))
        .arg(&upstream.url)
        .arg(&capture)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no start line");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split(',').next().unwrap().trim().to_string();
        }
    };
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = tokio::time::timeout(
        Duration::from_secs(20),
        client()
            .post(format!("http://{addr}/v1/messages"))
            .header("content-type", "application/json")
            .body("{}")
            .send(),
    )
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer
        .expect("the request waited behind idle connections")
        .unwrap();
    assert_eq!(answer.status(), 200);
}

/// Random bytes, and heads with random parts, sent to the proxy on fresh connections: it
/// answers or closes each within the head deadline, and still serves a request after.
#[test]
fn random_requests_never_stop_the_proxy() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let (proxy, upstream) = rt.block_on(async {
        let upstream = Upstream::start(|_| Reply::full(200, "application/json", b"{}")).await;
        let (proxy, stop, run) = proxy_with(&upstream.url, &capture, quick()).await;
        std::mem::forget((stop, run));
        (proxy, upstream)
    });
    let addr = proxy.trim_start_matches("http://").to_string();
    let request = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300),
        (
            "(GET|POST|PUT|\\PC{1,6})",
            "(/v1/messages|/v1/responses|/[\\PC]{0,20}|\\*)",
            proptest::collection::vec(("[a-zA-Z-]{1,12}", "[\\PC]{0,30}"), 0..6),
            proptest::collection::vec(any::<u8>(), 0..100),
        )
            .prop_map(|(m, p, h, body)| {
                let mut out = format!("{m} {p} HTTP/1.1\r\nhost: x\r\n").into_bytes();
                for (n, v) in h {
                    out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
                }
                out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
                out
            }),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    runner
        .run(&request, |bytes| {
            rt.block_on(async {
                let mut socket = TcpStream::connect(&addr).await.unwrap();
                let _ = socket.write_all(&bytes).await;
                let _ = socket.shutdown().await;
                let mut sink = Vec::new();
                let read =
                    tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut sink))
                        .await;
                assert!(read.is_ok(), "the proxy neither answered nor closed");
            });
            Ok(())
        })
        .unwrap();
    rt.block_on(async {
        let answer = client()
            .post(format!("{proxy}/v1/messages"))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    });
    drop(upstream);
}
