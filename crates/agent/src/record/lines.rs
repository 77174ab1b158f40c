//! The run's facts as recording lines (`session::recorded::format`): which facts are kept,
//! and the call numbers they carry, the run's (`crate::run::Run`: every request of a turn
//! counts, a refused one too, as the timeline counts them).

use crate::compact::{Change, CompactTrigger, StageReport};
use crate::run::RunFact;
use crate::session::recorded::format::{FrontEnd, Header, RECORD_FORMAT, RECORD_VERSION};
use crate::session::recorded::{RecordLine, RecordedStageLine};
use crate::util::iso_utc;

/// What a recording says about where it came from, besides what `Ready` says.
#[derive(Debug, Clone)]
pub struct RecordingOrigin {
    /// `workbench` or `run`.
    pub front_end: FrontEnd,
    /// Unix seconds the recording started at.
    pub started_secs: u64,
}

/// Turns the run's facts into lines. It counts nothing: the call numbers are the run's
/// (`crate::run::Run`), as the timeline's are, less the calls made before this recording's
/// agent started (a continued agent's recording holds its own calls, from 1).
#[derive(Debug, Clone)]
pub struct LineMaker {
    origin: RecordingOrigin,
    calls_before: usize,
}

impl LineMaker {
    pub fn new(origin: RecordingOrigin) -> LineMaker {
        LineMaker {
            origin,
            calls_before: 0,
        }
    }

    /// Lines for a run that goes on after `calls` calls of an earlier one.
    pub fn after_calls(self, calls: usize) -> LineMaker {
        LineMaker {
            calls_before: calls,
            ..self
        }
    }

    /// A call number of the run as this recording numbers it.
    fn call(&self, run_call: usize) -> usize {
        run_call.saturating_sub(self.calls_before)
    }

    /// The line for `fact`, or None for one a recording does not keep (the answer cut: the
    /// messages and reports hold what it led to).
    pub fn line(&self, fact: &RunFact<'_>) -> Option<RecordLine> {
        Some(match *fact {
            RunFact::Started {
                provider,
                workspace,
                config,
            } => RecordLine::Header(Header {
                format: RECORD_FORMAT.to_string(),
                version: RECORD_VERSION,
                ctxlab: env!("CARGO_PKG_VERSION").to_string(),
                front_end: self.origin.front_end,
                started: iso_utc(self.origin.started_secs),
                provider: provider.to_string(),
                workspace: workspace.display().to_string(),
                config,
            }),
            RunFact::Turn { request } => RecordLine::Turn {
                request: request.to_string(),
            },
            RunFact::Appended { message, .. } => RecordLine::Appended {
                message: message.clone(),
            },
            RunFact::Stage {
                before_call,
                report,
                history,
                ..
            } => RecordLine::Stage(stage_line(
                self.call(before_call),
                report,
                history.map(|h| h.as_slice()),
            )),
            RunFact::Request {
                call,
                estimate_chars,
                messages,
                ..
            } => RecordLine::Request {
                call: self.call(call.recorded_call()),
                summary: call.is_summary(),
                estimate_chars,
                messages,
            },
            RunFact::Usage {
                call,
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => RecordLine::Usage {
                call: self.call(call.recorded_call()),
                summary: call.is_summary(),
                input_tokens,
                output_tokens,
                cached_input_tokens,
            },
            RunFact::CompactTool { call, focus } => RecordLine::CompactTool {
                call: self.call(call),
                focus: focus.map(str::to_string),
            },
            RunFact::Refused {
                call,
                message,
                messages,
                estimate_chars,
            } => RecordLine::PromptTooLong {
                call: self.call(call.recorded_call()),
                summary: call.is_summary(),
                message: message.to_string(),
                messages,
                estimate_chars,
            },
            RunFact::Settings { config, .. } => RecordLine::Config { config },
            RunFact::Error { kind, message } => RecordLine::Error {
                kind: serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                message: message.to_string(),
            },
            RunFact::TurnDone { stop_reason } => RecordLine::TurnDone {
                stop_reason: stop_reason.as_str().to_string(),
            },
            RunFact::Replaced { .. } | RunFact::AnswerCut { .. } => return None,
        })
    }
}

/// A stage's line; `call` is the call it ran before.
fn stage_line(
    call: usize,
    report: &StageReport,
    history: Option<&[crate::message::Message]>,
) -> RecordedStageLine {
    let summarized = report.changes.iter().find_map(|c| match c {
        Change::Summarized { trigger, focus, .. } => Some((trigger, focus)),
        _ => None,
    });
    RecordedStageLine {
        call,
        stage: report.stage.name().to_string(),
        changed: report.changed,
        ran: report.ran,
        reason: report.reason.clone(),
        size_before: report.size_before,
        size_after: report.size_after,
        messages_before: report.messages_before,
        messages_after: report.messages_after,
        trigger: summarized.map(|(t, _)| trigger_name(t).to_string()),
        focus: summarized.and_then(|(_, f)| f.clone()),
        // Only a summary's history: the cheap stages are replayed, not stored.
        history: summarized.and(history).map(<[_]>::to_vec),
    }
}

fn trigger_name(trigger: &CompactTrigger) -> &'static str {
    match trigger {
        CompactTrigger::OverLimit => "over_limit",
        CompactTrigger::Requested => "requested",
        CompactTrigger::PromptTooLong => "prompt_too_long",
    }
}
