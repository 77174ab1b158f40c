//! The scripted model: plays a recorded scenario, with no key and no network.
//!
//! Owns the scenario format (`assets/scenarios/<name>.json`, data, not code), loading it by
//! name (from an assets folder, else from the copies embedded in the binary) and playing it
//! the way a real API would answer: the next turn for each call, a typed `ContextTooLong`
//! (without advancing) when the request is over the scenario's simulated window, and a
//! deterministic extractive summary for a request of kind `RequestKind::Summary` (the agent
//! says what it sends; the scripted model never guesses it from the prompt's words). It must not look at what the
//! tools returned or adapt to the conversation: a scenario is a fixed script.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::{
    Model, ModelRequest, ModelResponse, ProviderError, RequestKind, StreamEvent, Usage, emit,
};
use crate::compact::estimate_size;
use crate::compact::extractive::extractive_summary_from_request;
use crate::message::{BlockKind, block};
use crate::util::group_digits;

/// The scenario played when none is chosen.
pub const DEFAULT_SCENARIO: &str = "tour";

/// Scenarios compiled into the binary, so it works from any directory.
const EMBEDDED_SCENARIOS: &[(&str, &str)] = &[(
    "tour",
    include_str!("../../../../../assets/scenarios/tour.json"),
)];

/// Characters per streamed text delta: small enough to look like a model typing.
const DELTA_CHARS: usize = 12;

/// A rough chars-per-token ratio for the simulated usage report.
const CHARS_PER_TOKEN: usize = 4;

/// A scripted session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The user prompt the scenario was written for (the UI can offer it as the first input).
    pub request: String,
    /// The simulated context window: a request whose `estimate_size` of the messages plus the
    /// system text's length is above this gets `ContextTooLong`.
    pub context_window_chars: usize,
    pub turns: Vec<ScenarioTurn>,
}

/// One assistant answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioTurn {
    /// For readers of the file (what this turn is for); never sent anywhere.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Anthropic blocks: `text` and `tool_use` (fixed ids, e.g. `toolu_tour_001`).
    pub content: Vec<Value>,
    pub stop_reason: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScenarioError {
    #[error("no scenario named {name:?} (looked in {searched} and the built-in scenarios)")]
    NotFound { name: String, searched: String },
    #[error("cannot read scenario {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("scenario {name:?} is not valid JSON for a scenario: {message}")]
    Parse { name: String, message: String },
    #[error("scenario {name:?}, turn {turn}: {message}")]
    Invalid {
        name: String,
        turn: usize,
        message: String,
    },
}

impl Scenario {
    /// Names of the scenarios compiled into the binary.
    pub fn embedded_names() -> impl Iterator<Item = &'static str> {
        EMBEDDED_SCENARIOS.iter().map(|(name, _)| *name)
    }

    /// A scenario compiled into the binary.
    pub fn embedded(name: &str) -> Result<Scenario, ScenarioError> {
        let (_, text) = EMBEDDED_SCENARIOS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| ScenarioError::NotFound {
                name: name.to_string(),
                searched: "nothing else".to_string(),
            })?;
        Scenario::from_json(name, text)
    }

    /// `<assets_dir>/scenarios/<name>.json` when it exists (so a scenario can be edited
    /// without rebuilding), else the embedded copy.
    pub fn load(name: &str, assets_dir: Option<&Path>) -> Result<Scenario, ScenarioError> {
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if let Some(dir) = assets_dir.filter(|_| valid_name) {
            let path = dir.join("scenarios").join(format!("{name}.json"));
            if path.is_file() {
                return Scenario::from_file(&path);
            }
        }
        Scenario::embedded(name).map_err(|_| ScenarioError::NotFound {
            name: name.to_string(),
            searched: assets_dir
                .map(|d| d.join("scenarios").display().to_string())
                .unwrap_or_else(|| "no assets folder".to_string()),
        })
    }

    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Scenario::from_json(&name, &text)
    }

    /// Parses and checks a scenario: every turn has blocks, only `text` and `tool_use`
    /// blocks, unique tool ids, and `stop_reason` `tool_use` exactly when it calls a tool
    /// (otherwise the agent would stop with calls unanswered, or wait for calls that never
    /// come).
    pub fn from_json(name: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text).map_err(|e| ScenarioError::Parse {
            name: name.to_string(),
            message: e.to_string(),
        })?;
        let invalid = |turn: usize, message: String| ScenarioError::Invalid {
            name: scenario.name.clone(),
            turn,
            message,
        };
        let mut ids = std::collections::HashSet::new();
        for (i, turn) in scenario.turns.iter().enumerate() {
            if turn.content.is_empty() {
                return Err(invalid(i, "no content blocks".into()));
            }
            let mut calls = 0;
            for b in &turn.content {
                match BlockKind::of(b) {
                    BlockKind::Text if b.get("text").is_some_and(Value::is_string) => {}
                    BlockKind::ToolUse => {
                        let id = b.get("id").and_then(Value::as_str).unwrap_or("");
                        let named = b.get("name").is_some_and(Value::is_string);
                        let input_ok = b.get("input").is_some_and(Value::is_object);
                        if id.is_empty() || !named || !input_ok {
                            return Err(invalid(
                                i,
                                "a tool_use needs an id, a name and an input object".into(),
                            ));
                        }
                        if !ids.insert(id.to_string()) {
                            return Err(invalid(i, format!("tool id {id} is used twice")));
                        }
                        calls += 1;
                    }
                    _ => return Err(invalid(i, format!("unsupported block {b}"))),
                }
            }
            if (calls > 0) != (turn.stop_reason == "tool_use") {
                return Err(invalid(
                    i,
                    "stop_reason must be \"tool_use\" exactly when the turn calls tools".into(),
                ));
            }
        }
        Ok(scenario)
    }
}

