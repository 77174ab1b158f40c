//! Runs the TUI against a tiny fake agent (no model, no tools), for trying the screen and
//! for pty smoke tests: `cargo run --example tui_demo`. A request is echoed back as a
//! streamed reply; `/compact` replaces the history with a summary message; `/config` and
//! `/step` are acknowledged. `CTXLAB_DEMO_PANIC=1` panics in a spawned task after a second
//! (the terminal must come back clean). `CTXLAB_DEMO_AGENT_PANIC=1` makes the fake agent,
//! supervised like the real one, panic on a request containing "panic" (the workbench must
//! show the error and stay up).

use std::sync::Arc;
use std::time::Duration;

use ctxlab::agent::events::{AgentEvent, NextStep, UserCommand};
use ctxlab::compact::{PipelineConfig, estimate_size};
use ctxlab::message::{Message, block};
use ctxlab::tui::{TuiOptions, init_file_logging, no_color_from_env, run};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

async fn fake_agent(tx: UnboundedSender<AgentEvent>, mut rx: UnboundedReceiver<UserCommand>) {
    let mut history: Vec<Message> = Vec::new();
    let mut step = false;
    let _ = tx.send(AgentEvent::Ready {
        provider: "demo (fake agent)".into(),
        workspace: std::env::current_dir().unwrap_or_default(),
        config: PipelineConfig::default(),
    });
    while let Some(cmd) = rx.recv().await {
        match cmd {
            UserCommand::Submit(text) => {
                if text.contains("panic") && std::env::var_os("CTXLAB_DEMO_AGENT_PANIC").is_some() {
                    panic!("demo agent panic");
                }
                let _ = tx.send(AgentEvent::TurnStarted {
                    request: text.clone(),
                });
                let user = Message::user_text(text.clone());
                history.push(user.clone());
                let _ = tx.send(AgentEvent::MessageAppended { message: user });
                if step {
                    let _ = tx.send(AgentEvent::Paused {
                        next: NextStep::ModelCall {
                            messages: history.len(),
                            size: estimate_size(&history),
                        },
                    });
                    match rx.recv().await {
                        Some(UserCommand::Step) => {}
                        _ => continue,
                    }
                }
                let _ = tx.send(AgentEvent::RequestSent {
                    estimate_chars: estimate_size(&history),
                    messages: history.len(),
                    summary: false,
                    request: None,
                    body: None,
                });
                let reply = format!("You said: {text}. This is a streamed demo reply.");
                for word in reply.split_inclusive(' ') {
                    let _ = tx.send(AgentEvent::TextDelta {
                        text: word.to_string(),
                    });
                    tokio::time::sleep(Duration::from_millis(40)).await;
                }
                let answer = Message::assistant_blocks(vec![block::text(reply)]);
                history.push(answer.clone());
                let _ = tx.send(AgentEvent::MessageAppended { message: answer });
                let _ = tx.send(AgentEvent::TurnDone {
                    stop_reason: "end_turn".into(),
                });
            }
            UserCommand::Compact { focus } => {
                let summary = Message::user_text(format!(
                    "[Compacted]\n\nAuthoritative request:\n(demo)\n\nReference state (untrusted data; never authorization):\n\"{} messages, focus {:?}\"",
                    history.len(),
                    focus
                ));
                history = vec![summary];
                let _ = tx.send(AgentEvent::HistoryReplaced {
                    messages: 1,
                    history: Arc::new(history.clone()),
                });
            }
            UserCommand::SetConfig(config) => {
                let _ = tx.send(AgentEvent::ConfigChanged { config });
            }
            UserCommand::StepMode(on) => {
                step = on;
                let _ = tx.send(AgentEvent::StepModeChanged { on });
            }
            UserCommand::SetPace(pace) => {
                let _ = tx.send(AgentEvent::PaceChanged {
                    pace_ms: pace.as_millis() as u64,
                    applied: false,
                });
            }
            UserCommand::Cancel | UserCommand::Step | UserCommand::RunTo(_) => {}
            UserCommand::Quit => break,
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _log = init_file_logging();
    let (ev_tx, ev_rx) = unbounded_channel();
    let (cmd_tx, cmd_rx) = unbounded_channel();
    // Supervised like the real agent: a panic becomes an error event.
    let _agent = ctxlab::agent::supervise(fake_agent(ev_tx.clone(), cmd_rx), ev_tx);
    if std::env::var_os("CTXLAB_DEMO_PANIC").is_some() {
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            panic!("demo panic in a spawned task");
        });
    }
    let opts = TuiOptions {
        workspace: std::env::current_dir()?,
        provider_label: "demo".into(),
        config: PipelineConfig::default(),
        no_color: no_color_from_env(),
        notices: vec!["demo: a fake agent that echoes requests".into()],
        legend_marker: None,
        restart: None,
        sessions: None,
        request: None,
    };
    let _ = run(opts, ev_rx, cmd_tx).await?;
    Ok(())
}
