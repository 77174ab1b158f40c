//! The full-screen terminal front end (ratatui + crossterm).
//!
//! A consumer of the agent's `AgentEvent` stream that sends `UserCommand`s back; it never
//! calls the agent, the provider or the pipeline's writers directly (a transcript replay
//! runs the pipeline on a dry-run store). `app` holds state and its mutator, `panes` draws
//! it (pure), `run` is the loop, `work` is the slow file and replay work the loop runs off
//! the UI task, `terminal` restores the screen on every exit path, and `logging` keeps logs
//! off the screen.

pub mod app;
pub mod diff;
pub mod keys;
pub mod layout;
pub mod logging;
pub mod panes;
pub mod pause;
pub mod replay;
pub mod rows;
pub mod run;
pub mod sessions;
pub mod terminal;
pub mod theme;
pub mod work;

pub use app::{App, Effect, Msg};
pub use logging::init_file_logging;
pub use panes::render;
pub use run::{TuiError, TuiExit, TuiOptions, no_color_from_env, run};
