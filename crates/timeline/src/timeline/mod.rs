//! The model-call timeline: every request a session sent, what the pipeline did before
//! each one, and where each message went.
//!
//! A `Timeline` is built from a stream of facts (a message appended, a stage ran, a request
//! sent, usage reported) that either the run's facts (`Timeline::on_fact`) or a replay
//! of a recorded session (`Timeline::from_replay`) supply, so the workbench, `ctxlab export`
//! and later views (a comparison of strategies, imported sessions) share one model. Rows are
//! followed through each stage by the stage's own report (`lineage`), so every change
//! between two calls is labelled with the stage that made it. Unchanged messages are shared
//! (`Arc`) between calls: a call costs what changed, not a copy of the history.
//!
//! It knows messages and stage reports; it never draws, never touches a terminal and never
//! writes a file (`html` renders a page as a string; the caller writes it).

pub mod branch;
pub mod breakdown;
pub mod diff;
mod events;
pub mod exact;
pub mod forgot_inputs;
pub mod html;
mod html_cap;
mod html_escape;
mod html_exact;
mod html_forgot;
mod html_recorded;
pub mod label;
pub mod limits;
pub mod lineage;
pub mod recorded;
mod svg;
mod svg_place;
mod svg_scale;
mod svg_stack;
#[cfg(test)]
mod svg_tests;

use std::ops::Range;
use std::sync::Arc;

use crate::compact::{SizeUnit, Stage, StageReport};
use crate::message::{Message, Role, ToolSpec};
use crate::provider::{ModelRequest, SentRequest};
use lineage::{RowEffect, RowFrom};

pub use diff::{DiffOp, DiffRow, DiffSide, Fold, fold, fold_by};
pub use exact::RequestBody;

/// Where a timeline's facts came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A live agent: each call holds the body the model received (`ModelCall::body`).
    Live,
    /// A replay of a recorded session: the pipeline ran again on its messages; the system
    /// prompt and the tools were not recorded.
    Replay { name: String },
}

/// A stage step's id: the run's fold hands it out (`crate::run::Run::on_event`), and the
/// step sits at that index of `Timeline::steps` for the timeline's whole life.
pub use crate::run::StepId;

/// One stage's effect on one row, with where and when it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The model call the stage ran before (1-based).
    pub call: usize,
    /// The stage step; None for a replacement outside a stage.
    pub step: Option<StepId>,
    pub stage: Option<Stage>,
    pub effect: RowEffect,
}

/// A message of a request and where it came from since the previous request.
#[derive(Debug, Clone)]
pub struct CallRow {
    pub message: Arc<Message>,
    /// Its index in the previous request; None when it is new since then.
    pub prev: Option<usize>,
    /// Its index in `Timeline::session` when it descends from an appended message.
    pub session: Option<usize>,
    /// What stages did to it since the previous request (empty: unchanged or appended).
    pub touches: Vec<Touch>,
}

/// A row that was in the previous request (or appended since) and is not in this one.
#[derive(Debug, Clone)]
pub struct GoneRow {
    pub message: Arc<Message>,
    /// Its index in the previous request; None when it was appended after it.
    pub prev: Option<usize>,
    pub session: Option<usize>,
    /// The last touch is the removal.
    pub touches: Vec<Touch>,
}

/// How a call ended, as far as the facts tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// No answer yet (or the facts stopped).
    Pending,
    Answered,
    /// The API said the prompt is too long; reactive_compact ran next.
    PromptTooLong,
}

/// One request to the model (summary requests are not calls: they belong to their stage).
#[derive(Debug, Clone)]
pub struct ModelCall {
    /// 1-based.
    pub number: usize,
    /// The history before the pipeline ran for this call.
    pub size_before: usize,
    pub messages_before: usize,
    /// The request's messages (`estimate_size`).
    pub size_after: usize,
    /// The stages that ran before it: a range of `Timeline::steps`.
    pub steps: Range<usize>,
    /// None when the source did not record it (a replay).
    pub system: Option<Arc<str>>,
    /// Empty when not recorded.
    pub tools: Arc<[ToolSpec]>,
    pub max_tokens: Option<u32>,
    /// The request's messages, in order, with their lineage.
    pub rows: Vec<CallRow>,
    pub gone: Vec<GoneRow>,
    /// The API's count of input tokens, when it reported one.
    pub input_tokens: Option<u64>,
    /// A replay: the live run's API input tokens for the same answer, as the file recorded
    /// them (not this request's count; `recorded`).
    pub live_input_tokens: Option<u64>,
    pub outcome: CallOutcome,
    /// The API's words when it refused the call as too long (its reason, for every view
    /// and the export).
    pub refusal: Option<String>,
    /// The body as the provider encoded and sent it (`exact_request` reads it); None when
    /// the source did not record it (a replay).
    pub body: Option<Arc<SentRequest>>,
}

