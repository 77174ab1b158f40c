//! `ctxlab run`: one request to completion without a TUI, as readable lines or as one JSON
//! event per line. A second consumer of the same event stream the TUI draws.
//!
//! [`run_session`] also owns the run's end: when the turn is done, when nobody reads the
//! output any more (`ctxlab run | head -1`) or when a termination signal arrives, the agent
//! is cancelled and told to quit (aborted if it does not), and every tool process group that
//! is still running is killed, so nothing keeps working after the command returns.

use std::future::Future;
use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::agent::events::{AgentEvent, StopReason, UserCommand};
use crate::tools::kill_running_process_groups;
use crate::util::group_digits;

/// How long the agent gets to end its turn and quit after Cancel + Quit before it is
/// aborted. Tools answer a cancel at once, so this is only a guard against a hang.
const AGENT_STOP_GRACE: Duration = Duration::from_secs(2);

/// How a headless run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadlessOutcome {
    /// The reason of the turn's `TurnDone`; `None` when the agent ended without one.
    pub stop_reason: Option<StopReason>,
    pub errors: usize,
    /// The last `Error` event's text (`kind: message`), for stderr.
    pub last_error: Option<String>,
}

/// Why [`run_session`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEnd {
    /// The events ended (normally with the turn's `TurnDone`).
    Finished(HeadlessOutcome),
    /// The output's reader went away; the run stopped quietly.
    OutputClosed,
    /// A termination signal (its number) stopped the run.
    Signal(i32),
}

/// A spawned agent, as `agent::spawn` returns it.
pub struct RunningAgent {
    pub commands: UnboundedSender<UserCommand>,
    pub events: UnboundedReceiver<AgentEvent>,
    pub handle: JoinHandle<()>,
}

/// Runs `prompt` on a spawned agent and writes the events to `out`, until the turn is done,
/// `out` turns out to be closed (`output_closed` resolves, or a write fails with a broken
/// pipe) or `signal` resolves. In every case the agent is stopped and every tool process
/// group killed before this returns.
pub async fn run_session(
    prompt: String,
    agent: RunningAgent,
    json: bool,
    out: &mut dyn Write,
    output_closed: impl Future<Output = ()>,
    signal: impl Future<Output = i32>,
) -> std::io::Result<SessionEnd> {
    let RunningAgent {
        commands,
        mut events,
        mut handle,
    } = agent;
    let commands = &commands;
    let events = &mut events;
    let end = tokio::select! {
        outcome = run_headless(prompt, commands, events, json, out) => match outcome {
            Ok(outcome) => Ok(SessionEnd::Finished(outcome)),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(SessionEnd::OutputClosed),
            Err(e) => Err(e),
        },
        () = output_closed => Ok(SessionEnd::OutputClosed),
        signo = signal => Ok(SessionEnd::Signal(signo)),
    };
    // Cancel kills a running tool and ends the turn; Quit then ends the agent.
    let _ = commands.send(UserCommand::Cancel);
    let _ = commands.send(UserCommand::Quit);
    if tokio::time::timeout(AGENT_STOP_GRACE, &mut handle)
        .await
        .is_err()
    {
        handle.abort();
    }
    kill_running_process_groups();
    end
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
            format!("[stage] {}", report.summary())
        }
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
    let mut last_error = None;
    let mut text_open = false;
    while let Some(event) = events.recv().await {
        if let AgentEvent::Error { kind, message } = &event {
            errors += 1;
            last_error = Some(format!("{kind:?}: {message}"));
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
                last_error,
            });
        }
    }
    Ok(HeadlessOutcome {
        stop_reason: None,
        errors,
        last_error,
    })
}
