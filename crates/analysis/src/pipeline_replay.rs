//! The replay loop: what the pipeline would have done to a recorded session, model call by
//! model call (docs/pipeline.md, "Replay"). `ctxlab replay` prints it; the workbench draws
//! it for a saved transcript. One loop serves both, so they cannot disagree.
//!
//! A session's assistant messages mark where model calls happened; before each one the live
//! history goes through the pre-call pipeline exactly as the agent would run it, with the
//! active request taken from the latest user message with string content. The loop calls
//! no model: the summary is a given text, the scripted model's extractive summary, or what
//! a front end's `Summarizer` answers for the stage's summary request (`ctxlab fork` asks
//! the configured model there).
//!
//! A session that ends with user messages (a transcript is saved just before a summary)
//! still has a call to come: `next_call` says what the pipeline would do before it, worked
//! out on a dry-run store, so nothing is written for a call that never happened.
//!
//! Observers see as much as they need: `replay` the call records, `replay_events` also the
//! messages, the histories sent and the files (the `compare` module), `replay_steps` also
//! each stage's history (the timeline).
//!
//! A ctxlab recording also says what the pipeline alone does not decide (`options.recorded`):
//! where the model called the compact tool or the user typed `/compact` (the summarizing
//! stage runs there), where the API refused a request as too long (that call is replayed as
//! refused and the strategy's reactive stage runs after it), and changes of settings. So a
//! replay under the recorded strategy and settings fires the stages the live run fired, at
//! the same calls; an event a strategy cannot follow is listed in `ReplayTotals::not_applied`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compact::extractive::extractive_summary_from_request;
use crate::compact::request::request_in;
use crate::compact::summarize::{PendingCompaction, SummaryRequest};
use crate::compact::{
    CompactTrigger, Pipeline, PipelineConfig, StageReport, Strategy, estimate_size,
};
use crate::message::{Message, Role};
use crate::session::recorded::{RecordedEvent, RecordedKind};
use crate::store::{FileWritten, Store, StoreError};

/// What happened before one model call.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    pub call: usize,
    /// The stages that changed something, in order (sizes in the strategy's unit).
    pub reports: Vec<StageReport>,
    /// The request's size in s08's unit (Python `str()` chars) whatever the strategy, so
    /// strategies compare on one scale.
    pub estimate_size: usize,
    pub messages: usize,
    /// The recording says the API refused this call as too long (its words): no answer
    /// follows it, and the strategy's reactive stage runs before the next call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A recorded event the replay could not follow, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotApplied {
    pub event: RecordedEvent,
    #[serde(serialize_with = "as_words")]
    pub why: NotAppliedWhy,
}

/// Why a recorded event could not be followed under the replay's strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAppliedWhy {
    /// A recorded `/compact` the strategy finds nothing to summarize for.
    NothingToSummarize(Strategy),
    NoReactive(Strategy),
    NoFurtherReactive(Strategy),
    ReactiveFindsNothing(Strategy),
    /// The live run switched strategies, from one the replay does not run.
    OtherSwitch {
        running: Strategy,
        from: Strategy,
        to: Strategy,
    },
}

impl std::fmt::Display for NotAppliedWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAppliedWhy::NothingToSummarize(s) => write!(f, "{s} finds nothing it may summarize"),
            NotAppliedWhy::NoReactive(s) => write!(f, "{s} has no reactive compaction"),
            NotAppliedWhy::NoFurtherReactive(s) => {
                write!(f, "{s} allows no further reactive compaction")
            }
            NotAppliedWhy::ReactiveFindsNothing(s) => {
                write!(f, "{s}'s reactive stage finds nothing it may summarize")
            }
            NotAppliedWhy::OtherSwitch { running, from, to } => write!(
                f,
                "the replay runs {running}; the live run switched from {from} to {to}"
            ),
        }
    }
}

/// `why` in JSON as the words `describe` uses (the output is as it was when it was text).
fn as_words<S: serde::Serializer>(why: &NotAppliedWhy, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(why)
}

