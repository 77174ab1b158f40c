//! The agent: owns the history, runs the pipeline before every model call, calls the
//! model and the tools, and reports everything as `AgentEvent`s. It never touches a
//! terminal; front ends talk to it only through `UserCommand`s and events.

pub mod events;
pub mod turn;

pub use events::{AgentEvent, ErrorKind, NextStep, UserCommand};
pub use turn::{Agent, AgentSetup, spawn};
