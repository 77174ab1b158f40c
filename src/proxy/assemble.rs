//! The answer of one exchange, assembled from the bytes the proxy passes on: the text, the
//! tool calls, the usage, the stop reason and the API's error, for Anthropic Messages,
//! OpenAI Chat Completions and the Responses API, streamed (SSE, framed by the provider's
//! decoder) or plain (JSON, kept up to `MAX_PLAIN_BYTES`). It only reads copies of the
//! chunks: what reaches the client never waits for it and is never changed by it.

use serde_json::{Map, Value};

use crate::provider::{SseDecoder, SseEvent, StreamLimits};
use crate::session::capture::{ApiKind, CapturedResponse, CapturedToolCall, CapturedUsage};

/// Most bytes of a plain (non-streamed) body kept for assembling; past it the answer is
/// passed on whole and noted as not assembled.
pub const MAX_PLAIN_BYTES: usize = 32 << 20;
/// Most bytes of answer text one exchange keeps (a real answer is a few hundred KB); past
/// it the text ends with `truncated_marker`, so no stream, however long, makes a capture
/// line the readers refuse (docs/capture.md).
pub const MAX_ANSWER_TEXT_BYTES: usize = 4 << 20;
/// Most bytes of streamed tool-call arguments one exchange keeps, all calls together.
pub const MAX_CALL_ARGS_BYTES: usize = 4 << 20;

/// What ends a text the capture cut.
pub fn truncated_marker(cap: usize) -> String {
    format!("\n[ctxlab proxy: truncated at {cap} bytes]")
}

/// Appends `part` to `into` while `into` stays within `cap` bytes (cut at a character
/// boundary); the first time it does not, the marker is appended and `cut` set.
fn push_capped(into: &mut String, part: &str, cap: usize, cut: &mut bool) {
    if *cut {
        return;
    }
    let room = cap.saturating_sub(into.len());
    if part.len() <= room {
        into.push_str(part);
        return;
    }
    let mut end = room;
    while !part.is_char_boundary(end) {
        end -= 1;
    }
    into.push_str(&part[..end]);
    into.push_str(&truncated_marker(cap));
    *cut = true;
}

/// A tool call being streamed: its id, name and argument text so far.
#[derive(Debug, Default)]
struct PendingCall {
    id: String,
    name: String,
    args: String,
}

/// Folds a response body, chunk by chunk.
pub struct Assembler {
    api: ApiKind,
    out: CapturedResponse,
    sse: Option<SseDecoder>,
    plain: Vec<u8>,
    /// Streamed tool calls by their index (Anthropic's block index, OpenAI's call index).
    calls: Vec<(u64, PendingCall)>,
    events: Vec<SseEvent>,
    /// The text reached `MAX_ANSWER_TEXT_BYTES`.
    text_cut: bool,
    /// Argument bytes kept so far, all calls together, and whether some were cut.
    args_bytes: usize,
    args_cut: bool,
    /// A compressed body cannot be read here; it is still passed on untouched.
    unreadable: Option<String>,
    /// The stream's last event passed (`message_stop`, `response.completed`, `[DONE]`).
    complete: bool,
}

impl Assembler {
    /// For a response of `status` with these content type and encoding headers.
    pub fn new(
        api: ApiKind,
        status: u16,
        content_type: Option<&str>,
        encoding: Option<&str>,
    ) -> Assembler {
        let streamed = content_type.is_some_and(|t| t.starts_with("text/event-stream"));
        let unreadable = encoding
            .filter(|e| !e.eq_ignore_ascii_case("identity"))
            .map(|e| format!("the body is {e}-encoded"));
        Assembler {
            api,
            out: CapturedResponse {
                status: Some(status),
                streamed,
                ..CapturedResponse::default()
            },
            sse: (streamed && unreadable.is_none())
                .then(|| SseDecoder::new(StreamLimits::default())),
            plain: Vec::new(),
            calls: Vec::new(),
            events: Vec::new(),
            text_cut: false,
            args_bytes: 0,
            args_cut: false,
            unreadable,
            complete: false,
        }
    }

