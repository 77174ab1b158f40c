//! Where a request goes and which of its headers go with it: the default upstream by path
//! (Anthropic's API for `/v1/messages*`, OpenAI's for `/v1/chat/completions` and
//! `/v1/responses`, ChatGPT's backend for `/backend-api/...`, where Codex signed in with
//! ChatGPT sends its requests) or the one `--upstream` names, and the header filter both
//! ways (hop-by-hop headers stay on their own connection). Pure functions, no I/O.

use hyper::header::{HeaderMap, HeaderName};

use crate::session::capture::{ApiKind, RecordedHeader, header_value_kept};

pub const ANTHROPIC_UPSTREAM: &str = "https://api.anthropic.com";
pub const OPENAI_UPSTREAM: &str = "https://api.openai.com";
/// Codex signed in with ChatGPT talks to `https://chatgpt.com/backend-api/codex/...`
/// (`/responses`, its WebSocket, `/responses/compact`, `/models`): pointed at the proxy with
/// `openai_base_url = "http://127.0.0.1:PORT/backend-api/codex"`, those paths go here.
pub const CHATGPT_UPSTREAM: &str = "https://chatgpt.com";
/// The path prefix of ChatGPT's backend.
const CHATGPT_PREFIX: &str = "/backend-api/";

/// The upstream root for a request path: the one given, else the API's own (ChatGPT's
/// backend for its paths).
pub fn upstream_root(given: Option<&str>, path: &str, api: ApiKind) -> String {
    match given {
        Some(url) => url.trim().trim_end_matches('/').to_string(),
        None if path.starts_with(CHATGPT_PREFIX) => CHATGPT_UPSTREAM.to_string(),
        None => match api {
            ApiKind::OpenaiChat | ApiKind::OpenaiResponses => OPENAI_UPSTREAM.to_string(),
            // Anthropic is the default for anything else: Claude Code also asks other
            // paths of its base URL (e.g. `/api/...` event logging is sent elsewhere).
            _ => ANTHROPIC_UPSTREAM.to_string(),
        },
    }
}

/// The URL to forward to: the root's path, then the request's path, then the root's query
/// and the request's (in that order, joined by `&`). A root written with `/v1` (as OpenAI's
/// SDKs write base URLs) does not double it; a root with a query (`/gw?api-version=...`, as
/// Azure-style gateways take) keeps the query after the whole path, never inside it. A
/// fragment in the root is dropped: it is never sent.
pub fn target_url(root: &str, path_and_query: &str) -> String {
    let root = root.split('#').next().unwrap_or(root);
    let (root_path, root_query) = match root.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (root, None),
    };
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path_and_query, None),
    };
    let root_path = root_path.trim_end_matches('/');
    let root_path = if path.starts_with("/v1/") || path == "/v1" {
        root_path.strip_suffix("/v1").unwrap_or(root_path)
    } else {
        root_path
    };
    let queries: Vec<&str> = [root_query, query]
        .into_iter()
        .flatten()
        .filter(|q| !q.is_empty())
        .collect();
    if queries.is_empty() {
        format!("{root_path}{path}")
    } else {
        format!("{root_path}{path}?{}", queries.join("&"))
    }
}

/// Headers that belong to one connection (RFC 9110 section 7.6.1), never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    // The client's `Expect: 100-continue` is answered by this server when the body is read;
    // the upstream gets the body without waiting for a `100` of its own.
    "expect",
];

/// Whether a header goes on to the other side: not hop-by-hop, not named by `Connection`,
/// and not `Host` (the client sets the upstream's own).
fn forwarded(name: &HeaderName, connection_named: &[String]) -> bool {
    let n = name.as_str();
    !HOP_BY_HOP.contains(&n) && n != "host" && !connection_named.iter().any(|c| c == n)
}

