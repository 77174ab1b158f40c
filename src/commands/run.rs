//! `ctxlab run`: one request to completion without a TUI, as readable lines or as one JSON
//! event per line. A second consumer of the same event stream the TUI draws.

use std::io::Write;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::agent::events::{AgentEvent, StopReason, UserCommand};
use crate::util::group_digits;

/// How a headless run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadlessOutcome {
    /// The reason of the turn's `TurnDone`; `None` when the agent ended without one.
    pub stop_reason: Option<StopReason>,
    pub errors: usize,
}

/// One readable line for an event, or None for events not worth a line.
pub fn describe_event(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::Ready {
            provider,
            workspace,
            ..
        } => {
            format!("ctxlab: {provider} in {}", workspace.display())
        }
        AgentEvent::TurnStarted { request } => format!("> {request}"),
        AgentEvent::StageRan { report, .. } if report.changed => {
            if report.reason.is_empty() {
                format!("[stage] {}", report.summary())
            } else {
                format!("[stage] {} · why: {}", report.summary(), report.reason)
            }
        }
        AgentEvent::PromptTooLong {
            message,
            messages,
            estimate_chars,
        } => format!(
            "[api] {message} ({messages} messages, {} chars)",
            group_digits(*estimate_chars)
        ),
        AgentEvent::RequestSent {
            estimate_chars,
            messages,
            summary,
        } => format!(
            "[{}] {messages} messages, {} chars",
            if *summary {
                "summary request"
            } else {
                "model call"
            },
            group_digits(*estimate_chars)
        ),
        AgentEvent::ToolStarted { name, input, .. } => {
            let mut shown = input.to_string();
            if shown.chars().count() > 120 {
                shown = shown.chars().take(119).collect::<String>() + "…";
            }
            format!("[tool] {name} {shown}")
        }
        AgentEvent::ToolFinished {
            name,
            is_error,
            chars,
            elapsed,
            ..
        } => format!(
            "[tool] {name} {} ({} chars, {} ms)",
            if *is_error { "failed" } else { "done" },
            group_digits(*chars),
            elapsed.as_millis()
        ),
        AgentEvent::Retrying {
            attempt,
            reason,
            wait,
        } => format!(
            "[retry] attempt {attempt} in {} ms: {reason}",
            wait.as_millis()
        ),
        AgentEvent::CompactRequested { focus } => format!(
            "[compact tool] focus: {}",
            focus.as_deref().unwrap_or("(none)")
        ),
        AgentEvent::Paused { next } => format!("[paused] {}", next.describe()),
        AgentEvent::Error { kind, message } => format!("[error] {kind:?}: {message}"),
        AgentEvent::TurnDone { stop_reason } => format!("[done] {stop_reason}"),
        _ => return None,
    })
}

/// Submits `prompt`, writes events until the turn is done, then asks the agent to quit.
pub async fn run_headless(
    prompt: String,
    commands: &UnboundedSender<UserCommand>,
    events: &mut UnboundedReceiver<AgentEvent>,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<HeadlessOutcome> {
    // A closed channel means the agent already ended: the loop below reports that.
    let _ = commands.send(UserCommand::Submit(prompt));
    let mut errors = 0;
    let mut text_open = false;
    while let Some(event) = events.recv().await {
        if matches!(event, AgentEvent::Error { .. }) {
            errors += 1;
        }
        if json {
            writeln!(
                out,
                "{}",
                serde_json::to_string(&event).map_err(std::io::Error::other)?
            )?;
        } else if let AgentEvent::TextDelta { text } = &event {
            write!(out, "{text}")?;
            text_open = true;
        } else if let Some(line) = describe_event(&event) {
            if text_open {
                writeln!(out)?;
                text_open = false;
            }
            writeln!(out, "{line}")?;
        }
        out.flush()?;
        if let AgentEvent::TurnDone { stop_reason } = event {
            let _ = commands.send(UserCommand::Quit);
            return Ok(HeadlessOutcome {
                stop_reason: Some(stop_reason),
                errors,
            });
        }
    }
    Ok(HeadlessOutcome {
        stop_reason: None,
        errors,
    })
}
