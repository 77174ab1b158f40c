//! The TUI's loop: the only place that mutates `App` and the only place that performs its
//! effects. It `select!`s over terminal input, agent events, finished jobs, a tick and the
//! tokenizer's start-up, drains everything queued, then draws once, at most ~60 frames a
//! second. It never draws per event and never shares state with the agent (messages only).
//! Slow work (`Effect::Work`: reading files, parsing and replaying transcripts) runs on
//! tokio's blocking pool and comes back as `Msg::Done`, so the screen keeps answering keys
//! while a large transcript loads.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::{FutureExt, Stream, StreamExt};
use tiktoken_rs::CoreBPE;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::app::{App, Effect, Msg, TICK};
use super::panes::render;
use super::terminal;
use super::work::Done;
use crate::agent::events::{AgentEvent, UserCommand};
use crate::compact::PipelineConfig;
use crate::process::TerminationSignals;

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

/// How the workbench ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiExit {
    /// The user quit (or the input ended).
    Quit,
    /// SIGTERM, SIGHUP or SIGINT (its number) arrived; the terminal is already restored.
    Signal(i32),
}

/// Runs the TUI until the user quits or a termination signal arrives. Restores the terminal
/// on every exit path; stopping the agent and its tools is the caller's part.
pub async fn run(
    opts: TuiOptions,
    events: UnboundedReceiver<AgentEvent>,
    commands: UnboundedSender<UserCommand>,
) -> Result<TuiExit, TuiError> {
    // Installed before the terminal is taken: from here on these signals come to the loop
    // below instead of killing the process with the terminal still raw.
    let mut signals = TerminationSignals::install()?;
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
    let draw = |app: &App| term.draw(|f| render(app, f)).map(|_| ());
    // A signal drops the loop between two of its steps (never mid-frame); the guard then
    // restores the terminal as on any other exit.
    tokio::select! {
        ended = run_loop(app, EventStream::new(), events, commands, draw) => {
            ended?;
            Ok(TuiExit::Quit)
        }
        signo = signals.recv() => {
            tracing::info!("signal {signo}: leaving the workbench");
            Ok(TuiExit::Signal(signo))
        }
    }
}

/// The loop itself, over any stream of terminal events and any way of drawing a frame:
/// `run` hands it the real terminal, tests a channel of events and a `TestBackend`. Returns
/// the app when the user quits or the input ends.
pub async fn run_loop<I, D>(
    mut app: App,
    mut input: I,
    mut events: UnboundedReceiver<AgentEvent>,
    commands: UnboundedSender<UserCommand>,
    mut draw: D,
) -> Result<App, TuiError>
where
    I: Stream<Item = io::Result<Event>> + Unpin,
    D: FnMut(&App) -> io::Result<()>,
{
    let (done_tx, mut done_rx) = unbounded_channel::<Done>();
    perform(app.refresh_files(), &done_tx, &commands, true);
    let mut tokenizer = tokio::task::spawn_blocking(build_tokenizer);
    let mut tokenizer_pending = true;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut agent_open = true;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;

    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= FRAME) {
            draw(&app)?;
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
                None => return Ok(app),
            },
            ev = events.recv(), if agent_open => match ev {
                Some(e) => msgs.push(Msg::Agent(e)),
                None => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            },
            // Never None: the loop holds a sender.
            Some(done) = done_rx.recv() => msgs.push(Msg::Done(done)),
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
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    agent_open = false;
                    msgs.push(Msg::AgentGone);
                }
            }
        }
        while msgs.len() < DRAIN_MAX {
            match done_rx.try_recv() {
                Ok(done) => msgs.push(Msg::Done(done)),
                Err(_) => break,
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
                if matches!(effect, Effect::Quit) {
                    let _ = commands.send(UserCommand::Quit);
                    return Ok(app);
                }
                perform(effect, &done_tx, &commands, agent_open);
            }
        }
    }
}

/// Performs an effect other than `Quit`: a command goes to the agent; work goes to tokio's
/// blocking pool, so the UI task only ever waits on the channel its result comes back on.
fn perform(
    effect: Effect,
    done: &UnboundedSender<Done>,
    commands: &UnboundedSender<UserCommand>,
    agent_open: bool,
) {
    match effect {
        Effect::Send(cmd) => {
            tracing::debug!(?cmd, "command");
            if commands.send(cmd).is_err() && agent_open {
                tracing::warn!("agent command channel closed");
            }
        }
        // The loop returns on `Quit` before it gets here.
        Effect::Quit => {}
        Effect::Work(work) => {
            let done = done.clone();
            tokio::task::spawn_blocking(move || {
                // The loop is gone when the send fails: nobody waits for the result.
                let _ = done.send(work.run());
            });
        }
    }
}
