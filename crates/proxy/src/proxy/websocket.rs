//! The Responses WebSocket transport (Codex's default for its built-in OpenAI provider):
//! `GET /v1/responses` with `Upgrade: websocket`. The upstream's handshake is made first
//! (a refusal, such as a 401 or a 404, goes back to the client as it came, so the client can
//! fall back to HTTP); then the client gets its `101`, and every message is relayed both
//! ways as it arrives, unchanged (text, binary, ping, pong, close). Each `response.create`
//! and the events that answer it are one exchange of the capture, written when its final
//! event passes (docs/capture.md, "WebSocket"). The relay never waits for the capture: the
//! assembler and the chain read the messages after they are passed on.

use std::sync::Arc;
use std::time::Instant;

use futures::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::{
    CloseFrame, Role, WebSocketConfig, frame::coding::CloseCode,
};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::session::capture::{
    ApiKind, CapturedRequest, CapturedResponse, Exchange, RecordedHeader, Timing, WebsocketMessage,
};

use super::Shared;
use super::assemble::Assembler;
use super::body::ChannelBody;
use super::exchange::{CLIENT_LEFT, MAX_CAPTURED_BODY_BYTES, STOPPED};
use super::route::{end_to_end, recorded, target_url, upstream_root};
use super::ws_chain::{Chain, as_request};

/// Most bytes of one message either way (tungstenite's own default): a message is whole in
/// memory while it passes, so this is the relay's memory bound per connection and side.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// How long a connection with no request open may stay without a message either way.
const IDLE: std::time::Duration = std::time::Duration::from_secs(600);
/// How long a close waits for the other side's close.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a request asks for the Responses WebSocket: a GET of a Responses path with
/// `Upgrade: websocket`. Only that path is upgraded; any other upgrade is refused as before.
pub fn wanted(req: &Request<Incoming>) -> bool {
    req.method() == hyper::Method::GET
        && ApiKind::of_path(req.uri().path()) == ApiKind::OpenaiResponses
        && req
            .headers()
            .get_all(hyper::header::UPGRADE)
            .iter()
            .any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.eq_ignore_ascii_case("websocket"))
            })
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

/// Handles an upgrade request `wanted` accepted; `place` (the connection's place under the
/// connection cap) is held until the WebSocket closes.
pub async fn handle(
    mut req: Request<Incoming>,
    shared: Arc<Shared>,
    place: Arc<tokio::sync::OwnedSemaphorePermit>,
) -> Response<ChannelBody> {
    let connection = shared.next_websocket();
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let root = upstream_root(
        shared.upstream.as_deref(),
        req.uri().path(),
        ApiKind::OpenaiResponses,
    );
    let url = ws_url(&target_url(&root, &path_and_query));
    let forwarded = end_to_end(req.headers());
    let base = Base {
        path: req.uri().path().to_string(),
        upstream: super::public_url(&root),
        headers: recorded(&forwarded),
        connection,
    };
    let Some(key) = req
        .headers()
        .get("sec-websocket-key")
        .map(|k| k.as_bytes().to_vec())
    else {
        return plain(
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade without its key",
        );
    };
    let upgrade = hyper::upgrade::on(&mut req);
    let upstream = match upstream_request(&url, &forwarded) {
        Ok(r) => {
            let connect =
                tokio_tungstenite::connect_async_tls_with_config(r, Some(config()), true, None);
            match tokio::time::timeout(shared.limits.header_deadline, connect).await {
                Ok(Ok(done)) => Ok(done),
                Ok(Err(WsError::Http(refusal))) => {
                    return refused(&shared, base, *refusal);
                }
                Ok(Err(e)) => Err(Handshake::Unreachable(e)),
                Err(_) => Err(Handshake::TimedOut {
                    secs: shared.limits.header_deadline.as_secs(),
                }),
            }
        }
        Err(e) => Err(e),
    };
    let (upstream, answer) = match upstream {
        Ok(done) => done,
        Err(why) => {
            let why = why.to_string();
            let mut e = base.exchange(&shared, 0);
            e.failure = Some(why.clone());
            shared.record(e, None);
            return plain(StatusCode::BAD_GATEWAY, &why);
        }
    };
    let mut response = Response::new(ChannelBody::full(Vec::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    for (name, value) in end_to_end(answer.headers()) {
        if let Some(name) = name
            && !name.as_str().starts_with("sec-websocket-")
            && name != hyper::header::CONTENT_LENGTH
        {
            headers.append(name, value);
        }
    }
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key);
    headers.insert(
        hyper::header::UPGRADE,
        HeaderValue::from_static("websocket"),
    );
    headers.insert(
        hyper::header::CONNECTION,
        HeaderValue::from_static("Upgrade"),
    );
    if let Ok(v) = HeaderValue::from_str(&accept) {
        headers.insert("sec-websocket-accept", v);
    }
    if let Some(p) = answer.headers().get("sec-websocket-protocol") {
        headers.insert("sec-websocket-protocol", p.clone());
    }
    let answer_headers = recorded(&end_to_end(answer.headers()));
    tokio::spawn(async move {
        let _place = place;
        match upgrade.await {
            Ok(upgraded) => {
                let client = WebSocketStream::from_raw_socket(
                    TokioIo::new(upgraded),
                    Role::Server,
                    Some(config()),
                )
                .await;
                let relay = Relay {
                    shared,
                    base,
                    answer_headers,
                    chain: Chain::default(),
                    open: None,
                    messages: 0,
                };
                relay.run(client, upstream).await;
            }
            Err(e) => tracing::debug!("the client's upgrade failed: {e}"),
        }
    });
    response
}

/// `http(s)://` as `ws(s)://`.
fn ws_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_string()
    }
}

