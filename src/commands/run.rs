//! `ctxlab run`: requests run to completion without a TUI, as readable lines or as one JSON
//! event per line. A second consumer of the same event stream the TUI draws.
//!
//! Several prompts run in sequence in one session (one agent, one history), and a prompt
//! `/compact [focus]` is a manual compaction, as typed in the workbench. The run stops at
//! the first step that ends with an error.
//!
//! [`run_session`] also owns the run's end: when the last step is done, when nobody reads
//! the output any more (`ctxlab run | head -1`) or when a termination signal arrives, the
//! agent is cancelled and told to quit (aborted if it does not), and every tool process
//! group that is still running is killed, so nothing keeps working after the command returns.

use std::future::Future;
use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::agent::events::{AgentEvent, StopReason, UserCommand};
use crate::tools::kill_running_process_groups;
use crate::util::{group_digits, plural};

/// How long the agent gets to end its turn and quit after Cancel + Quit before it is
/// aborted. Tools answer a cancel at once, so this is only a guard against a hang.
const AGENT_STOP_GRACE: Duration = Duration::from_secs(2);

/// How a headless run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadlessOutcome {
    /// The reason of the last step's `TurnDone` (`error` for a failed compaction); `None`
    /// when the agent ended without one.
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

/// Runs `steps` on a spawned agent and writes the events to `out`, until the last is done,
/// `out` turns out to be closed (`output_closed` resolves, or a write fails with a broken
/// pipe) or `signal` resolves. In every case the agent is stopped and every tool process
/// group killed before this returns.
pub async fn run_session(
    steps: Vec<HeadlessStep>,
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
        outcome = run_headless(steps, commands, events, json, out) => match outcome {
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

/// One step of a headless run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadlessStep {
    /// A request, as typed.
    Submit(String),
    /// `/compact [focus]`: compact the history now.
    Compact { focus: Option<String> },
}

impl HeadlessStep {
    /// A prompt as the workbench's input box reads it: `/compact` with an optional focus is
    /// a manual compaction, anything else a request.
    pub fn parse(prompt: &str) -> HeadlessStep {
        let trimmed = prompt.trim();
        let rest = match trimmed.strip_prefix("/compact") {
            Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => rest,
            _ => return HeadlessStep::Submit(prompt.to_string()),
        };
        let focus = rest.trim();
        HeadlessStep::Compact {
            focus: (!focus.is_empty()).then(|| focus.to_string()),
        }
    }

    fn command(self) -> UserCommand {
        match self {
            HeadlessStep::Submit(text) => UserCommand::Submit(text),
            HeadlessStep::Compact { focus } => UserCommand::Compact { focus },
        }
    }
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
                format!("[stage] {} · why: {}", report.summary(), report.why())
            }
        }
        AgentEvent::PromptTooLong {
            message,
            messages,
            estimate_chars,
        } => format!(
            "[api] {message} ({}, {} chars)",
            plural(*messages, "message"),
            group_digits(*estimate_chars)
        ),
        AgentEvent::RequestSent {
            summary: true,
            request: Some(request),
            ..
        } => format!(
            "[summary request] {}",
            crate::agent::SummarySizes::of(request).text()
        ),
        AgentEvent::RequestSent {
            estimate_chars,
            messages,
            summary,
            ..
        } => format!(
            "[{}] {}, {} chars",
            if *summary {
                "summary request"
            } else {
                "model call"
            },
            plural(*messages, "message"),
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
            "[retry] {}",
            crate::agent::retry_text(*attempt, *wait, reason)
        ),
        AgentEvent::CompactRequested { focus } => format!(
            "[compact tool] focus: {}",
            focus.as_deref().unwrap_or("(none)")
        ),
        AgentEvent::Paused { next } => format!("[paused] {}", next.describe()),
        AgentEvent::Error { kind, message } => format!("[error] {kind:?}: {message}"),
        AgentEvent::AnswerCut { max_tokens, index } => {
            format!(
                "[cut] {}",
                crate::agent::answer_cut_text(*max_tokens, *index)
            )
        }
        AgentEvent::TurnDone { stop_reason } => format!("[done] {stop_reason}"),
        _ => return None,
    })
}

/// Runs `steps` in order in one session, writing events as they come, then asks the agent
/// to quit. Every step, a request or a compaction, is done at its `TurnDone` (`compacted`
/// after a manual compaction). The first step that ends with an error ends the run.
pub async fn run_headless(
    steps: Vec<HeadlessStep>,
    commands: &UnboundedSender<UserCommand>,
    events: &mut UnboundedReceiver<AgentEvent>,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<HeadlessOutcome> {
    let mut printer = Printer {
        json,
        text_open: false,
        errors: 0,
        last_error: None,
    };
    let mut stop_reason = None;
    for step in steps {
        let compact = matches!(step, HeadlessStep::Compact { .. });
        if compact && !json {
            printer.line(out, "> /compact")?;
        }
        // A closed channel means the agent already ended: the loop below reports that.
        let _ = commands.send(step.command());
        stop_reason = None;
        while let Some(event) = events.recv().await {
            printer.print(&event, out)?;
            if let AgentEvent::TurnDone {
                stop_reason: reason,
            } = event
            {
                stop_reason = Some(reason);
                break;
            }
        }
        if stop_reason.as_ref().is_none_or(|r| *r == StopReason::Error) {
            break;
        }
    }
    let _ = commands.send(UserCommand::Quit);
    Ok(HeadlessOutcome {
        stop_reason,
        errors: printer.errors,
        last_error: printer.last_error,
    })
}

/// Writes events as JSON lines or readable lines; streamed text runs on until the next line.
struct Printer {
    json: bool,
    text_open: bool,
    errors: usize,
    last_error: Option<String>,
}

impl Printer {
    fn print(&mut self, event: &AgentEvent, out: &mut dyn Write) -> std::io::Result<()> {
        if let AgentEvent::Error { kind, message } = event {
            self.errors += 1;
            self.last_error = Some(format!("{kind:?}: {message}"));
        }
        if self.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string(event).map_err(std::io::Error::other)?
            )?;
        } else if let AgentEvent::TextDelta { text } = event {
            write!(out, "{text}")?;
            self.text_open = true;
        } else if let Some(line) = describe_event(event) {
            self.line(out, &line)?;
        }
        out.flush()
    }

    fn line(&mut self, out: &mut dyn Write, line: &str) -> std::io::Result<()> {
        if self.text_open {
            writeln!(out)?;
            self.text_open = false;
        }
        writeln!(out, "{line}")?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_prompts_are_manual_compactions() {
        assert_eq!(
            HeadlessStep::parse("/compact"),
            HeadlessStep::Compact { focus: None }
        );
        assert_eq!(
            HeadlessStep::parse("  /compact   the parser bug "),
            HeadlessStep::Compact {
                focus: Some("the parser bug".into())
            }
        );
        assert_eq!(
            HeadlessStep::parse("/compactly"),
            HeadlessStep::Submit("/compactly".into())
        );
        assert_eq!(
            HeadlessStep::parse("fix /compact"),
            HeadlessStep::Submit("fix /compact".into())
        );
    }
}
