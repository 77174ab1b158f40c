//! The TUI's loop: the only place that mutates `App` and the only place that performs its
//! effects. It `select!`s over terminal input, agent events, finished jobs, a tick and the
//! tokenizer's start-up, drains everything queued, then draws once, at most ~60 frames a
//! second. It never draws per event and never shares state with the agent (messages only).
//! Slow work (`Effect::Work`: reading files, parsing and replaying transcripts) runs on
//! tokio's blocking pool and comes back as `Msg::Done`, so the screen keeps answering keys
//! while a large transcript loads. `/restart` (`Effect::Restart`) is the loop's too: the
//! binary's `Restarter` prepares a fresh agent off the UI task, the loop starts it, quits
//! the old one and swaps the channels; `App` only gets a fresh view (`Msg::Restarted`).
//! Following a session (`Effect::Follow`) is the loop's too: the follower thread sends its
//! events over a bounded channel the loop selects on (`Msg::Live`), and the bell a
//! compaction rings (`Effect::Bell`) goes to the terminal between frames.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::{FutureExt, Stream, StreamExt};
use tiktoken_rs::CoreBPE;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::app::{App, ContinueFrom, Effect, Msg, StartSessions, Startup, TICK};
use super::live::follower::{self, Follower};
use super::live::{LiveMsg, LiveOptions};
use super::screen::render;
use super::terminal;
use super::work::Done;
use crate::agent::events::{AgentEvent, UserCommand};
use crate::agent::turn::AgentSetup;
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
    /// Notices shown at start (e.g. why the scripted model runs): in the hint line one
    /// after the other, as events rows and in the legend, in full.
    pub notices: Vec<String>,
    /// The file that says the first-run legend was seen (`legend_marker()`); the legend
    /// shows at start while it does not exist. None: never shown at start.
    pub legend_marker: Option<PathBuf>,
    /// How `/restart` gets a fresh agent; None: `/restart` says it is not available.
    pub restart: Option<Restarter>,
    /// `ctxlab open`: start on the sessions browser (None: on the conversation).
    pub sessions: Option<OpenSessions>,
    /// The scenario's request (the scripted tour), sent as the loop starts, or when the
    /// first-run legend is closed if it shows: the tour never plays behind the legend.
    pub request: Option<String>,
}

/// What `ctxlab open` shows first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenSessions {
    /// The browser, listing these files and folders (the default roots when empty).
    Browse(Vec<PathBuf>),
    /// The browser listing the file's folder, and the file opened.
    File(PathBuf),
}

/// A fresh agent for `/restart`, prepared by the composition root (the binary).
pub struct FreshAgent {
    pub setup: AgentSetup,
    /// The status bar's provider label.
    pub label: String,
    pub notices: Vec<String>,
    /// The scenario's request, submitted as soon as the agent runs.
    pub request: Option<String>,
    /// Where the fresh session is recorded, if it is.
    pub record: Option<crate::record::Recorder>,
}

/// Prepares a fresh agent (a fresh workspace, the scenario from the start). Called off the
/// UI task: it may copy files.
#[derive(Clone)]
/// Its argument says whether the fresh session is recorded (a continued branch is not: a
/// recording starts with an empty conversation).
pub struct Restarter(pub Arc<dyn Fn(bool) -> Result<FreshAgent, RestartError> + Send + Sync>);

/// Why no fresh agent came for `/restart` or a continue (shown in the notice line).
#[derive(Debug, thiserror::Error)]
pub enum RestartError {
    #[error("not available here")]
    NoRestart,
    #[error("continue is not available here")]
    NoContinue,
    /// The front end's set-up failed (its own error, boxed: this crate does not name it).
    #[error(transparent)]
    Setup(Box<dyn std::error::Error + Send + Sync>),
}

impl std::fmt::Debug for Restarter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Restarter")
    }
}

/// Where the "legend seen" file goes: the platform data dir (`~/.local/share/ctxlab/` on
/// Linux), or None when the platform has no home.
pub fn legend_marker() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ctxlab").map(|d| d.data_dir().join("legend-seen"))
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
    run_following(opts, LiveOptions::default(), events, commands).await
}

