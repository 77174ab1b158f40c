//! One exchange: the request forwarded as it streams in, the response streamed back chunk by
//! chunk as the upstream sends it, and, when it ends, the capture line. The client's bytes
//! and the upstream's are passed on untouched; the assembler and the spool read copies.
//! A client that goes away ends the task that reads the upstream, which drops the upstream
//! response and so closes its connection: the upstream request is cancelled.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use hyper::body::Incoming;
use hyper::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};

use crate::session::capture::{ApiKind, CapturedRequest, CapturedResponse, Exchange, Timing};

use super::Shared;
use super::assemble::Assembler;
use super::body::{BodyRead, ChannelBody, SpooledBody, spool_request};
use super::route::{end_to_end, recorded, target_url, upstream_root};

/// Most bytes of a request body written into a capture line (as JSON); a larger body is
/// forwarded whole and recorded by its length and digest.
pub const MAX_CAPTURED_BODY_BYTES: u64 = 32 << 20;
/// Chunks that may wait between the upstream reader and hyper's writer.
const RESPONSE_DEPTH: usize = 4;

/// What the capture line needs from the request side.
struct Started {
    n: u64,
    started: String,
    method: String,
    path: String,
    api: ApiKind,
    upstream: String,
    headers: Vec<crate::session::capture::RecordedHeader>,
}

/// Handles one request.
pub async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<ChannelBody>, std::convert::Infallible> {
    let arrived = Instant::now();
    let in_flight = shared.in_flight.enter();
    let deadline = tokio::time::Instant::now() + shared.limits.upstream_deadline;
    let (parts, body) = req.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/")
        .to_string();
    let api = ApiKind::of_path(parts.uri.path());
    let root = upstream_root(shared.upstream.as_deref(), parts.uri.path(), api);
    let url = target_url(&root, &path_and_query);
    let mut headers = end_to_end(&parts.headers);
    let started = Started {
        n: shared.next_number(),
        started: super::now_iso_ms(),
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        api,
        upstream: super::public_url(&root),
        headers: recorded(&headers),
    };
    // The one header changed on the way: the capture must be able to read the answer, and
    // a compressed one it cannot (docs/capture.md).
    headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    let (chunks, spool) = spool_request(body, shared.spool_dir.clone(), shared.limits);
    let stream =
        futures::stream::unfold(
            chunks,
            |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
        );
    let send = shared
        .client
        .request(parts.method, &url)
        .headers(headers)
        .body(reqwest::Body::wrap_stream(stream))
        .send();
    let sent = tokio::select! {
        sent = send => sent.map_err(|e| format!("the upstream cannot be reached: {}", describe(&e))),
        _ = shared.stopping.cancelled() => Err(STOPPED.to_string()),
        _ = tokio::time::sleep_until(deadline) => Err(past_deadline(&shared)),
    };
    let upstream = match sent {
        Ok(r) => r,
        Err(why) => {
            // A stopped proxy does not wait long for a body still arriving.
            let spooled = match tokio::time::timeout(SPOOL_WAIT_WHEN_CUT, spool).await {
                Ok(Ok(spooled)) => Some(spooled),
                _ => None,
            };
            finish(
                &shared,
                started,
                spooled,
                CapturedResponse::default(),
                Timing::default(),
                Some(why.clone()),
            )
            .await;
            drop(in_flight);
            let status = if why == STOPPED {
                StatusCode::SERVICE_UNAVAILABLE
            } else if why.starts_with("the exchange passed") {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            };
            return Ok(proxy_error(api, status, &why));
        }
    };
    let headers_ms = ms_since(arrived);
    let status = upstream.status();
    let header_of = |name| {
        upstream
            .headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let assembler = Assembler::new(
        api,
        status.as_u16(),
        header_of(CONTENT_TYPE).as_deref(),
        header_of(CONTENT_ENCODING).as_deref(),
    );
    let back_headers = end_to_end(upstream.headers());
    let recorded_back = recorded(&back_headers);
    let (tx, body) = ChannelBody::channel(RESPONSE_DEPTH);
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = back_headers;
    tokio::spawn(async move {
        let mut assembler = assembler;
        let mut timing = Timing {
            headers_ms: Some(headers_ms),
            ..Timing::default()
        };
        let mut failure = None;
        let mut stream = upstream.bytes_stream();
        loop {
            let next = tokio::select! {
                biased;
                _ = tx.closed() => {
                    // After the final event the client has its whole answer: not a cancel.
                    if !assembler.complete() {
                        failure = Some(CLIENT_LEFT.to_string());
                    }
                    break;
                }
                _ = shared.stopping.cancelled() => {
                    failure = Some(cut_off(&tx, STOPPED.to_string()));
                    break;
                }
                _ = tokio::time::sleep_until(deadline) => {
                    failure = Some(cut_off(&tx, past_deadline(&shared)));
                    break;
                }
                next = stream.next() => next,
            };
            match next {
                None => break,
                Some(Ok(chunk)) => {
                    let at = ms_since(arrived);
                    timing.first_byte_ms.get_or_insert(at);
                    timing.last_byte_ms = Some(at);
                    // Passed on first, read after: the assembler is never in the chunk's way
                    // (a clone of `Bytes` shares the buffer).
                    let copy = chunk.clone();
                    let had_all = assembler.complete();
                    // A client that stops reading holds this send: the stop and the
                    // deadline still end the exchange.
                    let sent = tokio::select! {
                        sent = tx.send(Ok(chunk)) => sent.map_err(|_| CLIENT_LEFT.to_string()),
                        _ = shared.stopping.cancelled() => Err(STOPPED.to_string()),
                        _ = tokio::time::sleep_until(deadline) => Err(past_deadline(&shared)),
                    };
                    assembler.feed(&copy);
                    if let Err(why) = sent {
                        // After the final event the client has its whole answer: not a cancel.
                        if why == CLIENT_LEFT {
                            if !had_all {
                                failure = Some(why);
                            }
                        } else {
                            failure = Some(cut_off(&tx, why));
                        }
                        break;
                    }
                }
                Some(Err(e)) => {
                    let why = format!("the upstream's body broke off: {}", describe(&e));
                    let _ = tx
                        .send(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            why.clone(),
                        )))
                        .await;
                    failure = Some(why);
                    break;
                }
            }
        }
        // Dropping the stream closes the upstream connection if the body was not read to
        // its end: that is the cancel.
        drop(stream);
        drop(tx);
        let mut answer = assembler.finish();
        answer.headers = recorded_back;
        let spooled = if failure.is_some() {
            match tokio::time::timeout(SPOOL_WAIT_WHEN_CUT, spool).await {
                Ok(Ok(spooled)) => Some(spooled),
                _ => None,
            }
        } else {
            spool.await.ok()
        };
        finish(&shared, started, spooled, answer, timing, failure).await;
        drop(in_flight);
    });
    Ok(response)
}

