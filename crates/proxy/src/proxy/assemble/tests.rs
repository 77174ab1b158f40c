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

#[test]
fn anthropic_applied_edits_and_a_compaction_block_are_kept() {
    // Issue 35, item 3: the server's own edits (context_management.applied_edits on
    // message_delta) and its compaction block were read past.
    let edits = json!({"applied_edits": [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 9000}]});
    let body = format!(
        "event: message_start\ndata: {}\n\n\
         event: content_block_start\ndata: {}\n\n\
         event: content_block_delta\ndata: {}\n\n\
         event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
         event: message_delta\ndata: {}\n\n\
         event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        json!({"type": "message_start", "message": {"model": "claude-x",
            "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "compaction", "content": "Summary: "}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "compaction_delta", "content": "the files were read."}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "compaction"},
            "usage": {"output_tokens": 12}, "context_management": edits}),
    );
    let r = run(
        ApiKind::AnthropicMessages,
        200,
        "text/event-stream",
        None,
        body.as_bytes(),
    );
    assert_eq!(r.stop_reason.as_deref(), Some("compaction"));
    assert_eq!(r.applied_edits.len(), 1);
    assert_eq!(r.applied_edits[0]["cleared_input_tokens"], 9000);
    let c = r.server_compaction.unwrap();
    assert_eq!(c.text, "Summary: the files were read.");
    assert_eq!(c.bytes, 29);
    assert_eq!(r.text, "", "a compaction block is not the answer's text");
}

#[test]
fn a_responses_compaction_item_is_kept_by_its_size() {
    let done = json!({"type": "response.completed", "response": {"id": "r", "status": "completed",
        "output": [{"type": "compaction", "id": "cmp_1", "encrypted_content": "abcdefgh"}],
        "usage": {"input_tokens": 10, "output_tokens": 1}}});
    let body = format!("event: response.completed\ndata: {done}\n\n");
    let r = run(
        ApiKind::OpenaiResponses,
        200,
        "text/event-stream",
        None,
        body.as_bytes(),
    );
    let c = r.server_compaction.unwrap();
    assert_eq!((c.text.as_str(), c.bytes), ("", 8));
}
