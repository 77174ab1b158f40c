//! One exchange encoded as one capture line: the request body spliced in as the client's
//! own bytes (never parsed into a tree: the memory of a parsed body is many times its
//! size), and the line held under `MAX_CAPTURE_LINE_BYTES`, far below the readers' line
//! cap, so every line the proxy writes can be read back (docs/capture.md). What does not
//! fit is left out with a note, never cut mid-value.

use crate::session::capture::Exchange;

use super::ProxyError;

/// Most bytes of one capture line: half the readers' line cap (`session::open::
/// MAX_LINE_BYTES`). A body (at most 32 MiB) and an answer (text and arguments capped by
/// the assembler) fit with room; past this the body, then the answer, is left out.
pub const MAX_CAPTURE_LINE_BYTES: usize = 128 << 20;

/// The line (ending in a newline) for `exchange`, whose `request.body` is None, with
/// `body` (checked JSON on one line, `body::read_json`) as its request body.
pub fn encode(exchange: &mut Exchange, body: Option<&[u8]>) -> Result<Vec<u8>, ProxyError> {
    encode_within(exchange, body, MAX_CAPTURE_LINE_BYTES)
}

pub(crate) fn encode_within(
    exchange: &mut Exchange,
    body: Option<&[u8]>,
    max: usize,
) -> Result<Vec<u8>, ProxyError> {
    if let Some(raw) = body {
        if let Some(line) = with_body(exchange, raw)?
            && line.len() <= max
        {
            return Ok(line);
        }
        exchange.request.body_omitted = Some(format!(
            "{} bytes: with it the capture line would pass its cap of {max} bytes (its \
             sha256 is kept)",
            raw.len()
        ));
    }
    let line = plain(exchange)?;
    if line.len() <= max {
        return Ok(line);
    }
    // Only an answer of pathological text gets here (the assembler caps it; escaping can
    // make it up to six times longer on the line).
    let r = &mut exchange.response;
    r.not_assembled = Some(format!(
        "the assembled answer ({} bytes of text, {} tool calls) would pass the capture \
         line's cap of {max} bytes: left out",
        r.text.len(),
        r.tool_calls.len()
    ));
    r.text.clear();
    r.tool_calls.clear();
    r.error = r.error.take().map(|e| e.chars().take(2_000).collect());
    plain(exchange)
}

fn plain(exchange: &Exchange) -> Result<Vec<u8>, ProxyError> {
    let line = crate::session::capture::CaptureLine::Exchange(Box::new(exchange.clone()));
    let mut bytes = serde_json::to_vec(&line).map_err(ProxyError::Encode)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The line with the body spliced in where serde puts `request.body`: a random
/// placeholder in `body_omitted` (the field that follows it) is replaced by
/// `"body":<raw>`. None when the placeholder is not found exactly once (it cannot be:
/// nothing from outside can know it), so a doubt never splices.
fn with_body(exchange: &mut Exchange, raw: &[u8]) -> Result<Option<Vec<u8>>, ProxyError> {
    let placeholder = format!(
        "ctxlab-body-{:016x}{:016x}",
        fastrand::u64(..),
        fastrand::u64(..)
    );
    let kept = exchange.request.body_omitted.replace(placeholder.clone());
    let encoded = plain(exchange);
    exchange.request.body_omitted = kept;
    let encoded = encoded?;
    let needle = format!("\"body_omitted\":\"{placeholder}\"");
    let mut found = find_all(&encoded, needle.as_bytes());
    let (Some(at), None) = (found.next(), found.next()) else {
        return Ok(None);
    };
    let mut line = Vec::new();
    if line
        .try_reserve_exact(encoded.len() - needle.len() + raw.len() + 7)
        .is_err()
    {
        return Ok(None);
    }
    line.extend_from_slice(&encoded[..at]);
    line.extend_from_slice(b"\"body\":");
    line.extend_from_slice(raw);
    line.extend_from_slice(&encoded[at + needle.len()..]);
    Ok(Some(line))
}

/// Where `needle` starts in `hay`, each time.
fn find_all<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let first = needle.first().copied();
    hay.iter()
        .enumerate()
        .filter(move |(_, b)| Some(**b) == first)
        .map(|(i, _)| i)
        .filter(move |&i| hay[i..].starts_with(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::capture::{
        ApiKind, CaptureLine, CapturedRequest, CapturedResponse, Timing,
    };

    fn exchange() -> Exchange {
        Exchange {
            n: 3,
            started: "2026-12-01T00:00:00.000Z".to_string(),
            method: "POST".to_string(),
            path: "/v1/messages".to_string(),
            api: ApiKind::AnthropicMessages,
            upstream: "http://127.0.0.1:1".to_string(),
            request: CapturedRequest {
                headers: vec![],
                bytes: 10,
                sha256: "ab".to_string(),
                body: None,
                body_omitted: None,
                websocket: None,
            },
            response: CapturedResponse {
                status: Some(200),
                text: "body_omitted".to_string(),
                ..CapturedResponse::default()
            },
            timing: Timing::default(),
            failure: None,
        }
    }

    fn read_back(line: &[u8]) -> Exchange {
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        match serde_json::from_slice::<CaptureLine>(line).unwrap() {
            CaptureLine::Exchange(e) => *e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_body_is_spliced_in_as_the_client_sent_it() {
        let raw =
            br#"{"model":"m",  "messages":[{"role":"user","content":"a\nb \u00e9"}],"x":1.50} "#;
        let mut e = exchange();
        let line = encode(&mut e, Some(raw)).unwrap();
        let back = read_back(&line);
        let want: serde_json::Value = serde_json::from_slice(raw).unwrap();
        assert_eq!(back.request.body, Some(want));
        assert_eq!(back.request.body_omitted, None);
        // Everything else is what serde writes for the exchange.
        let mut expected = e.clone();
        expected.request.body = back.request.body.clone();
        assert_eq!(back, expected);
        let text = String::from_utf8(line).unwrap();
        assert!(
            text.contains(r#""x":1.50"#),
            "the bytes are the client's: {text}"
        );
    }

    #[test]
    fn a_line_over_the_cap_leaves_the_body_then_the_answer_out() {
        let raw = format!("[\"{}\"]", "x".repeat(5_000));
        let mut e = exchange();
        let line = encode_within(&mut e, Some(raw.as_bytes()), 4_000).unwrap();
        assert!(line.len() <= 4_000);
        let back = read_back(&line);
        assert_eq!(back.request.body, None);
        assert!(
            back.request
                .body_omitted
                .as_deref()
                .unwrap()
                .contains("cap of 4000 bytes")
        );
        let mut e = exchange();
        e.response.text = "\u{1}".repeat(2_000);
        let line = encode_within(&mut e, None, 4_000).unwrap();
        assert!(line.len() <= 4_000, "{}", line.len());
        let back = read_back(&line);
        assert!(back.response.text.is_empty());
        assert!(back.response.not_assembled.unwrap().contains("left out"));
    }
}