impl ModelCall {
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.rows.iter().map(|r| r.message.as_ref())
    }

    /// ctxlab's record of the request (`system`, `tools`, `max_tokens`, `messages`, the
    /// Anthropic-like shape the history is kept in); fields the source did not record are
    /// left out. What the model received is `exact_request`.
    pub fn request_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        if let Some(system) = &self.system {
            out.insert("system".into(), system.as_ref().into());
        }
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .iter()
                .map(|t| serde_json::to_value(t).unwrap_or_default())
                .collect();
            out.insert("tools".into(), serde_json::Value::Array(tools));
        }
        if let Some(max) = self.max_tokens {
            out.insert("max_tokens".into(), max.into());
        }
        let messages = self.rows.iter().map(|r| r.message.to_value()).collect();
        out.insert("messages".into(), serde_json::Value::Array(messages));
        serde_json::Value::Object(out)
    }

    /// The letters of the stages that changed something before this call, in order.
    pub fn letters(&self, steps: &[StageStep]) -> String {
        steps[self.steps.clone()]
            .iter()
            .filter(|s| s.report.changed)
            .map(|s| lineage::stage_letter(s.report.stage))
            .collect()
    }
}

/// One stage that ran, changed or not.
#[derive(Debug, Clone)]
pub struct StageStep {
    /// The call it ran before (1-based; `calls.len() + 1` for stages after the last call).
    pub call: usize,
    pub report: StageReport,
    /// The rows around it, when it changed the history.
    pub change: Option<StepChange>,
}

/// The history before and after a stage that changed it.
#[derive(Debug, Clone)]
pub struct StepChange {
    pub before: Vec<Arc<Message>>,
    pub after: Vec<Arc<Message>>,
    /// Where each row after comes from.
    pub map: Vec<RowFrom>,
}

/// A message as it was appended, and every stage that touched it or removed it since.
#[derive(Debug, Clone)]
pub struct SessionEntry {
    pub message: Arc<Message>,
    /// The call it was appended before (1-based).
    pub before_call: usize,
    pub touches: Vec<Touch>,
}

impl SessionEntry {
    /// The touch that took it out of the context, if one did.
    pub fn removal(&self) -> Option<&Touch> {
        self.touches.iter().find(|t| {
            matches!(
                t.effect,
                RowEffect::Snipped { .. } | RowEffect::Summarized { .. } | RowEffect::Replaced
            )
        })
    }
}

/// A row of the history being built between two requests.
#[derive(Debug, Clone)]
struct Row {
    message: Arc<Message>,
    prev: Option<usize>,
    session: Option<usize>,
    touches: Vec<Touch>,
}

/// The whole model: calls, stage steps, session entries.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub source: Source,
    /// The limit in the strategy's unit (`unit`); the calls' sizes are in `str()` chars,
    /// so a plot draws `limit_chars()`.
    pub context_limit: usize,
    /// What `context_limit` counts: tokens under s06, JSON chars under s08-latest.
    pub unit: SizeUnit,
    pub calls: Vec<ModelCall>,
    pub steps: Vec<StageStep>,
    pub session: Vec<SessionEntry>,
    rows: Vec<Row>,
    gone: Vec<GoneRow>,
    /// Size and length of the history when the first stage since the last request ran.
    started: Option<(usize, usize)>,
    system: Option<Arc<str>>,
    tools: Arc<[ToolSpec]>,
    /// Bytes of the bodies kept as sent, and the first call that may still keep its own
    /// (`exact`).
    kept_body_bytes: usize,
    oldest_kept_body: usize,
    /// Most bytes of one kept body, and of all together (`exact::KEPT_BODY_BYTES`, ...).
    body_budget: (usize, usize),
    /// A replay of a session file: what it recorded of its live run (`recorded`).
    live_run: Option<Box<recorded::LiveRun>>,
    /// The settings each call ran under, oldest first (`limits`): never empty.
    limits: Vec<limits::LimitSpan>,
}

impl Timeline {
    pub fn new(source: Source, context_limit: usize) -> Timeline {
        Timeline {
            source,
            context_limit,
            unit: SizeUnit::Chars,
            calls: Vec::new(),
            steps: Vec::new(),
            session: Vec::new(),
            rows: Vec::new(),
            gone: Vec::new(),
            started: None,
            system: None,
            tools: Arc::from(Vec::new()),
            kept_body_bytes: 0,
            oldest_kept_body: 0,
            body_budget: (exact::KEPT_BODY_BYTES, exact::KEPT_BODIES_BYTES),
            live_run: None,
            limits: vec![limits::LimitSpan {
                from_call: 1,
                strategy: None,
                context_limit,
                unit: SizeUnit::Chars,
            }],
        }
    }