/// The names a `Connection` header lists (they are hop-by-hop too).
fn connection_named(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The end-to-end headers of `headers`, in order, values untouched.
pub fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named = connection_named(headers);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if forwarded(name, &named) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// What a capture keeps of some headers: every name, and the values `header_value_kept`
/// allows.
pub fn recorded(headers: &HeaderMap) -> Vec<RecordedHeader> {
    headers
        .iter()
        .map(|(name, value)| RecordedHeader {
            name: name.as_str().to_string(),
            value: header_value_kept(name.as_str())
                .then(|| value.to_str().ok().map(str::to_string))
                .flatten(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn default_upstream_by_path_and_no_doubled_v1() {
        assert_eq!(
            upstream_root(
                None,
                "/v1/messages/count_tokens",
                ApiKind::AnthropicCountTokens
            ),
            ANTHROPIC_UPSTREAM
        );
        assert_eq!(
            upstream_root(None, "/v1/responses", ApiKind::OpenaiResponses),
            OPENAI_UPSTREAM
        );
        assert_eq!(
            upstream_root(
                Some("http://127.0.0.1:9/v1/"),
                "/v1/chat/completions",
                ApiKind::OpenaiChat
            ),
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(
            target_url("http://h:1/v1", "/v1/responses?x=1"),
            "http://h:1/v1/responses?x=1"
        );
        assert_eq!(
            target_url("http://h:1/gw", "/v1/messages"),
            "http://h:1/gw/v1/messages"
        );
    }

    #[test]
    fn chatgpt_backend_paths_go_to_chatgpt() {
        // Issue 35, item 2: Codex signed in with ChatGPT sends its requests (and its
        // WebSocket) under /backend-api/codex/; they went to api.openai.com.
        for path in [
            "/backend-api/codex/responses",
            "/backend-api/codex/responses/compact",
            "/backend-api/codex/models",
        ] {
            let api = ApiKind::of_path(path);
            let root = upstream_root(None, path, api);
            assert_eq!(root, CHATGPT_UPSTREAM, "{path}");
            assert_eq!(
                target_url(&root, path),
                format!("https://chatgpt.com{path}")
            );
        }
        assert_eq!(
            ApiKind::of_path("/backend-api/codex/responses"),
            ApiKind::OpenaiResponses
        );
        // --upstream still takes everything.
        assert_eq!(
            upstream_root(
                Some("http://127.0.0.1:9"),
                "/backend-api/codex/responses",
                ApiKind::OpenaiResponses
            ),
            "http://127.0.0.1:9"
        );
    }

    #[test]
    fn an_upstream_query_goes_after_the_whole_path() {
        // Issue 39, item 6: the query was kept inside the path
        // (`/gw?api-version=2024-10-21/v1/messages`).
        let root = upstream_root(
            Some("https://gw.test/gw?api-version=2024-10-21"),
            "/v1/messages",
            ApiKind::AnthropicMessages,
        );
        assert_eq!(
            target_url(&root, "/v1/messages"),
            "https://gw.test/gw/v1/messages?api-version=2024-10-21"
        );
        assert_eq!(
            target_url(&root, "/v1/messages?beta=true"),
            "https://gw.test/gw/v1/messages?api-version=2024-10-21&beta=true"
        );
        assert_eq!(
            target_url("http://h:1/v1/?k=v#frag", "/v1/responses"),
            "http://h:1/v1/responses?k=v"
        );
        assert_eq!(target_url("http://h:1/gw?", "/v1/x?"), "http://h:1/gw/v1/x");
    }

    #[test]
    fn hop_by_hop_and_connection_named_headers_stay() {
        let mut h = HeaderMap::new();
        h.insert("connection", HeaderValue::from_static("keep-alive, x-hop"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        h.insert("host", HeaderValue::from_static("127.0.0.1:1"));
        h.insert("x-api-key", HeaderValue::from_static("sk-secret"));
        h.insert("retry-after", HeaderValue::from_static("3"));
        let out = end_to_end(&h);
        let names: Vec<&str> = out.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, vec!["x-api-key", "retry-after"]);
        let rec = recorded(&out);
        assert_eq!(rec[0].value, None);
        assert_eq!(rec[1].value.as_deref(), Some("3"));
    }
}
