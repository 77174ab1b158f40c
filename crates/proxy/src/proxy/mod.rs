//! `ctxlab proxy`: an HTTP server on loopback that an agent (Claude Code, Codex, any client
//! of the Anthropic Messages, OpenAI Chat Completions or Responses API) is pointed at. Each
//! request is forwarded to the upstream (`route`) as it streams in, the response streams
//! back unchanged and unbuffered (`exchange`, `body`), and each exchange is appended to a
//! capture (`capture_file`) with its answer assembled (`assemble`). The capture's format is
//! `session::capture`, which also reads it back as a session (docs/capture.md).
//!
//! It never writes a header value that could be a key (`session::capture::header_value_kept`),
//! never prints one, and never changes a body byte either way.

mod assemble;
mod body;
mod capture_file;
mod exchange;
mod limits;
mod line;
pub mod route;
mod websocket;
mod ws_chain;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::session::capture::{CAPTURE_FORMAT, CAPTURE_VERSION, CaptureHeader, Exchange};

pub use capture_file::CaptureFile;
pub use exchange::MAX_CAPTURED_BODY_BYTES;
pub use limits::{ConnectionLimits, DEFAULT_UPSTREAM_DEADLINE, STOP_GRACE};
pub use line::MAX_CAPTURE_LINE_BYTES;

/// Capture lines built at once (each holds a body of up to `MAX_CAPTURED_BODY_BYTES` and
/// its line): the bound on the proxy's capture memory however many exchanges end together.
const CAPTURE_WORKERS: usize = 2;

/// An exchange as the watcher gets it: the capture line's fields without the request body
/// (kept as bytes for the capture only), and the number of messages that body held.
#[derive(Debug, Clone)]
pub struct WatchedExchange {
    pub exchange: Exchange,
    pub messages: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error(
        "{0} is not a loopback address: the proxy forwards keys, so it listens on 127.0.0.1 \
         or ::1 unless --allow-non-loopback says otherwise"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("capture {path}: {source}")]
    Capture {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: the file exists and is not a ctxlab capture; it is left alone")]
    NotACapture(PathBuf),
    #[error(
        "{0} is a symbolic link: a capture is never written through a link (name the file \
         itself, or a new name)"
    )]
    CaptureIsLink(PathBuf),
    #[error("--upstream {0}: expected an http:// or https:// URL")]
    BadUpstream(String),
    #[error("cannot encode a capture line: {0}")]
    Encode(#[source] serde_json::Error),
    #[error(transparent)]
    Client(#[from] crate::provider::ClientBuildError),
    #[error("accepting a connection failed: {0}")]
    Accept(#[source] std::io::Error),
}

impl ProxyError {
    /// Whether the user's input is at fault (a flag, a file named), not the system.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ProxyError::NotLoopback(_)
                | ProxyError::NotACapture(_)
                | ProxyError::CaptureIsLink(_)
                | ProxyError::BadUpstream(_)
        )
    }
}

/// Where the capture goes.
#[derive(Debug, Clone)]
pub enum CaptureTarget {
    /// A new file in this folder (`<data dir>/captures/` by default).
    NewIn(PathBuf),
    /// The file `--capture` names.
    File(PathBuf),
}

/// What `ctxlab proxy` was asked.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    pub listen: SocketAddr,
    pub upstream: Option<String>,
    pub allow_non_loopback: bool,
    pub capture: CaptureTarget,
    pub limits: ConnectionLimits,
}

/// Refuses a non-loopback address unless allowed.
pub fn check_listen(addr: SocketAddr, allow_non_loopback: bool) -> Result<(), ProxyError> {
    if addr.ip().is_loopback() || allow_non_loopback {
        Ok(())
    } else {
        Err(ProxyError::NotLoopback(addr))
    }
}

/// The lines to type to send Claude Code and Codex through the proxy at `addr`.
pub fn client_lines(addr: SocketAddr) -> Vec<String> {
    let base = format!("http://{addr}");
    vec![
        format!("Claude Code:  ANTHROPIC_BASE_URL={base} claude"),
        // Codex 0.171 reads no OPENAI_BASE_URL for its built-in provider: a config key.
        format!("Codex:        codex -c openai_base_url={base}/v1"),
        format!("Codex signed in with ChatGPT:  codex -c openai_base_url={base}/backend-api/codex"),
        format!("OpenAI SDKs and ctxlab:  OPENAI_BASE_URL={base}/v1"),
    ]
}