/// Plays a `Scenario`. Each successful non-summary call consumes one turn.
#[derive(Debug)]
pub struct ScriptedModel {
    scenario: Scenario,
    next_turn: AtomicUsize,
    /// The pause after each streamed delta, in nanoseconds: atomic so `/pace` changes it
    /// while a call streams (the model is shared with the agent task).
    pace_nanos: AtomicU64,
}

fn nanos(pace: Duration) -> u64 {
    u64::try_from(pace.as_nanos()).unwrap_or(u64::MAX)
}

impl ScriptedModel {
    pub fn new(scenario: Scenario) -> ScriptedModel {
        ScriptedModel {
            scenario,
            next_turn: AtomicUsize::new(0),
            pace_nanos: AtomicU64::new(nanos(Duration::from_millis(15))),
        }
    }

    /// The pause after each streamed delta (`Duration::ZERO` in tests).
    pub fn with_pace(self, pace: Duration) -> ScriptedModel {
        self.pace_nanos.store(nanos(pace), Ordering::Relaxed);
        self
    }

    /// The pause after each streamed delta, now.
    pub fn pace(&self) -> Duration {
        Duration::from_nanos(self.pace_nanos.load(Ordering::Relaxed))
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// How many turns have been answered so far.
    pub fn turns_played(&self) -> usize {
        self.next_turn.load(Ordering::SeqCst)
    }

    /// What the next non-summary call answers (the closing text once the turns run out).
    fn turn(&self, index: usize) -> (Vec<Value>, String) {
        match self.scenario.turns.get(index) {
            Some(turn) => (turn.content.clone(), turn.stop_reason.clone()),
            None => (
                vec![block::text(format!(
                    "The scripted scenario \"{}\" is over: it has no more turns. Ask something \
                     else to see the closing text again, or start ctxlab with a real provider.",
                    self.scenario.name
                ))],
                "end_turn".to_string(),
            ),
        }
    }

    async fn pause(&self) {
        let pace = self.pace();
        if !pace.is_zero() {
            tokio::time::sleep(pace).await;
        }
    }

    async fn play(
        &self,
        content: Vec<Value>,
        stop_reason: String,
        input_chars: usize,
        events: &UnboundedSender<StreamEvent>,
    ) -> ModelResponse {
        let mut usage = Usage {
            input_tokens: Some((input_chars / CHARS_PER_TOKEN) as u64),
            output_tokens: None,
            cached_input_tokens: None,
        };
        emit(events, StreamEvent::Usage(usage));
        let mut output_chars = 0;
        for b in &content {
            match BlockKind::of(b) {
                BlockKind::Text => {
                    let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                    let chars: Vec<char> = text.chars().collect();
                    output_chars += chars.len();
                    for piece in chars.chunks(DELTA_CHARS) {
                        emit(events, StreamEvent::TextDelta(piece.iter().collect()));
                        self.pause().await;
                    }
                }
                BlockKind::ToolUse => {
                    let field = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
                    output_chars += b.get("input").map_or(0, |i| i.to_string().len());
                    emit(
                        events,
                        StreamEvent::ToolUseStarted {
                            id: field("id").to_string(),
                            name: field("name").to_string(),
                        },
                    );
                    self.pause().await;
                }
                _ => {}
            }
        }
        usage.output_tokens = Some((output_chars / CHARS_PER_TOKEN).max(1) as u64);
        emit(events, StreamEvent::Usage(usage));
        ModelResponse {
            content,
            stop_reason: Some(stop_reason),
            usage,
        }
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn describe(&self) -> String {
        format!("scripted {}", self.scenario.name)
    }

    fn set_pace(&self, pace: Duration) -> bool {
        self.pace_nanos.store(nanos(pace), Ordering::Relaxed);
        true
    }

    fn resume_at(&self, answered: usize) -> bool {
        self.next_turn.store(answered, Ordering::SeqCst);
        true
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let history_chars = estimate_size(&req.messages);
        let system_chars = req.system.chars().count();
        let input_chars = history_chars + system_chars;
        // The summarizer's input is cut at 80,000 chars, more than a small simulated window:
        // a real summarizer call would go to a model with room for it, so no window here.
        if req.kind == RequestKind::Summary {
            let input: Vec<String> = req.messages.iter().map(|m| m.joined_text()).collect();
            let summary = extractive_summary_from_request(&input.join("\n"));
            let content = vec![block::text(summary)];
            return Ok(self
                .play(content, "end_turn".into(), input_chars, events)
                .await);
        }
        let window = self.scenario.context_window_chars;
        if input_chars > window {
            // The scripted window is in chars, not tokens: no token numbers to give. It
            // counts the system prompt too, so its number is more than the history's size
            // every front end shows: the words say so.
            return Err(ProviderError::ContextTooLong {
                message: format!(
                    "prompt is too long: {} chars > {} maximum (scripted window: it counts \
                     the system prompt's {} chars as well as the history's {})",
                    group_digits(input_chars),
                    group_digits(window),
                    group_digits(system_chars),
                    group_digits(history_chars)
                ),
                prompt_tokens: None,
                window_tokens: None,
                window_chars: Some(u64::try_from(window).unwrap_or(u64::MAX)),
            });
        }
        // The turn is read now but only consumed once the answer is complete, so a call the
        // caller cancels (drops) mid-stream replays the same turn next time.
        let index = self.next_turn.load(Ordering::SeqCst);
        let (content, stop_reason) = self.turn(index);
        let response = self.play(content, stop_reason, input_chars, events).await;
        self.next_turn.fetch_max(index + 1, Ordering::SeqCst);
        Ok(response)
    }
}
