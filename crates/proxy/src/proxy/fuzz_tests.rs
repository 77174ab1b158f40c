//! Random input for what the proxy reads from outside (issue 39, the fuzzing asked for, in
//! the normal test suite and bounded to seconds): an answer's bytes in random chunks for
//! every API, a request body checked and counted, an upstream URL and a request target
//! composed, and a capture line spliced and read back.

use proptest::prelude::*;

use super::assemble::{Assembler, MAX_ANSWER_TEXT_BYTES, MAX_CALL_ARGS_BYTES};
use super::body::{is_json_text, message_count};
use super::line::encode_within;
use super::route::target_url;
use crate::session::capture::{
    ApiKind, CaptureLine, CapturedRequest, CapturedResponse, Exchange, Timing,
};

const APIS: [ApiKind; 5] = [
    ApiKind::AnthropicMessages,
    ApiKind::AnthropicCountTokens,
    ApiKind::OpenaiChat,
    ApiKind::OpenaiResponses,
    ApiKind::Other,
];

/// Bytes shaped like the answers the assembler reads: SSE lines and JSON fragments of the
/// three APIs, mixed with noise.
fn answer_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"event: content_block_delta\n".to_vec()),
        Just(b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n".to_vec()),
        Just(b"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\n".to_vec()),
        Just(b"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n".to_vec()),
        Just(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\",\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n".to_vec()),
        Just(b"data: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"t\"}]}]}}\n\n".to_vec()),
        Just(b"data: [DONE]\n\n".to_vec()),
        Just(b"{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"usage\":{\"input_tokens\":1}}".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..40),
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

fn exchange(text: String) -> Exchange {
    Exchange {
        n: 1,
        started: "s".to_string(),
        method: "POST".to_string(),
        path: "/v1/messages".to_string(),
        api: ApiKind::AnthropicMessages,
        upstream: "u".to_string(),
        request: CapturedRequest {
            headers: vec![],
            bytes: 0,
            sha256: String::new(),
            body: None,
            body_omitted: None,
            websocket: None,
        },
        response: CapturedResponse {
            text,
            ..CapturedResponse::default()
        },
        timing: Timing::default(),
        failure: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_answer_in_any_chunks_assembles_within_the_caps(
        body in answer_bytes(),
        cuts in proptest::collection::vec(1usize..64, 1..8),
        api in 0usize..5,
        streamed in any::<bool>(),
        status in prop_oneof![Just(200u16), Just(400u16), Just(529u16)],
    ) {
        let ct = if streamed { "text/event-stream" } else { "application/json" };
        let mut a = Assembler::new(APIS[api], status, Some(ct), None);
        let mut rest = &body[..];
        let mut i = 0;
        while !rest.is_empty() {
            let n = cuts[i % cuts.len()].min(rest.len());
            a.feed(&rest[..n]);
            rest = &rest[n..];
            i += 1;
        }
        let r = a.finish();
        prop_assert_eq!(r.bytes, body.len() as u64);
        prop_assert!(r.text.len() <= MAX_ANSWER_TEXT_BYTES + 64);
        for call in &r.tool_calls {
            prop_assert!(call.input.to_string().len() <= 2 * MAX_CALL_ARGS_BYTES + 64);
        }
    }

    #[test]
    fn a_body_check_agrees_with_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let parsed = std::str::from_utf8(&bytes).is_ok()
            && serde_json::from_slice::<serde_json::Value>(&bytes).is_ok();
        prop_assert_eq!(is_json_text(&bytes), parsed);
        let _ = message_count(&bytes);
    }

    #[test]
    fn any_json_body_is_spliced_and_read_back_as_itself(
        value in proptest_json(),
        pretty in any::<bool>(),
        text in ".{0,40}",
    ) {
        let raw = if pretty {
            serde_json::to_vec_pretty(&value).unwrap()
        } else {
            serde_json::to_vec(&value).unwrap()
        };
        prop_assert!(is_json_text(&raw));
        let one_line: Vec<u8> = raw
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect();
        let mut e = exchange(text);
        let line = encode_within(&mut e, Some(&one_line), 1 << 20).unwrap();
        prop_assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let CaptureLine::Exchange(back) = serde_json::from_slice::<CaptureLine>(&line).unwrap()
        else {
            panic!("not an exchange");
        };
        // A body of `null` reads back as no body, as it always has (`Option<Value>`).
        let want = (!value.is_null()).then_some(&value);
        prop_assert_eq!(back.request.body.as_ref(), want);
        prop_assert_eq!(&back.response, &e.response);
        let messages = value.get("messages").and_then(|m| m.as_array()).map_or(0, Vec::len);
        if messages > 0 {
            prop_assert_eq!(message_count(&raw), messages);
        }
    }

    #[test]
    fn a_target_url_keeps_the_path_whole_and_every_query(
        root_path in "(/[a-z0-9]{1,4}){0,3}",
        root_query in proptest::option::of("[a-z]{1,3}=[a-z0-9]{0,3}"),
        path in "(/[a-z0-9]{1,4}){1,3}",
        query in proptest::option::of("[a-z]{1,3}=[a-z0-9]{0,3}"),
    ) {
        let root = match &root_query {
            Some(q) => format!("http://h:1{root_path}?{q}"),
            None => format!("http://h:1{root_path}"),
        };
        let target = match &query {
            Some(q) => format!("{path}?{q}"),
            None => path.clone(),
        };
        let url = target_url(&root, &target);
        let (before, after) = match url.split_once('?') {
            Some((b, a)) => (b.to_string(), Some(a.to_string())),
            None => (url.clone(), None),
        };
        prop_assert!(before.ends_with(&path), "{} {}", url, path);
        let queries: Vec<String> = [root_query, query].into_iter().flatten().collect();
        prop_assert_eq!(after, (!queries.is_empty()).then(|| queries.join("&")));
    }
}

/// JSON values a few levels deep, of every kind, strings with escapes and non-ASCII.
fn proptest_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        "[\\x00-\\x7f\u{e9}\u{1F600}\n\"\\\\]{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| { serde_json::Value::Object(kv.into_iter().collect()) }),
        ]
    })
}
