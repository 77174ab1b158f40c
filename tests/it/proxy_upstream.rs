//! A scripted upstream on 127.0.0.1 for the proxy's tests: raw HTTP/1.1 over tokio, so a
//! test decides every byte and every pause. It records each request (head and body, a
//! chunked body decoded), answers with a closure's `Reply`, can hold a streamed answer
//! between two chunks until the test releases it, and notes when the proxy closed a
//! connection mid-answer (a cancel reaching the upstream).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxlab::proxy::{CaptureTarget, ConnectionLimits, Proxy, ProxyConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// One request as the upstream received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Header lines, lower-cased names: (name, value).
    pub headers: Vec<(String, String)>,
    pub path: String,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the upstream answers.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Sent with `Content-Length` when there is one chunk, chunked otherwise.
    pub chunks: Vec<Vec<u8>>,
    /// Before each chunk after the first, one permit is taken from here (None: no pause).
    pub gate: Option<Arc<Semaphore>>,
}

impl Reply {
    pub fn full(status: u16, content_type: &str, body: &[u8]) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            chunks: vec![body.to_vec()],
            gate: None,
        }
    }

    pub fn streamed(chunks: Vec<Vec<u8>>, gate: Option<Arc<Semaphore>>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            gate,
        }
    }
}

type Script = dyn Fn(&Received) -> Reply + Send + Sync;

pub struct Upstream {
    pub url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
    /// Connections the proxy closed before the answer was all sent.
    pub closed_mid_answer: Arc<AtomicUsize>,
}

impl Upstream {
    pub async fn start(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(AtomicUsize::new(0));
        let script: Arc<Script> = Arc::new(script);
        let (r, c) = (received.clone(), closed.clone());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (r, c, script) = (r.clone(), c.clone(), script.clone());
                tokio::spawn(async move { serve(socket, r, c, script).await });
            }
        });
        Upstream {
            url,
            received,
            closed_mid_answer: closed,
        }
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    received: Arc<Mutex<Vec<Received>>>,
    closed: Arc<AtomicUsize>,
    script: Arc<Script>,
) {
    loop {
        let Some(req) = read_request(&mut socket).await else {
            return;
        };
        let reply = script(&req);
        received.lock().unwrap().push(req);
        let mut head = format!("HTTP/1.1 {} X\r\n", reply.status);
        for (n, v) in &reply.headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        let chunked = reply.chunks.len() != 1;
        if chunked {
            head.push_str("transfer-encoding: chunked\r\n\r\n");
        } else {
            head.push_str(&format!(
                "content-length: {}\r\n\r\n",
                reply.chunks[0].len()
            ));
        }
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for (i, chunk) in reply.chunks.iter().enumerate() {
            if i > 0
                && let Some(gate) = &reply.gate
            {
                // Wait for the test's permit, or for the proxy to close the connection.
                let mut probe = [0u8; 1];
                tokio::select! {
                    permit = gate.acquire() => permit.unwrap().forget(),
                    n = socket.read(&mut probe) => {
                        if matches!(n, Ok(0) | Err(_)) {
                            closed.fetch_add(1, Ordering::SeqCst);
                            return;
                        }
                    }
                }
            }
            let bytes = if chunked {
                let mut b = format!("{:x}\r\n", chunk.len()).into_bytes();
                b.extend_from_slice(chunk);
                b.extend_from_slice(b"\r\n");
                b
            } else {
                chunk.clone()
            };
            if socket.write_all(&bytes).await.is_err() {
                closed.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
        if chunked && socket.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let mut tmp = [0u8; 8192];
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let find = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let body = if let Some(len) = find("content-length") {
        let len: usize = len.parse().ok()?;
        while rest.len() < len {
            let mut tmp = vec![0u8; 1 << 16];
            let n = socket.read(&mut tmp).await.ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(&tmp[..n]);
        }
        rest.truncate(len);
        rest
    } else if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        read_chunked(socket, rest).await?
    } else {
        Vec::new()
    };
    Some(Received {
        headers,
        path,
        body,
    })
}

async fn read_chunked(socket: &mut TcpStream, mut buf: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut pos = 0;
    loop {
        // Enough bytes for the size line?
        let line_end = loop {
            if let Some(p) = buf[pos..].windows(2).position(|w| w == b"\r\n") {
                break pos + p;
            }
            let mut tmp = vec![0u8; 1 << 16];
            let n = socket.read(&mut tmp).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&tmp[..n]);
        };
        let size_text = String::from_utf8_lossy(&buf[pos..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        let start = line_end + 2;
        while buf.len() < start + size + 2 {
            let mut tmp = vec![0u8; 1 << 16];
            let n = socket.read(&mut tmp).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&tmp[..n]);
        }
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&buf[start..start + size]);
        pos = start + size + 2;
        // Keep the buffer small for large bodies.
        buf.drain(..pos);
        pos = 0;
    }
}

/// A proxy in this process, in front of `upstream`, capturing to `capture`.
pub async fn start_proxy(upstream: &str, capture: &std::path::Path) -> String {
    let config = ProxyConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: Some(upstream.to_string()),
        allow_non_loopback: false,
        capture: CaptureTarget::File(capture.to_path_buf()),
        limits: ConnectionLimits::default(),
    };
    let proxy = Proxy::bind(config, None).await.unwrap();
    let addr = proxy.local_addr().unwrap();
    tokio::spawn(proxy.run(std::future::pending()));
    format!("http://{addr}")
}

/// The capture's lines once it has `n` exchanges (waits up to 10 s).
pub async fn capture_lines(path: &std::path::Path, n: usize) -> Vec<serde_json::Value> {
    for _ in 0..1000 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.iter().filter(|l| l["type"] == "exchange").count() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the capture never had {n} exchanges");
}

/// `event: name\ndata: json\n\n` for each event.
pub fn sse(events: &[(&str, serde_json::Value)]) -> Vec<u8> {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect::<String>()
        .into_bytes()
}

/// `data: json\n\n` for each event (OpenAI Chat's shape), then `data: [DONE]`.
pub fn data_only(events: &[serde_json::Value]) -> Vec<u8> {
    let mut s: String = events.iter().map(|d| format!("data: {d}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

/// A test client: direct (no proxy from the environment), TLS set up as ctxlab sets it up.
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}
