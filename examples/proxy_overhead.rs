//! The overhead `ctxlab proxy` adds, against an upstream on 127.0.0.1 in this process:
//! time to first byte, per-SSE-event latency (p50/p99 over 10,000 events, each sent after
//! the client received the one before, directly and through the proxy), and the peak RSS
//! while a 100 MB request body goes through. Run it in release:
//! `cargo run --release --example proxy_overhead`. Figures, not assertions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxlab::proxy::{CaptureTarget, ConnectionLimits, Proxy, ProxyConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Semaphore};

const EVENTS: usize = 10_000;
const BIG_BODY: usize = 100 << 20;

/// Upstream: for a request whose path ends in `/big`, reads the body to its end and answers
/// a small JSON; otherwise streams `EVENTS` SSE events, each after a permit, noting when
/// each was written.
async fn upstream(gate: Arc<Semaphore>, sent: Arc<Mutex<Vec<Instant>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let (gate, sent) = (gate.clone(), sent.clone());
            tokio::spawn(async move {
                let _ = s.set_nodelay(true);
                let mut buf = vec![0u8; 1 << 16];
                let mut head = Vec::new();
                let end = loop {
                    let n = s.read(&mut buf).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                    if let Some(p) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let text = String::from_utf8_lossy(&head[..end]).to_lowercase();
                if text.starts_with("post /big") {
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map(|v| v.trim().parse().unwrap())
                        .unwrap();
                    let mut got = head.len() - end;
                    while got < len {
                        let n = s.read(&mut buf).await.unwrap();
                        if n == 0 {
                            return;
                        }
                        got += n;
                    }
                    let body = b"{\"ok\":true}";
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    s.write_all(reply.as_bytes()).await.unwrap();
                    s.write_all(body).await.unwrap();
                    return;
                }
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                    .await
                    .unwrap();
                for i in 0..EVENTS {
                    gate.acquire().await.unwrap().forget();
                    let data = format!(
                        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"token {i} \"}}}}\n\n"
                    );
                    let chunk = format!("{:x}\r\n{data}\r\n", data.len());
                    sent.lock().await.push(Instant::now());
                    if s.write_all(chunk.as_bytes()).await.is_err() {
                        return;
                    }
                }
                let _ = s.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    url
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Streams from `target` (the upstream itself, or a proxy in front of it): time to first
/// byte and each event's latency, each event asked for once the one before arrived.
async fn stream_through(
    target: &str,
    gate: &Semaphore,
    sent: &Mutex<Vec<Instant>>,
) -> (Duration, Vec<Duration>) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let start = Instant::now();
    gate.add_permits(1);
    let mut resp = client
        .post(format!("{target}/v1/messages"))
        .body(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}"#)
        .send()
        .await
        .unwrap();
    let mut ttfb = None;
    let mut latencies = Vec::with_capacity(EVENTS);
    let mut pending = Vec::new();
    let mut received = 0;
    while let Some(chunk) = resp.chunk().await.unwrap() {
        let now = Instant::now();
        ttfb.get_or_insert(now - start);
        pending.extend_from_slice(&chunk);
        // Whole events only: an event may come in two chunks.
        while let Some(p) = pending.windows(2).position(|w| w == b"\n\n") {
            pending.drain(..p + 2);
            let at = sent.lock().await[received];
            latencies.push(now - at);
            received += 1;
            if received < EVENTS {
                gate.add_permits(1);
            }
        }
    }
    (ttfb.unwrap(), latencies)
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    // The proxy's upstream is set per run below; one proxy per run keeps them apart.
    let start_proxy = |up: String| {
        let capture = dir.path().join(format!("c-{}.jsonl", fastrand::u64(..)));
        async move {
            let proxy = Proxy::bind(
                ProxyConfig {
                    listen: "127.0.0.1:0".parse().unwrap(),
                    upstream: Some(up),
                    allow_non_loopback: false,
                    capture: CaptureTarget::File(capture),
                    limits: ConnectionLimits::default(),
                },
                None,
            )
            .await
            .unwrap();
            let addr = proxy.local_addr().unwrap();
            tokio::spawn(proxy.run(std::future::pending()));
            format!("http://{addr}")
        }
    };

    let gate = Arc::new(Semaphore::new(0));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let up = upstream(gate.clone(), sent.clone()).await;
    let (direct_ttfb, mut direct) = stream_through(&up, &gate, &sent).await;
    // Through the proxy: an upstream of its own, the proxy in front of it.
    let gate = Arc::new(Semaphore::new(0));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let up = upstream(gate.clone(), sent.clone()).await;
    let proxied_base = start_proxy(up).await;
    let (proxied_ttfb, mut proxied) = stream_through(&proxied_base, &gate, &sent).await;
    direct.sort();
    proxied.sort();
    println!(
        "events: {} direct, {} through the proxy",
        direct.len(),
        proxied.len()
    );
    println!(
        "time to first byte: direct {:?}, proxied {:?}",
        direct_ttfb, proxied_ttfb
    );
    for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
        let (d, x) = (percentile(&direct, p), percentile(&proxied, p));
        println!(
            "per event {name}: direct {:?}, proxied {:?}, overhead {:?}",
            d,
            x,
            x.saturating_sub(d)
        );
    }

    // 100 MB through the proxy, sent from a stream of 64 KiB chunks (never held whole).
    let gate = Arc::new(Semaphore::new(0));
    let up = upstream(gate, Arc::new(Mutex::new(Vec::new()))).await;
    let base = start_proxy(up).await;
    let before = peak_rss_kib();
    let chunk = bytes::Bytes::from(vec![b'x'; 64 << 10]);
    let body = futures::stream::iter(
        (0..BIG_BODY / chunk.len()).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
    );
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let t = Instant::now();
    let resp = client
        .post(format!("{base}/big"))
        .header("content-length", BIG_BODY.to_string())
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let _ = resp.bytes().await.unwrap();
    println!(
        "100 MB request body through the proxy in {:?}: peak RSS {} KiB before, {} KiB after",
        t.elapsed(),
        before,
        peak_rss_kib()
    );
}