    /// The limit in force now on the calls' scale (`str()` chars): s06's 50,000 tokens
    /// are 200,000 chars, as the gauge converts them (docs/strategies.md).
    pub fn limit_chars(&self) -> usize {
        self.limit_now().limit_chars()
    }

    /// The limit in force now as a sentence: `50,000 tokens = 200,000 chars`, or `50,000
    /// chars` (each call's own: `limit_of`, `limits_text`).
    pub fn limit_text(&self) -> String {
        self.limit_now().limit_text()
    }

    fn limit_now(&self) -> limits::LimitSpan {
        limits::LimitSpan {
            from_call: self.calls.len() + 1,
            strategy: self.limits.last().and_then(|s| s.strategy),
            context_limit: self.context_limit,
            unit: self.unit,
        }
    }

    /// The history as it stands now (after the last fact), oldest first.
    pub fn current(&self) -> impl Iterator<Item = &Message> {
        self.rows.iter().map(|r| r.message.as_ref())
    }

    /// The call numbered `number` (1-based).
    pub fn call(&self, number: usize) -> Option<&ModelCall> {
        number.checked_sub(1).and_then(|i| self.calls.get(i))
    }

    /// The call the next fact belongs to.
    fn next_call(&self) -> usize {
        self.calls.len() + 1
    }

    /// A message was appended to the history.
    pub fn appended(&mut self, message: Message) {
        if message.role_kind() == Role::Assistant
            && let Some(c) = self.calls.last_mut()
            && c.outcome == CallOutcome::Pending
        {
            c.outcome = CallOutcome::Answered;
        }
        let message = Arc::new(message);
        self.session.push(SessionEntry {
            message: Arc::clone(&message),
            before_call: self.next_call(),
            touches: Vec::new(),
        });
        self.rows.push(Row {
            message,
            prev: None,
            session: Some(self.session.len() - 1),
            touches: Vec::new(),
        });
    }

    /// The step `id` names.
    pub fn step(&self, id: StepId) -> Option<&StageStep> {
        self.steps.get(id.index())
    }

