//! What the server did to a request's context before the model read it (docs/capture.md,
//! "The server's own edits"): the edits the request asked for (Anthropic's
//! `context_management.edits`: `clear_tool_uses_20250919`, `clear_thinking_20251015`,
//! `compact_20260112`; the Responses API's `context_management` entries with their
//! `compact_threshold`), the edits the response says were applied
//! (`context_management.applied_edits`, with the tool uses, thinking turns and input tokens
//! each cleared), and a compaction the server made itself. So the body sent is not what
//! the model saw; these say by how much. Reads one exchange; pure.

use serde::Serialize;
use serde_json::Value;

use super::format::{ApiKind, Exchange};

/// Most edits read from one request or response (the APIs know three kinds).
const MAX_EDITS: usize = 16;
/// Longest edit type name kept (it comes from the capture).
const TYPE_CHARS: usize = 48;

/// One edit a request asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskedEdit {
    /// Its `type` (`clear_tool_uses_20250919`, `compaction`, ...).
    pub kind: String,
    /// The token count that sets it off, when the request gives one (`trigger.value`,
    /// `compact_threshold`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_tokens: Option<u64>,
}

/// One edit the server applied, as its response reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedEdit {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared_tool_uses: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared_thinking_turns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared_input_tokens: Option<u64>,
}

/// The server's side of one exchange.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServerEdits {
    pub asked: Vec<AskedEdit>,
    pub applied: Vec<AppliedEdit>,
    /// The server compacted the context itself: its summary's characters (0 when opaque)
    /// and the bytes of its content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_bytes: Option<u64>,
}

impl ServerEdits {
    /// Whether the server did anything (asked-for edits alone change nothing).
    pub fn acted(&self) -> bool {
        !self.applied.is_empty() || self.compaction_bytes.is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.asked.is_empty() && !self.acted()
    }

    /// The input tokens the applied edits removed, all together.
    pub fn cleared_tokens(&self) -> u64 {
        self.applied
            .iter()
            .filter_map(|e| e.cleared_input_tokens)
            .sum()
    }
}

impl ServerEdits {
    /// A few words for a request's row, when the server acted: `server cleared 4 tool uses
    /// (12,000 tokens)`, `server compacted`.
    pub fn headline(&self) -> Option<String> {
        if !self.acted() {
            return None;
        }
        let mut parts = Vec::new();
        let uses: u64 = self
            .applied
            .iter()
            .filter_map(|e| e.cleared_tool_uses)
            .sum();
        let turns: u64 = self
            .applied
            .iter()
            .filter_map(|e| e.cleared_thinking_turns)
            .sum();
        if uses > 0 {
            parts.push(crate::util::plural(uses as usize, "tool use"));
        }
        if turns > 0 {
            parts.push(crate::util::plural(turns as usize, "thinking turn"));
        }
        let mut text = String::new();
        if !self.applied.is_empty() {
            text = format!(
                "server cleared {} ({} tokens)",
                if parts.is_empty() {
                    "context".to_string()
                } else {
                    parts.join(", ")
                },
                crate::util::group_digits(self.cleared_tokens() as usize)
            );
        }
        if self.compaction_bytes.is_some() {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str("server compacted");
        }
        Some(text)
    }
}

fn kind_of(v: &Value) -> String {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
    crate::util::clip_chars(kind, TYPE_CHARS)
}

fn n(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// The edits `body` asks for.
pub fn asked_edits(api: ApiKind, body: &Value) -> Vec<AskedEdit> {
    let cm = body.get("context_management");
    let list = match api {
        // The Responses API takes a list of entries; Anthropic an object with `edits`.
        ApiKind::OpenaiResponses => cm.and_then(Value::as_array),
        _ => cm.and_then(|c| c.get("edits")).and_then(Value::as_array),
    };
    list.into_iter()
        .flatten()
        .take(MAX_EDITS)
        .map(|e| AskedEdit {
            kind: kind_of(e),
            trigger_tokens: n(e, "compact_threshold")
                .or_else(|| e.pointer("/trigger/value").and_then(Value::as_u64)),
        })
        .collect()
}

/// The server's side of exchange `e`.
pub fn server_edits(e: &Exchange) -> ServerEdits {
    let asked = e
        .request
        .body
        .as_ref()
        .map(|b| asked_edits(e.api, b))
        .unwrap_or_default();
    let applied = e
        .response
        .applied_edits
        .iter()
        .take(MAX_EDITS)
        .map(|a| AppliedEdit {
            kind: kind_of(a),
            cleared_tool_uses: n(a, "cleared_tool_uses"),
            cleared_thinking_turns: n(a, "cleared_thinking_turns"),
            cleared_input_tokens: n(a, "cleared_input_tokens"),
        })
        .collect();
    let c = e.response.server_compaction.as_ref();
    ServerEdits {
        asked,
        applied,
        compaction_chars: c.map(|c| c.text.chars().count() as u64),
        compaction_bytes: c.map(|c| c.bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(api: &str, body: Value, response: Value) -> Exchange {
        serde_json::from_value(json!({"n": 1, "started": "t", "method": "POST",
            "path": "/v1/messages", "api": api, "upstream": "u",
            "request": {"headers": [], "bytes": 1, "sha256": "00", "body": body},
            "response": response, "timing": {}}))
        .unwrap()
    }

    #[test]
    fn anthropic_edits_asked_and_applied_with_the_tokens_they_cleared() {
        let body = json!({"context_management": {"edits": [
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
            {"type": "clear_tool_uses_20250919",
             "trigger": {"type": "input_tokens", "value": 30000}}]}});
        let response = json!({"status": 200, "applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4, "cleared_input_tokens": 12000},
            {"type": "clear_thinking_20251015", "cleared_thinking_turns": 2, "cleared_input_tokens": 800}]});
        let s = server_edits(&exchange("anthropic_messages", body, response));
        assert_eq!(s.asked.len(), 2);
        assert_eq!(s.asked[1].trigger_tokens, Some(30000));
        assert_eq!(s.applied[0].cleared_tool_uses, Some(4));
        assert_eq!(s.applied[1].cleared_thinking_turns, Some(2));
        assert_eq!(s.cleared_tokens(), 12800);
        assert!(s.acted());
        assert_eq!(
            s.headline().as_deref(),
            Some("server cleared 4 tool uses, 2 thinking turns (12,800 tokens)")
        );
    }

    #[test]
    fn a_responses_compaction_threshold_and_an_opaque_compaction() {
        let body =
            json!({"context_management": [{"type": "compaction", "compact_threshold": 200000}]});
        let response = json!({"status": 200, "server_compaction": {"bytes": 2048}});
        let s = server_edits(&exchange("openai_responses", body, response));
        assert_eq!(
            s.asked,
            vec![AskedEdit {
                kind: "compaction".into(),
                trigger_tokens: Some(200000)
            }]
        );
        assert_eq!(
            (s.compaction_chars, s.compaction_bytes),
            (Some(0), Some(2048))
        );
        assert!(s.acted());
        assert_eq!(s.headline().as_deref(), Some("server compacted"));
        let none = server_edits(&exchange(
            "anthropic_messages",
            json!({}),
            json!({"status": 200}),
        ));
        assert!(none.is_empty());
    }
}
