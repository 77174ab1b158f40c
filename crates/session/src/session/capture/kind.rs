//! What one captured model request is before any thread is chosen (docs/capture.md, "A
//! capture as a session"): a call the API refused or never answered (a 429, an error
//! event, no response), the agent's own compaction request, or a model call. A compaction
//! request is known by the header where the client sends one (Codex's
//! `x-codex-turn-metadata`, `"request_kind":"compaction"`) and otherwise by the prompt the
//! agent sends in it (Claude Code's summary prompt, Codex's checkpoint prompt, in the last
//! user message). The fold and the requests view both ask here, so they cannot disagree.

use serde_json::Value;

use super::format::Exchange;
use super::request::ExactRequest;
use crate::message::{BlockKind, Message, Role};

/// The header in which Codex says what a request is for.
pub const CODEX_TURN_METADATA: &str = "x-codex-turn-metadata";
/// What Claude Code's summary request asks, in its last user message (full and partial
/// compaction: "of the conversation so far", "of the RECENT portion").
const CLAUDE_SUMMARY_PROMPT: &str = "Your task is to create a detailed summary of the";
/// What Codex's compaction request asks, for captures without its header's value.
const CODEX_COMPACTION_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION";

/// What a captured model request is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// A model call: the thread's or a side request, as the fold decides.
    Call,
    /// The agent asking for the summary of its own compaction: not a call of the thread.
    CompactionRequest {
        /// Codex's `compaction.trigger` (`auto`, `manual`), when the header says.
        trigger: Option<String>,
    },
    /// No answer came: an error status (a 429, a 529), an error event in the stream, or no
    /// response at all. The client retries it; it is listed, not a call.
    Refused { why: String },
    /// Codex's prewarm (`"generate": false`, the first request on its WebSocket): the
    /// request's prefix sent ahead so the server caches it; the model generates nothing.
    Prewarm,
}

/// What the request of `e` (read as `req`) is.
pub fn request_kind(e: &Exchange, req: &ExactRequest) -> RequestKind {
    if let Some(why) = refused(e) {
        return RequestKind::Refused { why };
    }
    if e.request
        .body
        .as_ref()
        .and_then(|b| b.get("generate"))
        .and_then(Value::as_bool)
        == Some(false)
    {
        return RequestKind::Prewarm;
    }
    if let Some(meta) = codex_metadata(e)
        && meta.get("request_kind").and_then(Value::as_str) == Some("compaction")
    {
        let trigger = meta
            .pointer("/compaction/trigger")
            .and_then(Value::as_str)
            .map(str::to_string);
        return RequestKind::CompactionRequest { trigger };
    }
    if asks_for_summary(req) {
        return RequestKind::CompactionRequest { trigger: None };
    }
    RequestKind::Call
}

/// Why no answer came, when none did.
fn refused(e: &Exchange) -> Option<String> {
    let r = &e.response;
    match r.status {
        None => Some("no response".to_string()),
        // A WebSocket exchange's status is its connection's `101 Switching Protocols`.
        Some(101) if e.request.websocket.is_some() => {
            r.error.as_ref().map(|_| "an error event".to_string())
        }
        Some(s) if !(200..300).contains(&s) => Some(format!("status {s}")),
        Some(_) => r.error.as_ref().map(|_| "an error event".to_string()),
    }
}