    /// Every step with its id, oldest first.
    pub fn steps_by_id(&self) -> impl Iterator<Item = (StepId, &StageStep)> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| (StepId::new(i), s))
    }

    /// A stage ran; `after` is the history after it when it changed something. Returns
    /// the id of the step it became.
    pub fn stage_ran(&mut self, report: StageReport, after: Option<&[Message]>) -> StepId {
        // Measured like `size_after` (chars of Python `str()`), not in the report's unit
        // (s06 reports tokens, s08-latest JSON chars), so before and sent compare.
        if self.started.is_none() {
            self.started = Some((rows_size(&self.rows), self.rows.len()));
        }
        if report.stage == Stage::ReactiveCompact
            && let Some(c) = self.calls.last_mut()
            && c.outcome == CallOutcome::Pending
        {
            c.outcome = CallOutcome::PromptTooLong;
        }
        let id = StepId::new(self.steps.len());
        let call = self.next_call();
        let change = match after {
            Some(after) if report.changed => {
                let map = lineage::rows_through(Some(&report), &self.rows, row_message, after);
                Some(self.apply(&map.rows, after, Some((id, &report))))
            }
            _ => None,
        };
        self.steps.push(StageStep {
            call,
            report,
            change,
        });
        id
    }

    /// The history was replaced wholesale; nothing changes when it equals the current one
    /// (the agent reports a summary's result both as a stage and as a replacement).
    pub fn history_replaced(&mut self, history: &[Message]) {
        if self.holds(history) {
            return;
        }
        let map = lineage::rows_through(None, &self.rows, row_message, history);
        self.apply(&map.rows, history, None);
    }

    /// A model call's request went out (a summary request is no call: the run's facts name
    /// it apart). `request` is the exact request when the source has it; without it (a
    /// replay) the request is the current history.
    pub fn request_sent(&mut self, request: Option<&ModelRequest>) {
        let mut system = None;
        let mut max_tokens = None;
        if let Some(req) = request {
            if !self.holds(&req.messages) {
                self.history_replaced(&req.messages);
            }
            if self.system.as_deref() != Some(req.system.as_str()) {
                self.system = Some(Arc::from(req.system.as_str()));
            }
            if *self.tools != *req.tools {
                self.tools = Arc::from(req.tools.clone());
            }
            system = self.system.clone();
            max_tokens = Some(req.max_tokens);
        }
        let size_after = rows_size(&self.rows);
        let (size_before, messages_before) =
            self.started.take().unwrap_or((size_after, self.rows.len()));
        let start = self.calls.last().map_or(0, |c| c.steps.end);
        let rows: Vec<CallRow> = self
            .rows
            .iter_mut()
            .enumerate()
            .map(|(j, r)| {
                let row = CallRow {
                    message: Arc::clone(&r.message),
                    prev: r.prev,
                    session: r.session,
                    touches: std::mem::take(&mut r.touches),
                };
                r.prev = Some(j);
                row
            })
            .collect();
        let tools = if request.is_some() {
            Arc::clone(&self.tools)
        } else {
            Arc::from(Vec::new())
        };
        self.calls.push(ModelCall {
            number: self.calls.len() + 1,
            size_before,
            messages_before,
            size_after,
            steps: start..self.steps.len(),
            system,
            tools,
            max_tokens,
            rows,
            gone: std::mem::take(&mut self.gone),
            input_tokens: None,
            live_input_tokens: None,
            outcome: CallOutcome::Pending,
            refusal: None,
            body: None,
        });
    }

    /// The API refused call `number` as too long. Every refusal marks its call, whether a
    /// reactive compaction follows or not (an error, a reduction without a model); a refused
    /// summary request is no call of the timeline, so it never comes here.
    pub fn refused(&mut self, number: usize, words: &str) {
        if let Some(c) = self.call_mut(number)
            && c.outcome == CallOutcome::Pending
        {
            c.outcome = CallOutcome::PromptTooLong;
            c.refusal = Some(words.to_string());
        }
    }

    /// The API reported usage for call `number`.
    pub fn usage(&mut self, number: usize, input_tokens: Option<u64>) {
        if let (Some(t), Some(c)) = (input_tokens, self.call_mut(number)) {
            c.input_tokens = Some(t);
        }
    }

    fn call_mut(&mut self, number: usize) -> Option<&mut ModelCall> {
        number.checked_sub(1).and_then(|i| self.calls.get_mut(i))
    }

    /// Whether the current rows are `history`, message for message.
    fn holds(&self, history: &[Message]) -> bool {
        lineage::same_history(&self.rows, row_message, history)
    }

    /// Moves the working rows through one change; returns the rows around it.
    fn apply(
        &mut self,
        map: &[RowFrom],
        after: &[Message],
        stage: Option<(StepId, &StageReport)>,
    ) -> StepChange {
        let call = self.next_call();
        let touch = |effect: RowEffect| Touch {
            call,
            step: stage.map(|(i, _)| i),
            stage: stage.map(|(_, r)| r.stage),
            effect,
        };
        let before: Vec<Arc<Message>> = self.rows.iter().map(|r| Arc::clone(&r.message)).collect();
        let mut old: Vec<Option<Row>> = std::mem::take(&mut self.rows)
            .into_iter()
            .map(Some)
            .collect();
        let marker = map
            .iter()
            .position(|f| *f == RowFrom::New)
            .and_then(|j| after.get(j))
            .and_then(|m| m.text())
            .map(str::to_string);
        let mut rows = Vec::with_capacity(map.len());
        for (j, from) in map.iter().enumerate() {
            let row = match *from {
                RowFrom::Kept(i) => old.get_mut(i).and_then(Option::take),
                RowFrom::Changed(i) => old.get_mut(i).and_then(Option::take).map(|mut r| {
                    let effects = match stage {
                        Some((_, report)) => lineage::in_place_effects(report, i),
                        None => vec![RowEffect::Replaced],
                    };
                    for e in effects {
                        let t = touch(e);
                        if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                            s.touches.push(t.clone());
                        }
                        r.touches.push(t);
                    }
                    r.message = Arc::new(after[j].clone());
                    r
                }),
                RowFrom::New => None,
            };
            rows.push(row.unwrap_or_else(|| Row {
                message: Arc::new(after[j].clone()),
                prev: None,
                session: None,
                touches: vec![touch(match stage {
                    Some((_, report)) => lineage::new_row_effect(report),
                    None => RowEffect::Replaced,
                })],
            }));
        }
        let removal = match stage {
            Some((_, report)) => lineage::removal_effect(report, marker.as_deref()),
            None => RowEffect::Replaced,
        };
        for mut r in old.into_iter().flatten() {
            let t = touch(removal.clone());
            if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                s.touches.push(t.clone());
            }
            r.touches.push(t);
            self.gone.push(GoneRow {
                message: r.message,
                prev: r.prev,
                session: r.session,
                touches: r.touches,
            });
        }
        self.rows = rows;
        StepChange {
            before,
            after: self.rows.iter().map(|r| Arc::clone(&r.message)).collect(),
            map: map.to_vec(),
        }
    }
}

/// `estimate_size` of the rows, from each message's cached size.
fn rows_size(rows: &[Row]) -> usize {
    let items: usize = rows.iter().map(|r| r.message.estimate_size()).sum();
    2 + items + 2 * rows.len().saturating_sub(1)
}

/// A working row's message (for `lineage::rows_through`).
fn row_message(row: &Row) -> &Message {
    &row.message
}
