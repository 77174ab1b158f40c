//! Reading the fields of an answer's JSON for the assembler: a string field, tool
//! arguments, either API's error message (clipped) and OpenAI's usage in the Anthropic
//! sense. Pure functions.

use serde_json::{Map, Value};

use crate::session::capture::CapturedUsage;

pub(super) fn str_of(v: Option<&Value>, key: &str) -> String {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Arguments as JSON when they parse, else the text as it came.
pub(super) fn parse_args(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// `error.message` of either API's error object.
pub(super) fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    let text = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| e.to_string());
    Some(clip(&text))
}

/// An error body is kept to its first 2,000 characters: it is a message, not a payload.
pub(super) fn clip(text: &str) -> String {
    text.chars().take(2_000).collect()
}

/// OpenAI's usage (`prompt_tokens`/`input_tokens` with the cached part inside) in the
/// Anthropic sense.
pub(super) fn openai_usage(u: &Value) -> CapturedUsage {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64);
    let input = n("/prompt_tokens")
        .or_else(|| n("/input_tokens"))
        .unwrap_or(0);
    let output = n("/completion_tokens")
        .or_else(|| n("/output_tokens"))
        .unwrap_or(0);
    let cached = n("/prompt_tokens_details/cached_tokens")
        .or_else(|| n("/input_tokens_details/cached_tokens"))
        .unwrap_or(0);
    CapturedUsage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: output,
        cache_read_tokens: cached,
        cache_creation_tokens: 0,
    }
}
