//! The overhead `ctxlab proxy` adds on the Responses WebSocket (docs/capture.md), against a
//! WebSocket upstream on 127.0.0.1 in this process: per-message latency (p50/p95/p99 over
//! 10,000 events, each sent after the client received the one before, directly and through
//! the proxy), and the peak RSS while one exchange of 100 MB of events goes through.
//! `cargo run --release --example proxy_ws_overhead`. Figures, not assertions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxlab::proxy::{CaptureTarget, ConnectionLimits, Proxy, ProxyConfig};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Semaphore};
use tokio_tungstenite::tungstenite::Message;

const EVENTS: usize = 10_000;
const BIG_EVENTS: usize = 1_600;
const BIG_EVENT_BYTES: usize = 64 << 10;

/// Upstream: on a `response.create` whose input says `big`, 1,600 deltas of 64 KiB then
/// the final event; otherwise `EVENTS` small deltas, each after a permit, noting when each
/// was sent, then the final event.
async fn upstream(gate: Arc<Semaphore>, sent: Arc<Mutex<Vec<Instant>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            let _ = s.set_nodelay(true);
            let (gate, sent) = (gate.clone(), sent.clone());
            tokio::spawn(async move {
                let mut ws = tokio_tungstenite::accept_async(s).await.unwrap();
                while let Some(Ok(Message::Text(t))) = ws.next().await {
                    let done = r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#;
                    if t.as_str().contains("big") {
                        let delta = format!(
                            r#"{{"type":"response.output_text.delta","delta":"{}"}}"#,
                            "x".repeat(BIG_EVENT_BYTES)
                        );
                        for _ in 0..BIG_EVENTS {
                            ws.send(Message::text(delta.clone())).await.unwrap();
                        }
                    } else {
                        for _ in 0..EVENTS {
                            gate.acquire().await.unwrap().forget();
                            sent.lock().await.push(Instant::now());
                            ws.send(Message::text(
                                r#"{"type":"response.output_text.delta","delta":"hi"}"#,
                            ))
                            .await
                            .unwrap();
                        }
                    }
                    ws.send(Message::text(done)).await.unwrap();
                }
            });
        }
    });
    url
}

async fn latencies(url: &str, gate: &Semaphore, sent: &Mutex<Vec<Instant>>) -> Vec<Duration> {
    sent.lock().await.clear();
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws.send(Message::text(
        r#"{"type":"response.create","input":"small"}"#,
    ))
    .await
    .unwrap();
    let mut out = Vec::with_capacity(EVENTS);
    for i in 0..EVENTS {
        gate.add_permits(1);
        let _ = ws.next().await.unwrap().unwrap();
        let at = Instant::now();
        out.push(at - sent.lock().await[i]);
    }
    let _ = ws.next().await;
    out
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    v[((v.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let gate = Arc::new(Semaphore::new(0));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let up = upstream(gate.clone(), sent.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = ProxyConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: Some(up.clone()),
        allow_non_loopback: false,
        capture: CaptureTarget::File(dir.path().join("c.jsonl")),
        limits: ConnectionLimits::default(),
    };
    let proxy = Proxy::bind(config, None).await.unwrap();
    let addr = proxy.local_addr().unwrap();
    tokio::spawn(proxy.run(std::future::pending()));
    let direct_url = format!("{}/v1/responses", up.replace("http://", "ws://"));
    let proxy_url = format!("ws://{addr}/v1/responses");
    let mut direct = latencies(&direct_url, &gate, &sent).await;
    let mut through = latencies(&proxy_url, &gate, &sent).await;
    println!(
        "per message, {EVENTS} events: direct p50 {:.0} µs p95 {:.0} µs p99 {:.0} µs; through the proxy p50 {:.0} µs p95 {:.0} µs p99 {:.0} µs",
        pct(&mut direct, 0.5),
        pct(&mut direct, 0.95),
        pct(&mut direct, 0.99),
        pct(&mut through, 0.5),
        pct(&mut through, 0.95),
        pct(&mut through, 0.99)
    );
    let before = rss_kib();
    let started = Instant::now();
    let (mut ws, _) = tokio_tungstenite::connect_async(proxy_url.as_str())
        .await
        .unwrap();
    ws.send(Message::text(r#"{"type":"response.create","input":"big"}"#))
        .await
        .unwrap();
    let mut bytes = 0usize;
    while let Some(Ok(m)) = ws.next().await {
        bytes += m.len();
        if m.to_text().unwrap_or("").contains("response.completed") {
            break;
        }
    }
    // The capture line is written after the final event: give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!(
        "one exchange of {} MB of events through the proxy: {:.1} s; peak RSS {} MiB before, {} MiB after (this process: upstream, proxy and client together)",
        bytes / 1_000_000,
        started.elapsed().as_secs_f64(),
        before / 1024,
        rss_kib() / 1024
    );
}
