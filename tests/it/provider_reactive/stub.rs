//! The llama-server stand-in the reactive tests run against (a window of `WINDOW` tokens,
//! its real overflow bodies for both wires) and the agent session around it.

use std::sync::Arc;
use std::time::Duration;

use crate::common::agent::{HistoryMirror, SUMMARY_PREFIX, until, until_done};
use ctxlab::agent::{AgentEvent, AgentSetup, ErrorKind, UserCommand, spawn};
use ctxlab::compact::summarize::{
    SUMMARY_CHARS_PER_TOKEN, SUMMARY_OVERHEAD_TOKENS, SUMMARY_SYSTEM,
};
use ctxlab::compact::{PipelineConfig, Stage, StageReport};
use ctxlab::provider::{AnthropicModel, ApiKey, Model, OpenAiModel, RetryPolicy};
use ctxlab::tools::Workspace;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub(super) const WINDOW: u64 = 512;
/// The request the stub answers with a `read_file` call of `big.txt`.
pub(super) const READ_BIG: &str = "read big.txt";
pub(super) const STEP: Duration = Duration::from_secs(20);

/// Which wire format the stub speaks.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Wire {
    Anthropic,
    OpenAi,
}

/// A llama-server stand-in: one token per 4 chars of message text, a window of `WINDOW`.
pub(super) struct Stub {
    pub(super) wire: Wire,
    /// The finish of a summary answer: `"length"` for one cut at its token limit.
    pub(super) summary_finish: &'static str,
}

pub(super) fn text_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(text_chars).sum(),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "text" | "content" | "input"))
            .map(|(_, v)| text_chars(v))
            .sum(),
        _ => 0,
    }
}

pub(super) fn system_of(body: &Value) -> String {
    match body.get("system") {
        Some(Value::String(s)) => s.clone(),
        _ => body["messages"][0]["content"]
            .as_str()
            .filter(|_| body["messages"][0]["role"] == "system")
            .unwrap_or("")
            .to_string(),
    }
}

/// The prompt's size as the stub counts it: system text and every message's text.
pub(super) fn prompt_tokens(body: &Value) -> u64 {
    let mut chars = text_chars(&body["messages"]);
    if let Some(Value::String(s)) = body.get("system") {
        chars += s.chars().count();
    }
    (chars / 4) as u64
}

impl Respond for Stub {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let tokens = prompt_tokens(&body);
        if tokens > WINDOW {
            let error = match self.wire {
                // llama.cpp answers both endpoints with its own body.
                Wire::OpenAi => json!({"error": {"code": 400,
                    "message": format!("request ({tokens} tokens) exceeds the available context size ({WINDOW} tokens), try increasing it"),
                    "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": WINDOW}}),
                Wire::Anthropic => {
                    json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": format!("prompt is too long: {tokens} tokens > {WINDOW} maximum")}})
                }
            };
            return ResponseTemplate::new(400).set_body_json(error);
        }
        let summary = system_of(&body).starts_with(SUMMARY_PREFIX);
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        if self.wire == Wire::OpenAi && last.is_some_and(|m| m["content"] == READ_BIG) {
            let call = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "delta": {"role": "assistant",
                "tool_calls": [{"index": 0, "id": "call_big", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\": \"big.txt\"}"}}]}}]});
            return ResponseTemplate::new(200).set_body_raw(
                format!("data: {call}\n\ndata: [DONE]\n\n"),
                "text/event-stream",
            );
        }
        let (text, finish) = if summary {
            ("Goal: bees. Facts: three hives.", self.summary_finish)
        } else {
            ("ok", "stop")
        };
        let sse = match self.wire {
            Wire::OpenAi => {
                let chunk = |delta: Value, finish: Option<&str>| {
                    format!(
                        "data: {}\n\n",
                        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                    )
                };
                format!(
                    "{}{}data: {}\n\ndata: [DONE]\n\n",
                    chunk(json!({"role": "assistant", "content": text}), None),
                    chunk(json!({}), Some(finish)),
                    json!({"choices": [], "usage": {"prompt_tokens": tokens, "completion_tokens": 3,
                           "prompt_tokens_details": {"cached_tokens": tokens.saturating_sub(1)}}})
                )
            }
            Wire::Anthropic => {
                let stop = if finish == "length" {
                    "max_tokens"
                } else {
                    "end_turn"
                };
                format!(
                    "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
                    json!({"type": "message_start", "message": {"usage": {"cache_read_input_tokens": tokens.saturating_sub(1), "input_tokens": 1, "output_tokens": 0}}}),
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
                    json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 3}}),
                )
            }
        };
        ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream")
    }
}