    /// One chunk as it passed.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.out.bytes += chunk.len() as u64;
        if self.unreadable.is_some() {
            return;
        }
        if let Some(sse) = &mut self.sse {
            if let Err(e) = sse.feed(chunk, &mut self.events) {
                self.unreadable = Some(format!("the event stream cannot be read: {e}"));
                self.sse = None;
            }
            self.take_events();
        } else if self.plain.len() + chunk.len() <= MAX_PLAIN_BYTES {
            self.plain.extend_from_slice(chunk);
        } else {
            self.unreadable = Some(format!("the body is over {MAX_PLAIN_BYTES} bytes"));
            self.plain = Vec::new();
        }
    }

    /// Whether the answer's final event has passed: a client that hangs up after it got the
    /// whole answer (Codex closes on `response.completed`), it cancelled nothing.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// The body ended (or broke off): the assembled answer.
    pub fn finish(mut self) -> CapturedResponse {
        if let Some(mut sse) = self.sse.take() {
            if sse.finish(&mut self.events).is_ok() {
                self.take_events();
            }
            let calls = std::mem::take(&mut self.calls);
            for (_, call) in calls {
                self.out.tool_calls.push(CapturedToolCall {
                    id: call.id,
                    name: call.name,
                    input: parse_args(&call.args),
                });
            }
        } else if self.unreadable.is_none() && !self.plain.is_empty() {
            match serde_json::from_slice::<Value>(&self.plain) {
                Ok(v) => self.plain_answer(&v),
                Err(_) if self.out.status.is_some_and(|s| s >= 400) => {
                    self.out.error = Some(clip(&String::from_utf8_lossy(&self.plain)));
                }
                Err(_) => self.unreadable = Some("the body is not JSON".to_string()),
            }
        }
        self.out.not_assembled = self.unreadable.take();
        self.out
    }

    fn take_events(&mut self) {
        let events = std::mem::take(&mut self.events);
        for e in &events {
            self.out.events += 1;
            if e.data.trim() == "[DONE]" {
                self.complete = true;
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&e.data) else {
                continue;
            };
            let kind = v.get("type").and_then(Value::as_str).unwrap_or(&e.event);
            if matches!(
                kind,
                "message_stop" | "response.completed" | "response.incomplete" | "response.failed"
            ) {
                self.complete = true;
            }
            match self.api {
                ApiKind::OpenaiChat => self.chat_event(&v),
                ApiKind::OpenaiResponses => self.responses_event(&e.event, &v),
                _ => self.anthropic_event(&e.event, &v),
            }
        }
        self.events = events;
        self.events.clear();
    }

    fn call_at(&mut self, index: u64) -> &mut PendingCall {
        let at = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.calls.push((index, PendingCall::default()));
                self.calls.len() - 1
            }
        };
        &mut self.calls[at].1
    }

    fn anthropic_event(&mut self, name: &str, v: &Value) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "message_start" => {
                if let Some(m) = v.get("message") {
                    self.note_model(m);
                    self.add_anthropic_usage(m.get("usage"));
                }
            }
            "content_block_start" => {
                let block = v.get("content_block");
                if block.and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use") {
                    let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                    let call = self.call_at(index);
                    call.id = str_of(block, "id");
                    call.name = str_of(block, "name");
                } else if let Some(text) = block.and_then(|b| b.get("text")).and_then(Value::as_str)
                {
                    self.push_text(text);
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta");
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => self.push_text(&str_of(delta, "text")),
                    Some("input_json_delta") => {
                        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                        let part = str_of(delta, "partial_json");
                        self.push_args(index, &part);
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.out.stop_reason = Some(r.to_string());
                }
                self.add_anthropic_usage(v.get("usage"));
            }
            "error" => self.out.error = error_message(v),
            _ => {}
        }
    }

    /// Anthropic's usage: `message_start` gives the input side, `message_delta` the output
    /// (and, on some servers, the input again): the latest non-zero value of each wins.
    fn add_anthropic_usage(&mut self, usage: Option<&Value>) {
        let Some(u) = usage else { return };
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let got = self.out.usage.get_or_insert_with(CapturedUsage::default);
        if let Some(x) = n("input_tokens").filter(|x| *x > 0) {
            got.input_tokens = x;
        }
        if let Some(x) = n("output_tokens").filter(|x| *x > 0) {
            got.output_tokens = x;
        }
        if let Some(x) = n("cache_read_input_tokens").filter(|x| *x > 0) {
            got.cache_read_tokens = x;
        }
        if let Some(x) = n("cache_creation_input_tokens").filter(|x| *x > 0) {
            got.cache_creation_tokens = x;
        }
    }

    fn chat_event(&mut self, v: &Value) {
        self.note_model(v);
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.out.usage = Some(openai_usage(u));
        }
        if v.get("error").is_some() {
            self.out.error = error_message(v);
        }
        let Some(choice) = v.pointer("/choices/0") else {
            return;
        };
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.out.stop_reason = Some(r.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            self.push_text(t);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let pending = self.call_at(index);
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                pending.id = id.to_string();
            }
            let f = call.get("function");
            if let Some(name) = f.and_then(|f| f.get("name")).and_then(Value::as_str) {
                pending.name.push_str(name);
            }
            if let Some(a) = f.and_then(|f| f.get("arguments")).and_then(Value::as_str) {
                self.push_args(index, a);
            }
        }
    }

    fn responses_event(&mut self, name: &str, v: &Value) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "response.output_text.delta" => self.push_text(&str_of(Some(v), "delta")),
            "response.completed" | "response.incomplete" | "response.failed" => {
                if let Some(r) = v.get("response") {
                    // The final object says it all: what the deltas built is replaced.
                    let streamed_text = std::mem::take(&mut self.out.text);
                    let streamed_cut = std::mem::take(&mut self.text_cut);
                    self.calls.clear();
                    self.responses_object(r);
                    if self.out.text.is_empty() {
                        self.out.text = streamed_text;
                        self.text_cut = streamed_cut;
                    }
                }
            }
            "error" => {
                self.out.error = error_message(v).or_else(|| Some(str_of(Some(v), "message")))
            }
            _ => {}
        }
    }

    fn plain_answer(&mut self, v: &Value) {
        if v.get("error").is_some_and(|e| !e.is_null()) {
            self.out.error = error_message(v);
        }
        match self.api {
            ApiKind::OpenaiChat => {
                self.note_model(v);
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    self.out.usage = Some(openai_usage(u));
                }
                let Some(choice) = v.pointer("/choices/0") else {
                    return;
                };
                self.out.stop_reason = choice
                    .get("finish_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let msg = choice.get("message");
                self.push_text(&str_of(msg, "content"));
                for call in msg
                    .and_then(|m| m.get("tool_calls"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let f = call.get("function");
                    self.out.tool_calls.push(CapturedToolCall {
                        id: str_of(Some(call), "id"),
                        name: str_of(f, "name"),
                        input: parse_args(&str_of(f, "arguments")),
                    });
                }
            }
            ApiKind::OpenaiResponses => self.responses_object(v),
            _ => {
                self.note_model(v);
                self.add_anthropic_usage(v.get("usage"));
                self.out.stop_reason = v
                    .get("stop_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                for block in v
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => self.push_text(&str_of(Some(block), "text")),
                        Some("tool_use") => self.out.tool_calls.push(CapturedToolCall {
                            id: str_of(Some(block), "id"),
                            name: str_of(Some(block), "name"),
                            input: block.get("input").cloned().unwrap_or(Value::Null),
                        }),
                        _ => {}
                    }
                }
                // count_tokens answers `{"input_tokens": N}` only.
                if self.api == ApiKind::AnthropicCountTokens
                    && let Some(n) = v.get("input_tokens").and_then(Value::as_u64)
                {
                    self.out.usage = Some(CapturedUsage {
                        input_tokens: n,
                        ..CapturedUsage::default()
                    });
                }
            }
        }
    }

    /// A Responses API response object (plain, or the final event's).
    fn responses_object(&mut self, r: &Value) {
        self.note_model(r);
        if let Some(u) = r.get("usage").filter(|u| u.is_object()) {
            self.out.usage = Some(openai_usage(u));
        }
        if r.get("error").is_some_and(|e| !e.is_null()) {
            self.out.error = error_message(r);
        }
        let status = r.get("status").and_then(Value::as_str);
        let incomplete = r
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        self.out.stop_reason = incomplete.or(status).map(str::to_string);
        self.out.text.clear();
        self.text_cut = false;
        for item in r
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    for part in item
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if part.get("type").and_then(Value::as_str) == Some("output_text") {
                            self.push_text(&str_of(Some(part), "text"));
                        }
                    }
                }
                Some("function_call") => self.out.tool_calls.push(CapturedToolCall {
                    id: str_of(Some(item), "call_id"),
                    name: str_of(Some(item), "name"),
                    input: parse_args(&str_of(Some(item), "arguments")),
                }),
                _ => {}
            }
        }
    }

    fn push_text(&mut self, part: &str) {
        push_capped(
            &mut self.out.text,
            part,
            MAX_ANSWER_TEXT_BYTES,
            &mut self.text_cut,
        );
    }

    /// Streamed arguments of the call at `index`, within the exchange's budget.
    fn push_args(&mut self, index: u64, part: &str) {
        if self.args_cut {
            return;
        }
        let cap = MAX_CALL_ARGS_BYTES.saturating_sub(self.args_bytes);
        let mut cut = false;
        let call = self.call_at(index);
        let before = call.args.len();
        push_capped(&mut call.args, part, before + cap, &mut cut);
        self.args_bytes += call.args.len() - before;
        self.args_cut = cut;
    }

    fn note_model(&mut self, v: &Value) {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.out.model = Some(m.to_string());
        }
    }
}

fn str_of(v: Option<&Value>, key: &str) -> String {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Arguments as JSON when they parse, else the text as it came.
fn parse_args(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// `error.message` of either API's error object.
fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    let text = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| e.to_string());
    Some(clip(&text))
}

/// An error body is kept to its first 2,000 characters: it is a message, not a payload.
fn clip(text: &str) -> String {
    text.chars().take(2_000).collect()
}

/// OpenAI's usage (`prompt_tokens`/`input_tokens` with the cached part inside) in the
/// Anthropic sense.
fn openai_usage(u: &Value) -> CapturedUsage {
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

#[cfg(test)]
mod tests;