impl NotApplied {
    /// `call 30: the API refused the request as too long: not applied (s06 has no reactive
    /// compaction)`, as `ctxlab replay` and the compare view say it.
    pub fn describe(&self) -> String {
        format!("{}: not applied ({})", self.event.describe(), self.why)
    }
}

/// Totals over the whole replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayTotals {
    pub calls: usize,
    pub fired: BTreeMap<&'static str, usize>,
    pub files_written: usize,
    pub final_messages: usize,
    pub final_estimate_size: usize,
    /// When the session ends before a model call (its last message is not the
    /// assistant's): what the pipeline would do before that call. Not counted in the
    /// totals above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_call: Option<CallRecord>,
    /// Recorded events this replay could not follow (another strategy than the live run's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
}

/// What makes a summary from a stage's summary request, when neither a text nor the
/// extractive summary is wanted: a front end's model call (the loop stays synchronous and
/// model-free; the front end blocks on its own call).
#[derive(Clone)]
pub struct Summarizer(pub std::sync::Arc<dyn Fn(&SummaryRequest) -> String + Send + Sync>);

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Summarizer")
    }
}

/// How to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub config: PipelineConfig,
    /// The summary every compaction gets; None: `summarizer`'s, else the extractive summary.
    pub summary_text: Option<String>,
    /// Makes each compaction's summary from its request when no `summary_text` is given.
    pub summarizer: Option<Summarizer>,
    /// The clock used in transcript names.
    pub now_secs: u64,
    /// A ctxlab recording's events, honoured where they happened (empty for other files).
    pub recorded: Vec<RecordedEvent>,
}

