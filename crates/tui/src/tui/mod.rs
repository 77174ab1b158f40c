//! The full-screen terminal front end (ratatui + crossterm).
//!
//! A consumer of the agent's `AgentEvent` stream that sends `UserCommand`s back; it never
//! calls the agent or the provider directly. It runs the pipeline itself only in jobs off
//! the UI task, and never on the workspace's own store: a transcript's replay and the
//! compare view use dry-run stores, an opened session's replay a scratch store under the
//! data folder (`sessions::scratch`); the files it writes of its own are the legend's
//! "seen" marker and `/export`'s page. `app` holds state and its mutator, and each pane's
//! and covering view's drawing beside its state (pure); `screen` places them on the screen
//! with the status bar, the gauge and the hint line; `run` is the loop, `work` is the slow
//! file and replay work the loop runs off the UI task, `terminal` restores the screen on
//! every exit path, and `logging` keeps logs off the screen.

pub mod analysis;
pub mod app;
pub mod diff;
pub mod draw;
pub mod event_rows;
pub mod job_id;
pub mod keys;
pub mod layout;
pub mod legend;
pub mod list;
pub mod live;
pub mod logging;
pub mod pause;
pub mod replay;
pub mod rows;
pub mod run;
pub mod screen;
pub mod sessions;
pub mod terminal;
pub mod theme;
pub mod work;

pub use app::{App, Effect, Msg};
pub use logging::init_file_logging;
pub use run::{TuiError, TuiExit, TuiOptions, no_color_from_env, run};
pub use screen::render;
