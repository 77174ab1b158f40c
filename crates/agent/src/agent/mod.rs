//! The agent: owns the history, runs the pipeline before every model call, calls the
//! model and the tools, and reports everything as `AgentEvent`s. It never touches a
//! terminal; front ends talk to it only through `UserCommand`s and events.
//!
//! `events` is the protocol; `state` holds `AgentSetup` and `Agent`; `turn` is the loop; `model_call` streams one
//! call and the summary request; `reactive` decides what an overflow error leads to;
//! `tools_batch` answers every tool_use of an answer; `control` reads commands while work
//! runs and holds step mode's pauses; `supervise` turns a panic of the agent task into
//! events a front end shows.

mod control;
pub mod events;
mod model_call;
mod reactive;
mod state;
mod supervise;
mod tools_batch;
pub mod turn;

pub use events::{
    AgentEvent, ErrorKind, NextStep, StepTarget, StopReason, SummarySizes, UserCommand,
    answer_cut_text, retry_text,
};
pub use state::{Agent, AgentSetup, Resume};
pub use supervise::{in_agent_task, supervise};
pub use tools_batch::{CANCELLED_RESULT, COMPACT_TOOL_RESULT, INCOMPLETE_RESULT};
pub use turn::spawn;