/// What the exchanges share: the settings, the client, the capture, the count.
pub(crate) struct Shared {
    upstream: Option<String>,
    client: reqwest::Client,
    capture: CaptureFile,
    spool_dir: PathBuf,
    next: AtomicU64,
    /// WebSocket connections opened so far (their numbers in the capture).
    websockets: AtomicU64,
    watch: Option<mpsc::Sender<WatchedExchange>>,
    capture_work: Arc<tokio::sync::Semaphore>,
    limits: ConnectionLimits,
    /// Cancelled when the proxy stops: exchanges in flight end and are written.
    stopping: tokio_util::sync::CancellationToken,
    in_flight: limits::InFlightCount,
    /// Bumped when a connection waits at the connection cap: the idle ones close. A
    /// generation, not a `Notify`: a connection subscribes when it is accepted, so it sees
    /// a bump made before its task first runs, and never one made before it came.
    pressure: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    fn next_number(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn next_websocket(&self) -> u64 {
        self.websockets.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Appends the exchange (its request body given as the client's JSON bytes) to the
    /// capture and hands it to the watcher (dropped when the watcher is behind: the capture
    /// is the record, the watch a view).
    fn record(&self, mut exchange: Exchange, body: Option<Vec<u8>>) {
        let messages = body.as_deref().map_or(0, body::message_count);
        match line::encode(&mut exchange, body.as_deref()) {
            Ok(bytes) => {
                drop(body);
                if let Err(e) = self.capture.append_encoded(&bytes) {
                    tracing::error!("capture write failed: {e}");
                }
            }
            Err(e) => tracing::error!("capture line not written: {e}"),
        }
        if let Some(tx) = &self.watch {
            let _ = tx.try_send(WatchedExchange { exchange, messages });
        }
    }
}

/// A bound proxy, ready to run.
pub struct Proxy {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Checks the address, binds it, and opens the capture (writing its header).
    /// `watch` receives each exchange as it is recorded.
    pub async fn bind(
        config: ProxyConfig,
        watch: Option<mpsc::Sender<WatchedExchange>>,
    ) -> Result<Proxy, ProxyError> {
        check_listen(config.listen, config.allow_non_loopback)?;
        if let Some(u) = &config.upstream
            && !(u.starts_with("http://") || u.starts_with("https://"))
        {
            return Err(ProxyError::BadUpstream(u.clone()));
        }
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ProxyError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ProxyError::Bind {
            addr: config.listen,
            source,
        })?;
        let header = CaptureHeader {
            format: CAPTURE_FORMAT.to_string(),
            version: CAPTURE_VERSION,
            ctxlab: env!("CARGO_PKG_VERSION").to_string(),
            started: crate::util::iso_utc(crate::util::unix_now()),
            listen: addr.to_string(),
            upstream: config.upstream.as_deref().map(public_url),
        };
        let capture = match &config.capture {
            CaptureTarget::NewIn(dir) => {
                CaptureFile::create_in(dir, crate::util::unix_now(), &header)?
            }
            CaptureTarget::File(path) => CaptureFile::open_named(path, &header)?,
        };
        let spool_dir = capture
            .path()
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .http1_only();
        if upstream_is_loopback(config.upstream.as_deref()) {
            // A local upstream is reached directly, whatever HTTP(S)_PROXY says.
            builder = builder.no_proxy();
        }
        let client = crate::provider::client_with_timeouts(builder)?;
        Ok(Proxy {
            listener,
            shared: Arc::new(Shared {
                upstream: config.upstream,
                client,
                capture,
                spool_dir,
                next: AtomicU64::new(0),
                websockets: AtomicU64::new(0),
                watch,
                capture_work: Arc::new(tokio::sync::Semaphore::new(CAPTURE_WORKERS)),
                limits: config.limits,
                stopping: tokio_util::sync::CancellationToken::new(),
                in_flight: limits::InFlightCount::default(),
                pressure: tokio::sync::watch::Sender::new(0),
            }),
        })
    }

    /// The address it listens on (the port the system chose for `:0`).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    pub fn capture_path(&self) -> &Path {
        self.shared.capture.path()
    }

    /// Serves until `shutdown` resolves, then ends the exchanges in flight (each written
    /// to the capture, marked as cut by the stop) and waits up to `STOP_GRACE` for their
    /// lines. At most `ConnectionLimits::max_connections` client connections are served at
    /// once: a connection accepted at the cap (the only one held without a place) makes
    /// the idle ones close and waits for a place. It is accepted first so that the idle
    /// ones close only for a connection that is really there; closing them when the cap
    /// was merely reached closed a connection accepted a moment before, whose request had
    /// not arrived yet.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ProxyError> {
        let mut shutdown = std::pin::pin!(shutdown);
        let places = Arc::new(tokio::sync::Semaphore::new(
            self.shared.limits.max_connections.max(1),
        ));
        let served = loop {
            let (stream, _) = tokio::select! {
                _ = &mut shutdown => break Ok(()),
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => a,
                    // Out of descriptors and the like: wait a little rather than spin.
                    Err(e) if is_transient(&e) => {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                    Err(e) => break Err(ProxyError::Accept(e)),
                },
            };
            let place = match Arc::clone(&places).try_acquire_owned() {
                Ok(place) => place,
                Err(_) => {
                    self.shared.pressure.send_modify(|g| *g = g.wrapping_add(1));
                    tokio::select! {
                        _ = &mut shutdown => break Ok(()),
                        place = Arc::clone(&places).acquire_owned() => match place {
                            Ok(place) => place,
                            Err(_) => break Ok(()),
                        },
                    }
                }
            };
            let _ = stream.set_nodelay(true);
            let pressure = self.shared.pressure.subscribe();
            tokio::spawn(serve_connection(
                stream,
                Arc::clone(&self.shared),
                place,
                pressure,
            ));
        };
        drop(self.listener);
        self.shared.stopping.cancel();
        if !self.shared.in_flight.drained(STOP_GRACE).await {
            tracing::warn!(
                "{} exchanges were still in flight after {} s: not written",
                self.shared.in_flight.now(),
                STOP_GRACE.as_secs()
            );
        }
        served
    }
}