/// `run`, with the settings for following a session (the bell) and, for `ctxlab watch`,
/// the session to follow at once in the live view.
pub async fn run_following(
    opts: TuiOptions,
    live: LiveOptions,
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
    let size = term.size()?;
    app.update(Msg::Resize(size.width, size.height));
    let sessions = opts.sessions.map(|o| match o {
        OpenSessions::Browse(paths) => StartSessions::Browse(paths),
        OpenSessions::File(path) => {
            let bytes = std::fs::metadata(&path).ok().map(|m| m.len());
            StartSessions::File { path, bytes }
        }
    });
    // One look at the disk before the loop starts; remembering is `Work` (on dismiss).
    let unseen_legend = opts.legend_marker.filter(|marker| !marker.exists());
    app.update(Msg::Start(Box::new(Startup {
        notices: opts.notices,
        scratch_root: crate::tui::sessions::scratch::scratch_root(),
        sessions,
        unseen_legend,
        request: opts.request,
    })));
    app.update(Msg::Live(LiveMsg::Setup(live)));
    let draw = |app: &App| term.draw(|f| render(app, f)).map(|_| ());
    // A signal drops the loop between two of its steps (never mid-frame); the guard then
    // restores the terminal as on any other exit.
    tokio::select! {
        ended = run_loop_with(app, EventStream::new(), events, commands, draw, opts.restart) => {
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
/// the app when the user quits or the input ends. `/restart` is not available.
pub async fn run_loop<I, D>(
    app: App,
    input: I,
    events: UnboundedReceiver<AgentEvent>,
    commands: UnboundedSender<UserCommand>,
    draw: D,
) -> Result<App, TuiError>
where
    I: Stream<Item = io::Result<Event>> + Unpin,
    D: FnMut(&App) -> io::Result<()>,
{
    run_loop_with(app, input, events, commands, draw, None).await
}

/// `run_loop`, with a way to start a fresh agent for `/restart`.
pub async fn run_loop_with<I, D>(
    mut app: App,
    mut input: I,
    mut events: UnboundedReceiver<AgentEvent>,
    mut commands: UnboundedSender<UserCommand>,
    mut draw: D,
    restart: Option<Restarter>,
) -> Result<App, TuiError>
where
    I: Stream<Item = io::Result<Event>> + Unpin,
    D: FnMut(&App) -> io::Result<()>,
{
    let (done_tx, mut done_rx) = unbounded_channel::<Done>();
    // A fresh agent, and the call it continues from when it is a continue.
    let (fresh_tx, mut fresh_rx) =
        unbounded_channel::<Result<(FreshAgent, Option<usize>), RestartError>>();
    // One channel for every follower the loop starts (ids tell them apart); the loop
    // holds a sender, so it never closes. Dropping `following` stops its thread.
    let (live_tx, mut live_rx) = tokio::sync::mpsc::channel::<LiveMsg>(follower::QUEUE);
    let mut following: Option<Follower> = None;
    perform(app.refresh_files(), &done_tx, &commands, true);
    for effect in app.update(Msg::LoopStarted) {
        match effect {
            // `ctxlab watch`: the session to follow at once.
            Effect::Follow(request) => start_following(request, &live_tx, &mut following),
            other => perform(other, &done_tx, &commands, true),
        }
    }
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
            Some(live) = live_rx.recv() => msgs.push(Msg::Live(live)),
            Some(fresh) = fresh_rx.recv() => match fresh {
                Ok((fresh, continues)) => {
                    let (new_events, new_commands) = start_fresh(fresh, &commands, &mut msgs, app.step_state().mode(), continues);
                    events = new_events;
                    commands = new_commands;
                    agent_open = true;
                }
                Err(why) => msgs.push(Msg::RestartFailed(why.to_string())),
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
            match live_rx.try_recv() {
                Ok(live) => msgs.push(Msg::Live(live)),
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
                match effect {
                    Effect::Quit => {
                        let _ = commands.send(UserCommand::Quit);
                        return Ok(app);
                    }
                    Effect::Restart => match &restart {
                        Some(r) => {
                            let (r, tx) = (r.0.clone(), fresh_tx.clone());
                            tokio::task::spawn_blocking(move || {
                                // The loop is gone when the send fails: nobody restarts.
                                let _ = tx.send(r(true).map(|f| (f, None)));
                            });
                        }
                        None => {
                            let _ = fresh_tx.send(Err(RestartError::NoRestart));
                        }
                    },
                    Effect::Continue(from) => match &restart {
                        Some(r) => {
                            let (r, tx) = (r.0.clone(), fresh_tx.clone());
                            tokio::task::spawn_blocking(move || {
                                let _ = tx
                                    .send(r(false).map(|f| (continued(f, &from), Some(from.call))));
                            });
                        }
                        None => {
                            let _ = fresh_tx.send(Err(RestartError::NoContinue));
                        }
                    },
                    Effect::Follow(request) => {
                        start_following(request, &live_tx, &mut following);
                    }
                    Effect::StopFollowing => stop_following(following.take()),
                    Effect::Bell => terminal::bell(),
                    other => perform(other, &done_tx, &commands, agent_open),
                }
            }
        }
    }
}

/// Starts the follower `request` asks for, in place of the one before it (stopped first).
fn start_following(
    request: crate::tui::live::FollowRequest,
    tx: &tokio::sync::mpsc::Sender<LiveMsg>,
    following: &mut Option<Follower>,
) {
    stop_following(following.take());
    let id = request.id();
    match follower::spawn(request, tx.clone()) {
        Ok(f) => *following = Some(f),
        Err(why) => {
            // No follower runs, so the queue has room for its end.
            let _ = tx.try_send(LiveMsg::Ended {
                id,
                error: Some(why.to_string()),
            });
        }
    }
}

/// Stops a follower (dropping it asks its thread to end).
fn stop_following(follower: Option<Follower>) {
    if let Some(f) = follower {
        tracing::debug!(id = f.id(), "follower stopped");
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
        // The loop handles these before it gets here.
        Effect::Quit
        | Effect::Restart
        | Effect::Continue(_)
        | Effect::Follow(_)
        | Effect::StopFollowing
        | Effect::Bell => {}
        Effect::Work(work) => {
            let done = done.clone();
            tokio::task::spawn_blocking(move || {
                // The loop is gone when the send fails: nobody waits for the result.
                let _ = done.send(work.run());
            });
        }
    }
}

/// Starts the fresh agent in place of the old one (which is told to quit), submits the
/// scenario's request, and queues `Msg::Restarted` for the view. Returns the new channels.
fn start_fresh(
    mut fresh: FreshAgent,
    old: &UnboundedSender<UserCommand>,
    msgs: &mut Vec<Msg>,
    step_mode: bool,
    continues: Option<usize>,
) -> (UnboundedReceiver<AgentEvent>, UnboundedSender<UserCommand>) {
    let _ = old.send(UserCommand::Quit);
    // A teacher in step mode restarts into step mode: it pauses before the first call.
    fresh.setup.step_mode = step_mode;
    let (commands, events, _task) = crate::agent::spawn(fresh.setup);
    let events = match fresh.record {
        Some(recorder) => crate::record::tee(events, recorder),
        None => events,
    };
    if let Some(request) = fresh.request {
        let _ = commands.send(UserCommand::Submit(request));
    }
    msgs.push(match continues {
        Some(_) => Msg::Continued {
            provider: fresh.label,
            notices: fresh.notices,
        },
        None => Msg::Restarted {
            provider: fresh.label,
            notices: fresh.notices,
        },
    });
    (events, commands)
}

/// A fresh agent made into one that continues from `from` (docs/architecture.md,
/// "Data flow"): the settings in force now, the earlier branch's history before
/// that call, the scripted model at the turn it played there, no scenario request.
pub fn continued(mut fresh: FreshAgent, from: &ContinueFrom) -> FreshAgent {
    fresh.setup.config = from.config;
    fresh.setup.model.resume_at(from.answered);
    fresh.setup.resume = Some(from.resume.clone());
    fresh.request = None;
    fresh.record = None;
    fresh
}