/// The conversation Codex says a request is of (`thread_id` in its turn metadata): two
/// `codex exec` runs through one proxy are two conversations even with the same tools.
pub(super) fn codex_thread(e: &Exchange) -> Option<String> {
    codex_metadata(e)?
        .get("thread_id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Codex's turn metadata, when the capture kept the header's value and it is JSON. Over
/// the WebSocket, Codex sends it per request in the body's `client_metadata` (the
/// handshake's header describes the connection's first request only), which comes first.
fn codex_metadata(e: &Exchange) -> Option<Value> {
    if let Some(meta) = e
        .request
        .body
        .as_ref()
        .and_then(|b| b.get("client_metadata"))
        .and_then(|m| m.get(CODEX_TURN_METADATA))
        .and_then(Value::as_str)
    {
        return serde_json::from_str(meta).ok();
    }
    let h = e
        .request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(CODEX_TURN_METADATA))?;
    serde_json::from_str(h.value.as_deref()?).ok()
}

/// Whether a text asks for the compaction summary.
fn asks(text: &str) -> bool {
    text.contains(CLAUDE_SUMMARY_PROMPT) || text.contains(CODEX_COMPACTION_PROMPT)
}

/// Whether a block is a text block that asks for the compaction summary.
fn asking_block(b: &Value) -> bool {
    BlockKind::of(b) == BlockKind::Text && b.get("text").and_then(Value::as_str).is_some_and(asks)
}

/// Whether the last message is a user message whose text asks for the compaction summary.
fn asks_for_summary(req: &ExactRequest) -> bool {
    let Some(last) = req.messages.last().filter(|m| m.role_kind() == Role::User) else {
        return false;
    };
    match last.text() {
        Some(t) => asks(t),
        None => last.blocks().iter().any(asking_block),
    }
}

/// A compaction request's messages without the prompt that asks for the summary: its text
/// blocks in the last message go, and the message with them when nothing else is left.
pub(super) fn without_summary_prompt(msgs: &mut Vec<Message>) {
    let Some(last) = msgs.last_mut().filter(|m| m.role_kind() == Role::User) else {
        return;
    };
    let empty = match last.blocks_mut() {
        Some(blocks) => {
            blocks.retain(|b| !asking_block(b));
            blocks.is_empty()
        }
        None => last.text().is_some_and(asks),
    };
    if empty {
        msgs.pop();
    }
}

/// What a compaction request's answer says the summary is, to find it in the next request:
/// the text inside `<summary>` tags when there are some (Claude Code sends on only that
/// part), else the whole text; its first `NEEDLE_CHARS` characters.
pub(super) fn summary_needle(answer_text: &str) -> Option<String> {
    const NEEDLE_CHARS: usize = 200;
    let inner = answer_text
        .split_once("<summary>")
        .map(|(_, rest)| rest.split_once("</summary>").map_or(rest, |(s, _)| s))
        .unwrap_or(answer_text)
        .trim();
    let needle: String = inner.chars().take(NEEDLE_CHARS).collect();
    (!needle.is_empty()).then_some(needle)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::session::capture::exact_request;
    use crate::session::capture::format::ApiKind;

    fn codex(meta: Option<&str>, input: Value) -> (Exchange, ExactRequest) {
        let body = json!({"model": "gpt-5.1-codex", "input": input});
        let mut headers = vec![json!({"name": "user-agent", "value": "codex_exec/0.171.0"})];
        if let Some(m) = meta {
            headers.push(json!({"name": CODEX_TURN_METADATA, "value": m}));
        }
        let e: Exchange = serde_json::from_value(json!({"n": 1, "started": "t",
            "method": "POST", "path": "/v1/responses", "api": "openai_responses",
            "upstream": "http://127.0.0.1:1",
            "request": {"headers": headers, "bytes": 1, "sha256": "00", "body": body.clone()},
            "response": {"status": 200, "text": "<summary>kept: the notes</summary>"},
            "timing": {}}))
        .unwrap();
        let req = exact_request(ApiKind::OpenaiResponses, &body).unwrap();
        (e, req)
    }

    #[test]
    fn codex_says_a_compaction_request_in_its_turn_metadata_header() {
        let asks = json!([{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "hello"}]}]);
        let meta =
            r#"{"session_id":"s","request_kind":"compaction","compaction":{"trigger":"auto"}}"#;
        let (e, req) = codex(Some(meta), asks.clone());
        assert_eq!(
            request_kind(&e, &req),
            RequestKind::CompactionRequest {
                trigger: Some("auto".into())
            }
        );
        let (e, req) = codex(Some(r#"{"request_kind":"turn"}"#), asks.clone());
        assert_eq!(request_kind(&e, &req), RequestKind::Call);
        let (e, req) = codex(None, asks);
        assert_eq!(request_kind(&e, &req), RequestKind::Call);
    }

    #[test]
    fn over_the_websocket_the_metadata_is_in_the_body_and_101_is_an_answer() {
        // Codex 0.171's WebSocket: the handshake's header says `prewarm`; each request's
        // `client_metadata` says what it is.
        let asks = json!([{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "hello"}]}]);
        let (mut e, req) = codex(Some(r#"{"request_kind":"prewarm"}"#), asks);
        e.response.status = Some(101);
        e.request.websocket = Some(crate::session::capture::WebsocketMessage {
            connection: 1,
            message: 3,
            previous_response_id: None,
            items_carried: None,
        });
        assert_eq!(request_kind(&e, &req), RequestKind::Call);
        e.request.body = Some(json!({"generate": false, "input": []}));
        assert_eq!(request_kind(&e, &req), RequestKind::Prewarm);
        let meta = r#"{"request_kind":"compaction","compaction":{"trigger":"auto"}}"#;
        e.request.body = Some(json!({"client_metadata": {CODEX_TURN_METADATA: meta}}));
        assert_eq!(
            request_kind(&e, &req),
            RequestKind::CompactionRequest {
                trigger: Some("auto".into())
            }
        );
        // Without the WebSocket, a 101 is no answer.
        e.request.websocket = None;
        assert!(matches!(
            request_kind(&e, &req),
            RequestKind::Refused { .. }
        ));
    }

    #[test]
    fn the_turn_metadata_header_value_is_kept_in_a_capture() {
        assert!(crate::session::capture::header_value_kept(
            "X-Codex-Turn-Metadata"
        ));
    }

    #[test]
    fn the_summary_prompt_is_taken_out_of_a_compaction_request() {
        let mut msgs = vec![
            Message::user_text("a"),
            Message::user_blocks(vec![
                json!({"type": "tool_result", "tool_use_id": "t", "content": "x"}),
                json!({"type": "text", "text": format!("{CODEX_COMPACTION_PROMPT}. Summarize.")}),
            ]),
        ];
        without_summary_prompt(&mut msgs);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[1].blocks().len(), 1);
        assert_eq!(
            summary_needle("<analysis>a</analysis>\n<summary>\n kept \n</summary>"),
            Some("kept".into())
        );
        assert_eq!(summary_needle("  "), None);
    }
}