/// One client connection, under the head deadline (also its idle deadline), closed when
/// idle once the connection cap is reached or the proxy stops.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    shared: Arc<Shared>,
    place: tokio::sync::OwnedSemaphorePermit,
    mut pressure: tokio::sync::watch::Receiver<u64>,
) {
    // Shared with an upgraded connection (a WebSocket), which keeps its place until it closes.
    let place = Arc::new(place);
    let service = {
        let shared = Arc::clone(&shared);
        service_fn(move |req| serve(req, Arc::clone(&shared), Arc::clone(&place)))
    };
    let connection = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(shared.limits.header_deadline)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut connection = std::pin::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => ended,
        Ok(()) = pressure.changed() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
        _ = shared.stopping.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = ended {
        tracing::debug!("connection ended: {e}");
    }
}

/// One request: the Responses WebSocket's upgrade (which keeps the connection's `place`
/// until it closes), or an HTTP exchange.
async fn serve(
    req: hyper::Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
    place: Arc<tokio::sync::OwnedSemaphorePermit>,
) -> Result<hyper::Response<body::ChannelBody>, std::convert::Infallible> {
    if websocket::wanted(&req) {
        return Ok(websocket::handle(req, shared, place).await);
    }
    exchange::handle(req, shared).await
}

fn is_transient(e: &std::io::Error) -> bool {
    !matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::PermissionDenied
    )
}

fn upstream_is_loopback(upstream: Option<&str>) -> bool {
    let Some(url) = upstream.and_then(|u| reqwest::Url::parse(u).ok()) else {
        return false;
    };
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An upstream URL as it may be shown and recorded: without its query and fragment (a query
/// may carry a key) and without a `user:password@` before its host.
pub fn public_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Now as ISO 8601 UTC with milliseconds.
pub(crate) fn now_iso_ms() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = crate::util::iso_utc(now.as_secs());
    let base = secs.strip_suffix('Z').unwrap_or(&secs);
    format!("{base}.{:03}Z", now.subsec_millis())
}

/// One readable line for an exchange (`ctxlab proxy --watch`), sanitized: paths, models
/// and errors come from outside.
pub fn watch_line(w: &WatchedExchange) -> String {
    let e = &w.exchange;
    let r = &e.response;
    let mut line = format!(
        "#{} {} {} -> {}",
        e.n,
        e.method,
        e.path,
        r.status
            .map_or("no response".to_string(), |s| s.to_string())
    );
    if let Some(m) = &r.model {
        line.push_str(&format!(" {m}"));
    }
    if w.messages > 0 {
        line.push_str(&format!(
            " · {}",
            crate::util::plural(w.messages, "message")
        ));
    }
    line.push_str(&format!(" · {} bytes in", e.request.bytes));
    if let Some(u) = &r.usage {
        line.push_str(&format!(
            " · {} in / {} out tokens",
            u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens,
            u.output_tokens
        ));
    }
    if let Some(s) = &r.stop_reason {
        line.push_str(&format!(" · {s}"));
    }
    if let Some(t) = e.timing.first_byte_ms {
        line.push_str(&format!(" · first byte {t:.0} ms"));
    }
    if let Some(t) = e.timing.last_byte_ms {
        line.push_str(&format!(" · last {t:.0} ms"));
    }
    if let Some(err) = &r.error {
        line.push_str(&format!(" · error: {err}"));
    }
    if let Some(f) = &e.failure {
        line.push_str(&format!(" · {f}"));
    }
    crate::sanitize::sanitize_line(&line).into_owned()
}

#[cfg(test)]
mod fuzz_tests;

#[cfg(test)]
mod tests {
    use super::public_url;

    #[test]
    fn an_upstream_is_recorded_without_its_query_or_credentials() {
        assert_eq!(
            public_url("https://user:s3cret@example.test:8443/v1?key=abc#x"),
            "https://example.test:8443/v1"
        );
        assert_eq!(public_url("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
        assert_eq!(public_url("http://h/p@q"), "http://h/p@q");
    }
}