/// The failure of an exchange the proxy's stop cut (Ctrl-C while it streamed).
pub(super) const STOPPED: &str = "incomplete: the proxy was stopped before the exchange ended";
pub(super) const CLIENT_LEFT: &str = "the client went away: the upstream request was cancelled";
/// How long a cut exchange waits for the rest of its request body before it is written
/// without it (the body has normally ended long before the answer does).
const SPOOL_WAIT_WHEN_CUT: std::time::Duration = std::time::Duration::from_secs(2);

pub(super) fn past_deadline(shared: &Shared) -> String {
    format!(
        "the exchange passed the proxy's deadline of {} s upstream (--upstream-deadline): cut off",
        shared.limits.upstream_deadline.as_secs()
    )
}

/// Ends the client's answer with an error (so a cut answer never looks complete to it)
/// and gives back `why`.
fn cut_off(tx: &tokio::sync::mpsc::Sender<super::body::Chunk>, why: String) -> String {
    let error = std::io::Error::new(std::io::ErrorKind::TimedOut, why.clone());
    if let Err(tokio::sync::mpsc::error::TrySendError::Full(error)) = tx.try_send(Err(error)) {
        // Behind chunks the client has not read yet: queued after them, for a while.
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(SPOOL_WAIT_WHEN_CUT, tx.send(error)).await;
        });
    }
    why
}

/// Writes the capture line (off the runtime's threads: it may be megabytes) and tells the
/// watcher. At most `CAPTURE_WORKERS` lines are built at once: each holds its body and
/// its line in memory, so many large exchanges ending together wait their turn.
async fn finish(
    shared: &Arc<Shared>,
    started: Started,
    spooled: Option<SpooledBody>,
    response: CapturedResponse,
    timing: Timing,
    failure: Option<String>,
) {
    let shared = Arc::clone(shared);
    let Ok(_permit) = Arc::clone(&shared.capture_work).acquire_owned().await else {
        return;
    };
    let _ = tokio::task::spawn_blocking(move || {
        let mut failure = failure;
        let mut raw = None;
        let request = match spooled {
            Some(mut body) => {
                if failure.is_none() {
                    failure = body.broken.clone();
                }
                let omitted = match body.read_json(MAX_CAPTURED_BODY_BYTES) {
                    BodyRead::Json(bytes) => {
                        raw = Some(bytes);
                        None
                    }
                    BodyRead::Omitted(why) => Some(why),
                };
                CapturedRequest {
                    headers: started.headers,
                    bytes: body.bytes,
                    sha256: body.sha256,
                    body: None,
                    body_omitted: omitted,
                    websocket: None,
                }
            }
            None => CapturedRequest {
                headers: started.headers,
                bytes: 0,
                sha256: String::new(),
                body: None,
                body_omitted: Some("the request body was lost".to_string()),
                websocket: None,
            },
        };
        let exchange = Exchange {
            n: started.n,
            started: started.started,
            method: started.method,
            path: started.path,
            api: started.api,
            upstream: started.upstream,
            request,
            response,
            timing,
            failure,
        };
        shared.record(exchange, raw);
    })
    .await;
}

/// The proxy's own error answer, in the shape of the API the client speaks, so its SDK
/// shows the message.
fn proxy_error(api: ApiKind, status: StatusCode, message: &str) -> Response<ChannelBody> {
    let message = format!("ctxlab proxy: {message}");
    let body = match api {
        ApiKind::OpenaiChat | ApiKind::OpenaiResponses => serde_json::json!({
            "error": {"message": message, "type": "proxy_error"}
        }),
        _ => serde_json::json!({
            "type": "error",
            "error": {"type": "api_error", "message": message}
        }),
    };
    let mut response = Response::new(ChannelBody::full(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A reqwest error's causes, without the URL (a query may carry a key).
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// Milliseconds since `t`, to the microsecond.
fn ms_since(t: Instant) -> f64 {
    (t.elapsed().as_micros() as f64) / 1000.0
}
