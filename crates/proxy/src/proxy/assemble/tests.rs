use super::*;
use serde_json::json;

fn run(api: ApiKind, status: u16, ct: &str, enc: Option<&str>, body: &[u8]) -> CapturedResponse {
    let mut a = Assembler::new(api, status, Some(ct), enc);
    // One byte at a time: no event may depend on where a chunk ends.
    for b in body.chunks(1) {
        a.feed(b);
    }
    a.finish()
}

#[test]
fn an_sse_error_event_is_the_answers_error() {
    let body = b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let r = run(
        ApiKind::AnthropicMessages,
        200,
        "text/event-stream",
        None,
        body,
    );
    assert_eq!(r.error.as_deref(), Some("Overloaded"));
    assert_eq!(r.events, 1);
    assert_eq!(r.bytes, body.len() as u64);
}

#[test]
fn an_error_status_with_a_non_json_body_keeps_its_text() {
    let r = run(
        ApiKind::OpenaiChat,
        502,
        "text/html",
        None,
        b"<h1>Bad gateway</h1>",
    );
    assert_eq!(r.status, Some(502));
    assert_eq!(r.error.as_deref(), Some("<h1>Bad gateway</h1>"));
    assert_eq!(r.not_assembled, None);
}

#[test]
fn a_compressed_body_is_counted_not_assembled() {
    let r = run(
        ApiKind::AnthropicMessages,
        200,
        "application/json",
        Some("gzip"),
        b"\x1f\x8b\x08",
    );
    assert_eq!(r.bytes, 3);
    assert_eq!(r.not_assembled.as_deref(), Some("the body is gzip-encoded"));
}

#[test]
fn an_incomplete_response_names_its_reason() {
    let body = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "cut"}]}]});
    let r = run(
        ApiKind::OpenaiResponses,
        200,
        "application/json",
        None,
        body.to_string().as_bytes(),
    );
    assert_eq!(r.stop_reason.as_deref(), Some("max_output_tokens"));
    assert_eq!(r.text, "cut");
}

#[test]
fn count_tokens_gives_its_input_tokens() {
    let r = run(
        ApiKind::AnthropicCountTokens,
        200,
        "application/json",
        None,
        br#"{"input_tokens":4242}"#,
    );
    assert_eq!(r.usage.map(|u| u.input_tokens), Some(4242));
}

#[test]
fn arguments_that_are_not_json_stay_text() {
    let body = json!({"choices": [{"message": {"content": null, "tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": "{not json"}}]}, "finish_reason": "tool_calls"}]});
    let r = run(
        ApiKind::OpenaiChat,
        200,
        "application/json",
        None,
        body.to_string().as_bytes(),
    );
    assert_eq!(r.tool_calls[0].input, json!("{not json"));
    assert_eq!(r.text, "");
}

#[test]
fn an_endless_stream_keeps_its_text_and_arguments_to_the_cap_with_a_marker() {
    // Issue 39, item 2: an endless answer made a 260 MB capture line per exchange.
    let mut a = Assembler::new(
        ApiKind::AnthropicMessages,
        200,
        Some("text/event-stream"),
        None,
    );
    let delta = "é".repeat(500);
    let text_event = format!(
        "event: content_block_delta\ndata: {}\n\n",
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": delta}})
    );
    let args_event = format!(
        "event: content_block_delta\ndata: {}\n\n",
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "a".repeat(1000)}})
    );
    a.feed(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"w\"}}\n\n");
    let rounds = (MAX_ANSWER_TEXT_BYTES / 1000) * 2;
    for i in 0..rounds {
        a.feed(text_event.as_bytes());
        if i % 2 == 0 {
            a.feed(args_event.as_bytes());
            a.feed(args_event.as_bytes());
            a.feed(args_event.as_bytes());
        }
    }
    let r = a.finish();
    let marker = truncated_marker(MAX_ANSWER_TEXT_BYTES);
    assert!(r.text.ends_with(&marker), "the text says it was cut");
    assert!(r.text.len() <= MAX_ANSWER_TEXT_BYTES + marker.len());
    assert!(r.text.len() > MAX_ANSWER_TEXT_BYTES - 4);
    assert_eq!(r.text.matches("[ctxlab proxy").count(), 1);
    let args = r.tool_calls[0].input.as_str().unwrap();
    assert!(args.len() <= MAX_CALL_ARGS_BYTES + marker.len());
    assert!(args.ends_with("bytes]"), "{}", &args[args.len() - 60..]);
}
