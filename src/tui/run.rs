//! The TUI's loop: the only place that mutates `App` and the only place that performs its
//! effects. It `select!`s over terminal input, agent events, a tick and the tokenizer's
//! start-up, drains everything queued, then draws once, at most ~60 frames a second. It
//! never draws per event and never shares state with the agent (messages only).

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, EventStream};
use futures::{FutureExt, StreamExt};
use tiktoken_rs::CoreBPE;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::app::{App, Effect, Msg, TICK};
use super::panes::render;
use super::terminal;
use crate::agent::events::{AgentEvent, UserCommand};
use crate::compact::PipelineConfig;

/// ~60 fps.
const FRAME: Duration = Duration::from_millis(16);
/// Most queued messages handled before a frame is drawn, so a flood cannot starve drawing.
const DRAIN_MAX: usize = 20_000;

/// What the binary hands the TUI.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    pub workspace: PathBuf,
    pub provider_label: String,
    pub config: PipelineConfig,
    /// `NO_COLOR` is set (or `--no-color`): modifiers only.
    pub no_color: bool,
    /// One-line notices shown in the hint line at start (e.g. why the scripted model runs).
    pub notices: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Whether `NO_COLOR` asks for no colours (set and non-empty, per no-color.org).
pub fn no_color_from_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn to_msg(ev: Event) -> Option<Msg> {
    match ev {
        Event::Key(k) => Some(Msg::Key(k)),
        Event::Mouse(m) => Some(Msg::Mouse(m)),
        Event::Resize(w, h) => Some(Msg::Resize(w, h)),
        Event::Paste(s) => Some(Msg::Paste(s)),
        _ => None,
    }
}

fn build_tokenizer() -> Option<&'static CoreBPE> {
    // Leaked once per run: the encoder lives as long as the UI and rows borrow it freely.
    tiktoken_rs::cl100k_base()
        .ok()
        .map(|b| &*Box::leak(Box::new(b)))
}

/// Runs the TUI until the user quits. Restores the terminal on every exit path.
pub async fn run(
    opts: TuiOptions,
    mut events: UnboundedReceiver<AgentEvent>,
    commands: UnboundedSender<UserCommand>,
) -> Result<(), TuiError> {
    let (mut term, _guard) = terminal::init()?;
    let mut app = App::new(
        opts.workspace,
        opts.provider_label,
        opts.config,
        opts.no_color,
    );
    if !opts.notices.is_empty() {
        app.notify(opts.notices.join(" · "));
    }
    let size = term.size()?;
    app.update(Msg::Resize(size.width, size.height));
    app.update(Msg::Refresh {
        now: SystemTime::now(),
    });
    let mut tokenizer = tokio::task::spawn_blocking(build_tokenizer);
    let mut tokenizer_pending = true;
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut agent_open = true;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;

    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= FRAME) {
            term.draw(|f| render(&app, f))?;
            last_draw = Some(Instant::now());
            dirty = false;
        }
        let next_frame = match (dirty, last_draw) {
            (true, Some(t)) => t + FRAME,
            _ => Instant::now() + Duration::from_secs(3_600),
        };
        let mut msgs: Vec<Msg> = Vec::new();
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(e)) => msgs.extend(to_msg(e)),
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            ev = events.recv(), if agent_open => match ev {
                Some(e) => msgs.push(Msg::Agent(e)),
                None => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            },
            _ = tick.tick() => msgs.push(Msg::Tick),
            bpe = &mut tokenizer, if tokenizer_pending => {
                tokenizer_pending = false;
                match bpe {
                    Ok(Some(b)) => msgs.push(Msg::Tokenizer(b)),
                    _ => tracing::warn!("tokenizer unavailable; token estimates stay hidden"),
                }
            },
            _ = tokio::time::sleep_until(next_frame.into()), if dirty => {},
        }
        // Drain whatever else is already queued before drawing once.
        while agent_open && msgs.len() < DRAIN_MAX {
            match events.try_recv() {
                Ok(e) => msgs.push(Msg::Agent(e)),
                Err(tokio::sync::mpsc::error::TryRecvError::Empty) => break,
                Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            }
        }
        while msgs.len() < DRAIN_MAX {
            match input.next().now_or_never() {
                Some(Some(Ok(e))) => msgs.extend(to_msg(e)),
                Some(Some(Err(e))) => return Err(e.into()),
                _ => break,
            }
        }
        for msg in msgs {
            let quiet_tick = matches!(msg, Msg::Tick) && !app.animating();
            let effects = app.update(msg);
            if !quiet_tick {
                dirty = true;
            }
            for effect in effects {
                match effect {
                    Effect::Send(cmd) => {
                        tracing::debug!(?cmd, "command");
                        if commands.send(cmd).is_err() && agent_open {
                            tracing::warn!("agent command channel closed");
                        }
                    }
                    Effect::Quit => {
                        let _ = commands.send(UserCommand::Quit);
                        return Ok(());
                    }
                    Effect::Refresh => {
                        app.update(Msg::Refresh {
                            now: SystemTime::now(),
                        });
                    }
                }
            }
        }
    }
}