/// Why the upstream's side of a WebSocket could not be opened: the client gets it as a
/// 502 and the capture records it as the exchange's failure.
#[derive(Debug, thiserror::Error)]
enum Handshake {
    #[error("the upstream URL cannot be a WebSocket: {0}")]
    NotAWebSocketUrl(#[source] WsError),
    #[error("the upstream cannot be reached: {0}")]
    Unreachable(#[source] WsError),
    #[error("the upstream's WebSocket handshake took over {secs} s")]
    TimedOut { secs: u64 },
}

/// The upstream's handshake request: tungstenite's (key, version, host) with the client's
/// end-to-end headers, less its own handshake headers.
fn upstream_request(
    url: &str,
    forwarded: &HeaderMap,
) -> Result<tokio_tungstenite::tungstenite::handshake::client::Request, Handshake> {
    let mut r = url
        .into_client_request()
        .map_err(Handshake::NotAWebSocketUrl)?;
    for (name, value) in forwarded {
        let n = name.as_str();
        // Extensions (permessage-deflate) are not offered: messages pass as they are.
        if n.starts_with("sec-websocket-") && n != "sec-websocket-protocol" {
            continue;
        }
        if let Ok(name) = HeaderName::from_bytes(n.as_bytes()) {
            r.headers_mut().append(name, value.clone());
        }
    }
    Ok(r)
}

fn plain(status: StatusCode, message: &str) -> Response<ChannelBody> {
    let body = serde_json::json!({
        "error": {"message": format!("ctxlab proxy: {message}"), "type": "proxy_error"}
    });
    let mut response = Response::new(ChannelBody::full(body.to_string()));
    *response.status_mut() = status;
    response
}

/// The upstream refused the upgrade: its answer goes to the client as it came, and is
/// recorded as a refused exchange.
fn refused(
    shared: &Shared,
    base: Base,
    refusal: hyper::Response<Option<Vec<u8>>>,
) -> Response<ChannelBody> {
    let (parts, body) = refusal.into_parts();
    let body = body.unwrap_or_default();
    let mut e = base.exchange(shared, 0);
    e.response.status = Some(parts.status.as_u16());
    e.response.headers = recorded(&end_to_end(&parts.headers));
    e.response.bytes = body.len() as u64;
    e.response.error = Some(String::from_utf8_lossy(&body).chars().take(2_000).collect());
    shared.record(e, None);
    let mut response = Response::new(ChannelBody::full(body));
    *response.status_mut() = parts.status;
    *response.headers_mut() = end_to_end(&parts.headers);
    response
}

/// What every exchange of one connection shares.
struct Base {
    path: String,
    upstream: String,
    headers: Vec<RecordedHeader>,
    connection: u64,
}

impl Base {
    fn exchange(&self, shared: &Shared, message: u64) -> Exchange {
        Exchange {
            n: shared.next_number(),
            started: super::now_iso_ms(),
            method: "GET".to_string(),
            path: self.path.clone(),
            api: ApiKind::OpenaiResponses,
            upstream: self.upstream.clone(),
            request: CapturedRequest {
                headers: self.headers.clone(),
                bytes: 0,
                sha256: String::new(),
                body: None,
                body_omitted: None,
                websocket: Some(WebsocketMessage {
                    connection: self.connection,
                    message,
                    previous_response_id: None,
                    items_carried: None,
                }),
            },
            response: CapturedResponse::default(),
            timing: Timing::default(),
            failure: None,
        }
    }
}

/// One request on the connection, from its `response.create` to its final event.
struct Open {
    exchange: Exchange,
    arrived: Instant,
    deadline: tokio::time::Instant,
    body: Option<Value>,
    assembler: Assembler,
    _in_flight: super::limits::InFlight,
}

struct Relay {
    shared: Arc<Shared>,
    base: Base,
    answer_headers: Vec<RecordedHeader>,
    chain: Chain,
    open: Option<Open>,
    messages: u64,
}

type ClientWs = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;
type UpstreamWs = WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Why the relay ended, when not by a close.
enum End {
    Closed,
    Failed(String),
}

impl Relay {
    async fn run(mut self, mut client: ClientWs, mut upstream: UpstreamWs) {
        let end = loop {
            let deadline = self
                .open
                .as_ref()
                .map_or_else(|| tokio::time::Instant::now() + IDLE, |o| o.deadline);
            tokio::select! {
                m = client.next() => match m {
                    Some(Ok(msg)) => {
                        let close = matches!(msg, Message::Close(_));
                        if let Message::Text(t) = &msg {
                            self.request(t.as_str());
                        }
                        if upstream.send(msg).await.is_err() {
                            break End::Failed("the upstream's WebSocket broke off".to_string());
                        }
                        if close {
                            self.drain(&mut upstream, &mut client).await;
                            break End::Closed;
                        }
                    }
                    _ => {
                        let _ = upstream.close(None).await;
                        break End::Failed(CLIENT_LEFT.to_string());
                    }
                },
                m = upstream.next() => match m {
                    Some(Ok(msg)) => {
                        let close = matches!(msg, Message::Close(_));
                        let copy = msg.clone();
                        let sent = client.send(msg).await;
                        self.answer(&copy);
                        if sent.is_err() {
                            let _ = upstream.close(None).await;
                            break End::Failed(CLIENT_LEFT.to_string());
                        }
                        if close {
                            self.drain(&mut client, &mut upstream).await;
                            break End::Closed;
                        }
                    }
                    Some(Err(e)) => {
                        let why = format!("the upstream's WebSocket broke off: {e}");
                        let _ = client.close(Some(close_frame(CloseCode::Error, "upstream broke off"))).await;
                        break End::Failed(why);
                    }
                    None => {
                        let _ = client.close(None).await;
                        break End::Failed("the upstream closed the connection".to_string());
                    }
                },
                _ = self.shared.stopping.cancelled() => {
                    let _ = client.close(Some(close_frame(CloseCode::Away, "the proxy stopped"))).await;
                    let _ = upstream.close(None).await;
                    break End::Failed(STOPPED.to_string());
                }
                _ = tokio::time::sleep_until(deadline) => {
                    let why = match &self.open {
                        Some(_) => super::exchange::past_deadline(&self.shared),
                        None => format!("the WebSocket was idle for {} s: closed", IDLE.as_secs()),
                    };
                    let _ = client.close(Some(close_frame(CloseCode::Away, "deadline"))).await;
                    let _ = upstream.close(None).await;
                    break End::Failed(why);
                }
            }
        };
        if let Some(open) = self.open.take() {
            let why = match end {
                End::Closed => "the WebSocket closed before the answer's final event".to_string(),
                End::Failed(why) => why,
            };
            self.finish(open, Some(why));
        }
    }

    /// After one side's close went to the other: the other side's last messages (its close
    /// answer) are passed back, for a short while.
    async fn drain<A, B>(&mut self, from: &mut A, to: &mut B)
    where
        A: futures::Stream<Item = Result<Message, WsError>> + Unpin,
        B: futures::Sink<Message> + Unpin,
    {
        let until = tokio::time::Instant::now() + CLOSE_GRACE;
        while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(until, from.next()).await {
            let close = matches!(msg, Message::Close(_));
            let copy = msg.clone();
            let _ = to.send(msg).await;
            self.answer(&copy);
            if close {
                break;
            }
        }
    }

    /// A client's text message: a `response.create` opens an exchange.
    fn request(&mut self, text: &str) {
        self.messages += 1;
        let Some(message) = as_request(text) else {
            return;
        };
        if let Some(open) = self.open.take() {
            self.finish(
                open,
                Some("a new request came on the WebSocket before this one's final event".into()),
            );
        }
        let expanded = self.chain.expand(message);
        let mut exchange = self.base.exchange(&self.shared, self.messages);
        exchange.request.bytes = text.len() as u64;
        exchange.request.sha256 = hex(&Sha256::digest(text.as_bytes()));
        if let Some(ws) = &mut exchange.request.websocket {
            ws.previous_response_id = expanded.previous_response_id;
            ws.items_carried = expanded.items_carried;
        }
        exchange.response.headers = self.answer_headers.clone();
        self.open = Some(Open {
            exchange,
            arrived: Instant::now(),
            deadline: tokio::time::Instant::now() + self.shared.limits.upstream_deadline,
            body: Some(expanded.body),
            assembler: Assembler::for_events(ApiKind::OpenaiResponses, 101),
            _in_flight: self.shared.in_flight.enter(),
        });
    }

    /// An upstream message, after it was passed on: folded into the open exchange, which is
    /// written when its final event (or an error event) has passed.
    fn answer(&mut self, msg: &Message) {
        let Some(open) = &mut self.open else {
            return;
        };
        let at = (open.arrived.elapsed().as_micros() as f64) / 1000.0;
        let t = &mut open.exchange.timing;
        t.headers_ms.get_or_insert(0.0);
        t.first_byte_ms.get_or_insert(at);
        t.last_byte_ms = Some(at);
        let Message::Text(text) = msg else {
            open.assembler.count_bytes(msg.len());
            return;
        };
        let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else {
            open.assembler.count_bytes(text.len());
            return;
        };
        open.assembler.event(text.len(), &v);
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if !(open.assembler.complete() || kind == "error") {
            return;
        }
        if let (Some(body), Some(response)) = (&open.body, v.get("response"))
            && kind == "response.completed"
        {
            self.chain.completed(body, response);
        }
        if let Some(open) = self.open.take() {
            self.finish(open, None);
        }
    }

    /// Writes the exchange (off the relay: the line may be megabytes).
    fn finish(&self, open: Open, failure: Option<String>) {
        let Open {
            mut exchange,
            body,
            assembler,
            _in_flight,
            ..
        } = open;
        let mut response = assembler.finish();
        response.headers = std::mem::take(&mut exchange.response.headers);
        exchange.response = response;
        exchange.failure = failure;
        let shared = Arc::clone(&self.shared);
        tokio::spawn(async move {
            let Ok(_permit) = Arc::clone(&shared.capture_work).acquire_owned().await else {
                return;
            };
            let _ = tokio::task::spawn_blocking(move || {
                let raw = body.and_then(|b| serde_json::to_vec(&b).ok());
                let raw = match raw {
                    Some(raw) if raw.len() as u64 > MAX_CAPTURED_BODY_BYTES => {
                        exchange.request.body_omitted = Some(format!(
                            "{} bytes with the carried context, over the capture's cap of \
                             {MAX_CAPTURED_BODY_BYTES} bytes on a body (the message's sha256 \
                             is kept)",
                            raw.len()
                        ));
                        None
                    }
                    raw => raw,
                };
                shared.record(exchange, raw);
                drop(_in_flight);
            })
            .await;
        });
    }
}

fn close_frame(code: CloseCode, reason: &'static str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
