//! The agent's events as recording lines (`session::recorded::format`): which events are
//! kept, and the call numbers they carry (every request of a turn counts, a refused one
//! too, as the timeline counts them).

use crate::agent::AgentEvent;
use crate::compact::{Change, CompactTrigger, StageReport};
use crate::session::recorded::format::{FrontEnd, Header, RECORD_FORMAT, RECORD_VERSION};
use crate::session::recorded::{RecordLine, RecordedStageLine};

/// What a recording says about where it came from, besides what `Ready` says.
#[derive(Debug, Clone)]
pub struct RecordingOrigin {
    pub front_end: FrontEnd,
    /// Unix seconds the recording started at.
    pub started_secs: u64,
}

/// Turns events into lines; keeps the count of calls.
#[derive(Debug, Clone)]
pub struct LineMaker {
    origin: RecordingOrigin,
    /// Turn requests sent so far.
    calls: usize,
    /// Whether the last request was a summary request.
    last_summary: bool,
}

impl LineMaker {
    pub fn new(origin: RecordingOrigin) -> LineMaker {
        LineMaker {
            origin,
            calls: 0,
            last_summary: false,
        }
    }

    /// The line for `event`, or None for one a recording does not keep (text deltas, tool
    /// progress, pauses: the messages and reports hold what they led to).
    pub fn line(&mut self, event: &AgentEvent) -> Option<RecordLine> {
        Some(match event {
            AgentEvent::Ready {
                provider,
                workspace,
                config,
            } => RecordLine::Header(Header {
                format: RECORD_FORMAT.to_string(),
                version: RECORD_VERSION,
                ctxlab: env!("CARGO_PKG_VERSION").to_string(),
                front_end: self.origin.front_end,
                started: crate::util::iso_utc(self.origin.started_secs),
                provider: provider.clone(),
                workspace: workspace.display().to_string(),
                config: *config,
            }),
            AgentEvent::TurnStarted { request } => RecordLine::Turn {
                request: request.clone(),
            },
            AgentEvent::MessageAppended { message } => RecordLine::Appended {
                message: message.clone(),
            },
            AgentEvent::StageRan { report, history } => {
                RecordLine::Stage(self.stage(report, history.as_deref().map(Vec::as_slice)))
            }
            AgentEvent::RequestSent {
                estimate_chars,
                messages,
                summary,
                ..
            } => {
                self.last_summary = *summary;
                if !summary {
                    self.calls += 1;
                }
                RecordLine::Request {
                    call: self.calls,
                    summary: *summary,
                    estimate_chars: *estimate_chars,
                    messages: *messages,
                }
            }
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => RecordLine::Usage {
                call: self.calls,
                summary: self.last_summary,
                input_tokens: *input_tokens,
                output_tokens: *output_tokens,
                cached_input_tokens: *cached_input_tokens,
            },
            AgentEvent::CompactRequested { focus } => RecordLine::CompactTool {
                call: self.calls,
                focus: focus.clone(),
            },
            AgentEvent::PromptTooLong {
                message,
                messages,
                estimate_chars,
            } => RecordLine::PromptTooLong {
                call: self.calls,
                summary: self.last_summary,
                message: message.clone(),
                messages: *messages,
                estimate_chars: *estimate_chars,
            },
            AgentEvent::ConfigChanged { config } => RecordLine::Config { config: *config },
            AgentEvent::Error { kind, message } => RecordLine::Error {
                kind: serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                message: message.clone(),
            },
            AgentEvent::TurnDone { stop_reason } => RecordLine::TurnDone {
                stop_reason: stop_reason.as_str().to_string(),
            },
            _ => return None,
        })
    }

    fn stage(
        &self,
        report: &StageReport,
        history: Option<&[crate::message::Message]>,
    ) -> RecordedStageLine {
        let summarized = report.changes.iter().find_map(|c| match c {
            Change::Summarized { trigger, focus, .. } => Some((trigger, focus)),
            _ => None,
        });
        RecordedStageLine {
            call: self.calls + 1,
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
}

fn trigger_name(trigger: &CompactTrigger) -> &'static str {
    match trigger {
        CompactTrigger::OverLimit => "over_limit",
        CompactTrigger::Requested => "requested",
        CompactTrigger::PromptTooLong => "prompt_too_long",
    }
}
