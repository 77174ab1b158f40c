//! The replay loop: what the pipeline would have done to a recorded session, model call by
//! model call (docs/pipeline.md, "Replay"). `ctxlab replay` prints it; the workbench draws
//! it for a saved transcript. One loop serves both, so they cannot disagree.
//!
//! A session's assistant messages mark where model calls happened; before each one the live
//! history goes through the pre-call pipeline exactly as the agent would run it, with the
//! active request taken from the latest user message with string content. No model is
//! called: the summary is a given text or the scripted model's extractive summary.
//!
//! A session that ends with user messages (a transcript is saved just before a summary)
//! still has a call to come: `next_call` says what the pipeline would do before it, worked
//! out on a dry-run store, so nothing is written for a call that never happened.
//!
//! Observers see as much as they need: `replay` the call records, `replay_events` also the
//! messages, the histories sent and the files (the `compare` module), `replay_steps` also
//! each stage's history (the timeline).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compact::request::request_in;
use crate::compact::{Pipeline, PipelineConfig, StageReport, estimate_size};
use crate::message::Message;
use crate::provider::scripted::extractive::extractive_summary_from_request;
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
}

/// How to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub config: PipelineConfig,
    /// The summary every compaction gets; None: the extractive summary.
    pub summary_text: Option<String>,
    /// The clock used in transcript names.
    pub now_secs: u64,
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
    let mut live: Vec<Message> = Vec::new();
    let mut active_request = String::new();
    let mut fired: BTreeMap<&'static str, usize> = pipeline
        .stages()
        .iter()
        .chain([&pipeline.summarizing_stage()])
        .map(|s| (s.name(), 0))
        .collect();
    let mut files_written = 0;
    let mut calls = 0;
    for message in session {
        if message.role() == "assistant" {
            calls += 1;
            let pre = pre_call(
                &pipeline,
                &mut live,
                store,
                options,
                &active_request,
                calls,
                &mut |report, history| on_event(ReplayEvent::Stage { report, history }),
            )?;
            for r in &pre.record.reports {
                *fired.entry(r.stage.name()).or_default() += 1;
                files_written += r.files_written.len();
            }
            on_event(ReplayEvent::Call(CallView {
                record: &pre.record,
                request: &live,
                before_summary: pre.before_summary.as_deref(),
                files: &pre.files,
                summary_input_chars: pre.summary_input_chars,
            }));
        } else if let Some(request) = request_in(&message) {
            active_request = request;
        }
        on_event(ReplayEvent::Entered(&message));
        live.push(message);
    }
    // The call the session ends before: on a copy, with a dry-run store.
    let next_call = match live.last() {
        Some(last) if last.role() != "assistant" => {
            let mut copy = live.clone();
            let dry = store.dry_run();
            let pre = pre_call(
                &pipeline,
                &mut copy,
                &dry,
                options,
                &active_request,
                calls + 1,
                &mut |_, _| {},
            )?;
            Some(pre.record)
        }
        _ => None,
    };
    on_event(ReplayEvent::End(&live));
    Ok(ReplayTotals {
        calls,
        fired,
        files_written,
        final_messages: live.len(),
        final_estimate_size: estimate_size(&live),
        next_call,
    })
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
        let summary = match &options.summary_text {
            Some(s) => s.clone(),
            None => extractive_summary_from_request(&request.user_text),
        };
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
        },
        files,
        before_summary,
        summary_input_chars,
    })
}