pub(super) struct Session {
    pub(super) server: MockServer,
    pub(super) commands: UnboundedSender<UserCommand>,
    pub(super) events: UnboundedReceiver<AgentEvent>,
    pub(super) mirror: HistoryMirror,
    pub(super) ws: tempfile::TempDir,
}

pub(super) async fn session(
    wire: Wire,
    summary_finish: &'static str,
    window: Option<u64>,
) -> Session {
    session_with(wire, summary_finish, window, PipelineConfig::default()).await
}

pub(super) async fn session_with(
    wire: Wire,
    summary_finish: &'static str,
    window: Option<u64>,
    config: PipelineConfig,
) -> Session {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Stub {
            wire,
            summary_finish,
        })
        .mount(&server)
        .await;
    let no_retry = RetryPolicy::no_retries();
    let model: Arc<dyn Model> = match wire {
        Wire::OpenAi => Arc::new(
            OpenAiModel::new("smollm2")
                .unwrap()
                .with_base_url(format!("{}/v1", server.uri()))
                .with_retry(no_retry),
        ),
        Wire::Anthropic => Arc::new(
            AnthropicModel::new(ApiKey::new("local"), "smollm2")
                .unwrap()
                .with_base_url(server.uri())
                .with_retry(no_retry),
        ),
    };
    let ws = tempfile::tempdir().unwrap();
    let mut setup = AgentSetup::new(model, Workspace::new(ws.path()).unwrap(), config);
    setup.context_window_tokens = window;
    setup.clock = || 1_700_000_000;
    let (commands, events, _handle) = spawn(setup);
    Session {
        server,
        commands,
        events,
        mirror: HistoryMirror::default(),
        ws,
    }
}

impl Session {
    pub(super) async fn turn(&mut self, prompt: &str) -> Vec<AgentEvent> {
        self.commands
            .send(UserCommand::Submit(prompt.into()))
            .unwrap();
        let seen = until_done(&mut self.events, STEP).await;
        self.mirror.apply_all(&seen);
        seen
    }

    /// `/compact`: a compaction the user asked for ends like a turn, with `TurnDone`
    /// (`compacted` when it worked). The events up to it; the mirror is not updated.
    pub(super) async fn compact(&mut self, focus: Option<String>) -> Vec<AgentEvent> {
        self.commands.send(UserCommand::Compact { focus }).unwrap();
        until(&mut self.events, STEP, |e| {
            matches!(e, AgentEvent::TurnDone { .. })
        })
        .await
    }

    pub(super) async fn bodies(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    }

    pub(super) async fn summary_bodies(&self) -> Vec<Value> {
        self.bodies()
            .await
            .into_iter()
            .filter(|b| system_of(b).starts_with(SUMMARY_PREFIX))
            .collect()
    }
}

pub(super) fn errors(events: &[AgentEvent]) -> Vec<(ErrorKind, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { kind, message } => Some((*kind, message.clone())),
            _ => None,
        })
        .collect()
}

pub(super) fn report_of(events: &[AgentEvent], stage: Stage) -> Option<StageReport> {
    events.iter().find_map(|e| match e {
        AgentEvent::StageRan { report, .. } if report.stage == stage && report.changed => {
            Some(report.clone())
        }
        _ => None,
    })
}

/// The summary input the agent may send for `WINDOW`: what `fit_window` promises.
pub(super) fn input_chars_for_window() -> usize {
    let window = WINDOW as usize;
    let reserve = window / 4;
    let instructions = SUMMARY_SYSTEM
        .chars()
        .count()
        .div_ceil(SUMMARY_CHARS_PER_TOKEN);
    (window - SUMMARY_OVERHEAD_TOKENS - instructions - reserve) * SUMMARY_CHARS_PER_TOKEN
}

pub(super) fn summary_input(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap().to_string()
}

pub(super) fn output_limit(body: &Value) -> u64 {
    body["max_tokens"].as_u64().unwrap()
}
