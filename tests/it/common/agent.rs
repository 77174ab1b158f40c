//! Helpers shared by the agent tests: a recording `Model` wrapper, an event collector with
//! timeouts (a hang fails the test instead of blocking CI), and the tool-pair check.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ctxlab::agent::{AgentEvent, UserCommand};
use ctxlab::message::Message;
use ctxlab::provider::{Model, ModelRequest, ModelResponse, ProviderError, StreamEvent};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// How the summary request's system text starts.
pub const SUMMARY_PREFIX: &str = "Create a compact factual state summary";

/// A pinned clock for transcript names.
pub fn pinned_clock() -> u64 {
    1_700_000_000
}

/// Wraps a model and keeps every request it is sent, in order.
pub struct RecordingModel {
    pub inner: Arc<dyn Model>,
    pub requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl RecordingModel {
    pub fn new(inner: Arc<dyn Model>) -> (RecordingModel, Arc<Mutex<Vec<ModelRequest>>>) {
        let requests = Arc::new(Mutex::new(Vec::new()));
        (
            RecordingModel {
                inner,
                requests: Arc::clone(&requests),
            },
            requests,
        )
    }
}

#[async_trait]
impl Model for RecordingModel {
    fn describe(&self) -> String {
        format!("recording {}", self.inner.describe())
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        self.requests.lock().unwrap().push(req.clone());
        self.inner.stream(req, events).await
    }
}

pub fn is_summary_request(req: &ModelRequest) -> bool {
    req.system.starts_with(SUMMARY_PREFIX)
}

/// Receives events until (and including) the next `TurnDone`, failing after `limit`.
pub async fn until_done(
    events: &mut UnboundedReceiver<AgentEvent>,
    limit: Duration,
) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let ev = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no TurnDone within {limit:?}; events so far: {seen:#?}"))
            .expect("the agent stopped before TurnDone");
        let done = matches!(ev, AgentEvent::TurnDone { .. });
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

/// Receives events until one matches `pred` (returned with everything before it).
pub async fn until<F: Fn(&AgentEvent) -> bool>(
    events: &mut UnboundedReceiver<AgentEvent>,
    limit: Duration,
    pred: F,
) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let ev = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("the awaited event did not come within {limit:?}; events so far: {seen:#?}")
            })
            .expect("the agent stopped");
        let hit = pred(&ev);
        seen.push(ev);
        if hit {
            return seen;
        }
    }
}

pub fn stop_reason(events: &[AgentEvent]) -> Option<&str> {
    events.iter().rev().find_map(|e| match e {
        AgentEvent::TurnDone { stop_reason } => Some(stop_reason.as_str()),
        _ => None,
    })
}

/// Keeps a copy of the agent's history from its events, the way a front end would.
#[derive(Debug, Default)]
pub struct HistoryMirror {
    pub messages: Vec<Message>,
}

impl HistoryMirror {
    pub fn apply(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::MessageAppended { message } => self.messages.push(message.clone()),
            AgentEvent::StageRan {
                history: Some(h), ..
            } => self.messages = h.as_ref().clone(),
            AgentEvent::HistoryReplaced { history, .. } => self.messages = history.as_ref().clone(),
            _ => {}
        }
    }

    pub fn apply_all(&mut self, evs: &[AgentEvent]) {
        for ev in evs {
            self.apply(ev);
        }
    }
}

fn ids<'a>(blocks: impl Iterator<Item = &'a Value>, key: &str) -> Vec<String> {
    blocks
        .filter_map(|b| b.get(key).and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Checks a list of messages for orphaned tool pairs (the library's own check).
pub fn check_tool_pairs(messages: &[Message]) -> Result<(), String> {
    match ctxlab::message::tool_pairing_error(messages) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Sends a command, failing the test if the agent is gone.
pub fn send(commands: &UnboundedSender<UserCommand>, cmd: UserCommand) {
    commands.send(cmd).expect("the agent is gone");
}

/// The text of every tool_result block in a message, by tool_use_id.
pub fn result_block<'a>(m: &'a Message, id: &str) -> Option<&'a Value> {
    m.tool_results()
        .find(|b| b.get("tool_use_id").and_then(Value::as_str) == Some(id))
}

pub fn result_text(block: &Value) -> String {
    match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