/// One step of a replay, for observers that need more than the call records (the
/// reachability accounting of the `compare` module).
#[derive(Debug)]
pub enum ReplayEvent<'a> {
    /// A message of the session entered the live history.
    Entered(&'a Message),
    /// A stage ran before a call, changed or not; `history` is the live history after it.
    Stage {
        report: &'a StageReport,
        history: &'a [Message],
    },
    /// A model call: its record, the exact history sent, and what the accounting needs.
    Call(CallView<'a>),
    /// The session is over: the live history as it ends.
    End(&'a [Message]),
}

/// What a model call looked like, borrowed from the loop.
#[derive(Debug)]
pub struct CallView<'a> {
    pub record: &'a CallRecord,
    /// The history the model is sent.
    pub request: &'a [Message],
    /// When a summary replaced (part of) the history at this call: the history just before
    /// it (after the cheap stages), so an observer can tell summarized from cut.
    pub before_summary: Option<&'a [Message]>,
    /// Every file a stage wrote or reused at this call, changed or not.
    pub files: &'a [FileWritten],
    /// Chars of the summary request (system text and input) when one was made.
    pub summary_input_chars: Option<usize>,
}

/// One fact of a replay, in the order it happens: each stage that ran before a call (with
/// the history after it), the call, and each message as it joins the live history.
#[derive(Debug)]
pub enum ReplayStep<'a> {
    /// A stage ran, changed or not; `history` is the live history after it.
    Stage {
        report: &'a StageReport,
        history: &'a [Message],
    },
    /// A model call happened with `history` as its messages.
    Call {
        record: &'a CallRecord,
        history: &'a [Message],
    },
    /// A message of the session joined the live history.
    Appended(&'a Message),
}

/// Replays `session` on `store`, calling `on_call` after each model call's pipeline.
pub fn replay(
    session: impl IntoIterator<Item = Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_call: impl FnMut(&CallRecord),
) -> Result<ReplayTotals, StoreError> {
    replay_events(session, store, options, |event| {
        if let ReplayEvent::Call(view) = event {
            on_call(view.record);
        }
    })
}

/// `replay_events` seen as the timeline needs it: stages, calls and appended messages.
pub fn replay_steps(
    session: impl IntoIterator<Item = Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_step: impl FnMut(ReplayStep<'_>),
) -> Result<ReplayTotals, StoreError> {
    replay_events(session, store, options, |event| match event {
        ReplayEvent::Entered(m) => on_step(ReplayStep::Appended(m)),
        ReplayEvent::Stage { report, history } => on_step(ReplayStep::Stage { report, history }),
        ReplayEvent::Call(view) => on_step(ReplayStep::Call {
            record: view.record,
            history: view.request,
        }),
        ReplayEvent::End(_) => {}
    })
}

/// The replay loop itself: `replay` with every step reported to `on_event`.
pub fn replay_events(
    session: impl IntoIterator<Item = Message>,
    store: &Store,
    options: &ReplayOptions,
    mut on_event: impl FnMut(ReplayEvent<'_>),
) -> Result<ReplayTotals, StoreError> {
    // Counted transcript ids (s08-latest) keep a replay reproducible.
    let pipeline = Pipeline::new(options.config).with_counter_ids();
    let fired: BTreeMap<&'static str, usize> = pipeline
        .stages()
        .iter()
        .chain([&pipeline.summarizing_stage()])
        .map(|s| (s.name(), 0))
        .collect();
    let mut r = Replayer {
        pipeline,
        store,
        options,
        live: Vec::new(),
        active_request: String::new(),
        fired,
        files_written: 0,
        calls: 0,
        carried: Carried::default(),
        refusals: 0,
        not_applied: Vec::new(),
        configs: std::collections::VecDeque::new(),
    };
    // A change of settings applies from the call the recording names (the agent applies
    // one between calls, never inside a call's pipeline); the others where they happened in
    // the conversation.
    let (configs, others): (Vec<&RecordedEvent>, Vec<&RecordedEvent>) = options
        .recorded
        .iter()
        .partition(|e| matches!(e.kind, RecordedKind::Config { .. }));
    r.configs = configs.into_iter().cloned().collect();
    let mut recorded = others.into_iter().peekable();
    for (entered, message) in session.into_iter().enumerate() {
        while let Some(event) = recorded.next_if(|e| e.at <= entered) {
            r.apply(event, &mut on_event)?;
        }
        if message.role_kind() == Role::Assistant {
            r.call(None, &mut on_event)?;
            r.refusals = 0;
        } else if let Some(request) = request_in(&message) {
            r.active_request = request;
        }
        on_event(ReplayEvent::Entered(&message));
        r.live.push(message);
    }
    for event in recorded {
        r.apply(event, &mut on_event)?;
    }
    r.apply_configs(r.calls + 1);
    // The call the session ends before: on a copy, with a dry-run store.
    let next_call = match r.live.last() {
        Some(last) if last.role_kind() != Role::Assistant => {
            let mut copy = r.live.clone();
            let dry = store.dry_run();
            let pre = pre_call(
                &r.pipeline,
                &mut copy,
                &dry,
                options,
                &r.active_request,
                r.calls + 1,
                &mut |_, _| {},
            )?;
            let mut record = pre.record;
            let mut reports = std::mem::take(&mut r.carried.reports);
            reports.append(&mut record.reports);
            record.reports = reports;
            Some(record)
        }
        _ => None,
    };
    on_event(ReplayEvent::End(&r.live));
    Ok(ReplayTotals {
        calls: r.calls,
        fired: r.fired,
        files_written: r.files_written,
        final_messages: r.live.len(),
        final_estimate_size: estimate_size(&r.live),
        next_call,
        not_applied: r.not_applied,
    })
}

/// What compactions made between two calls (a recorded compact tool, a reactive stage)
/// hand to the next call's record.
#[derive(Debug, Default)]
struct Carried {
    reports: Vec<StageReport>,
    files: Vec<FileWritten>,
    before_summary: Option<Vec<Message>>,
    summary_input_chars: Option<usize>,
}

/// The loop's state between messages.
struct Replayer<'a> {
    pipeline: Pipeline,
    store: &'a Store,
    options: &'a ReplayOptions,
    live: Vec<Message>,
    active_request: String,
    fired: BTreeMap<&'static str, usize>,
    files_written: usize,
    calls: usize,
    carried: Carried,
    /// Refused calls since the last answer (the reactive stage's attempt).
    refusals: usize,
    not_applied: Vec<NotApplied>,
    /// Recorded changes of settings not reached yet, in order.
    configs: std::collections::VecDeque<RecordedEvent>,
}

impl Replayer<'_> {
    /// One model call: its pre-call pipeline, then the call (`refused`: the API's words,
    /// when the recording says it refused it).
    fn call(
        &mut self,
        refused: Option<String>,
        on_event: &mut impl FnMut(ReplayEvent<'_>),
    ) -> Result<(), StoreError> {
        self.apply_configs(self.calls + 1);
        self.calls += 1;
        let mut pre = pre_call(
            &self.pipeline,
            &mut self.live,
            self.store,
            self.options,
            &self.active_request,
            self.calls,
            &mut |report, history| on_event(ReplayEvent::Stage { report, history }),
        )?;
        let carried = std::mem::take(&mut self.carried);
        let mut reports = carried.reports;
        reports.append(&mut pre.record.reports);
        pre.record.reports = reports;
        pre.record.refused = refused;
        let mut files = carried.files;
        files.append(&mut pre.files);
        let before_summary = pre.before_summary.or(carried.before_summary);
        let summary_input_chars = match (carried.summary_input_chars, pre.summary_input_chars) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        for report in &pre.record.reports {
            *self.fired.entry(report.stage.name()).or_default() += 1;
            self.files_written += report.files_written.len();
        }
        on_event(ReplayEvent::Call(CallView {
            record: &pre.record,
            request: &self.live,
            before_summary: before_summary.as_deref(),
            files: &files,
            summary_input_chars,
        }));
        Ok(())
    }

    /// Follows one recorded event, or says why it cannot.
    fn apply(
        &mut self,
        event: &RecordedEvent,
        on_event: &mut impl FnMut(ReplayEvent<'_>),
    ) -> Result<(), StoreError> {
        match &event.kind {
            RecordedKind::Compact { focus, .. } => {
                self.apply_configs(self.calls + 1);
                let pending = self.pipeline.begin_compact(
                    &self.live,
                    self.store,
                    focus.as_deref(),
                    CompactTrigger::Requested,
                    self.options.now_secs,
                )?;
                match pending {
                    Some(pending) => self.summarize(pending, on_event),
                    None => self.skip(
                        event,
                        NotAppliedWhy::NothingToSummarize(self.pipeline.strategy()),
                    ),
                }
            }
            RecordedKind::Refusal { message } => {
                self.call(Some(message.clone()), on_event)?;
                // A change recorded while the refused call was out applies to its reactive
                // stage, as in the live run.
                self.apply_configs(self.calls + 1);
                let attempt = self.refusals;
                self.refusals += 1;
                let strategy = self.pipeline.strategy();
                let pending = if !self.pipeline.reactive_can_shrink(&self.live) {
                    None
                } else {
                    self.pipeline.begin_reactive(
                        &self.live,
                        self.store,
                        self.options.now_secs,
                        attempt,
                        None,
                    )?
                };
                match pending {
                    Some(pending) => self.summarize(pending, on_event),
                    None if strategy.reactive_attempts() == 0 => {
                        self.skip(event, NotAppliedWhy::NoReactive(strategy))
                    }
                    None if attempt >= strategy.reactive_attempts() => {
                        self.skip(event, NotAppliedWhy::NoFurtherReactive(strategy))
                    }
                    None => self.skip(event, NotAppliedWhy::ReactiveFindsNothing(strategy)),
                }
            }
            // Applied by call (`apply_configs`), never from here.
            RecordedKind::Config { .. } => {}
        }
        Ok(())
    }

    /// Follows the recorded changes of settings that apply from call `call` or before:
    /// new numbers under the replay's strategy (whichever it runs); a switch of strategy
    /// when the replay runs the strategy the live run switched from (it has followed the
    /// live run so far); otherwise it says why not.
    fn apply_configs(&mut self, call: usize) {
        while let Some(event) = self.configs.pop_front() {
            if event.call > call {
                self.configs.push_front(event);
                return;
            }
            let RecordedKind::Config { config, from } = &event.kind else {
                continue;
            };
            let running = self.pipeline.strategy();
            if config.strategy == running || *from == running {
                self.pipeline = Pipeline::new(*config).with_counter_ids();
            } else if *from == config.strategy {
                // New numbers, no switch: the replay runs them under its own strategy (the
                // numbers the live run left at its strategy's defaults take the replay's).
                self.pipeline = Pipeline::new(config.with_strategy(running)).with_counter_ids();
            } else {
                let why = NotAppliedWhy::OtherSwitch {
                    running,
                    from: *from,
                    to: config.strategy,
                };
                self.skip(&event, why);
            }
        }
    }

    fn skip(&mut self, event: &RecordedEvent, why: NotAppliedWhy) {
        self.not_applied.push(NotApplied {
            event: event.clone(),
            why,
        });
    }

    /// A summary made between calls: installed now, reported with the next call.
    fn summarize(
        &mut self,
        pending: PendingCompaction,
        on_event: &mut impl FnMut(ReplayEvent<'_>),
    ) {
        let request = pending.request();
        let chars = request.system.chars().count() + request.user_text.chars().count();
        let summary = summary_for(self.options, request);
        let (history, report) = pending.finish(&[summary], &self.active_request);
        let before = std::mem::replace(&mut self.live, history);
        on_event(ReplayEvent::Stage {
            report: &report,
            history: &self.live,
        });
        let c = &mut self.carried;
        c.files.extend(report.files_written.iter().cloned());
        c.reports.push(report);
        c.before_summary.get_or_insert(before);
        c.summary_input_chars = Some(c.summary_input_chars.unwrap_or(0) + chars);
    }
}

/// The summary a compaction gets: the given text, else the summarizer's, else extractive.
fn summary_for(options: &ReplayOptions, request: &SummaryRequest) -> String {
    match (&options.summary_text, &options.summarizer) {
        (Some(s), _) => s.clone(),
        (None, Some(Summarizer(make))) => make(request),
        (None, None) => extractive_summary_from_request(&request.user_text),
    }
}

/// One model call's pre-call pipeline, as an observer of the loop needs it.
struct PreCall {
    record: CallRecord,
    /// Every file a stage wrote or reused, changed or not.
    files: Vec<FileWritten>,
    /// The history just before a summary replaced it (after the cheap stages).
    before_summary: Option<Vec<Message>>,
    /// Chars of the summary request (system text and input) when one was made.
    summary_input_chars: Option<usize>,
}

/// One model call's pre-call pipeline on `live`: `Pipeline::pre_call` unrolled, so each
/// stage's history can go to `on_stage` (changed or not), then the summary (given or
/// extractive) when the summarizing stage fires. The record keeps the stages that changed
/// something.
fn pre_call(
    pipeline: &Pipeline,
    live: &mut Vec<Message>,
    store: &Store,
    options: &ReplayOptions,
    active_request: &str,
    call: usize,
    on_stage: &mut dyn FnMut(&StageReport, &[Message]),
) -> Result<PreCall, StoreError> {
    let pre = pipeline.pre_call_observed(live, store, options.now_secs, on_stage)?;
    let mut files: Vec<FileWritten> = pre
        .reports
        .iter()
        .flat_map(|r| r.files_written.iter().cloned())
        .collect();
    let mut reports: Vec<StageReport> = pre.reports.into_iter().filter(|r| r.changed).collect();
    let pending = pre.pending;
    let mut before_summary = None;
    let mut summary_input_chars = None;
    if let Some(pending) = pending {
        let request = pending.request();
        summary_input_chars =
            Some(request.system.chars().count() + request.user_text.chars().count());
        let summary = summary_for(options, request);
        let (history, report) = pending.finish(&[summary], active_request);
        before_summary = Some(std::mem::replace(live, history));
        on_stage(&report, live);
        files.extend(report.files_written.iter().cloned());
        reports.push(report);
    }
    Ok(PreCall {
        record: CallRecord {
            call,
            reports,
            estimate_size: estimate_size(live),
            messages: live.len(),
            refused: None,
        },
        files,
        before_summary,
        summary_input_chars,
    })
}
