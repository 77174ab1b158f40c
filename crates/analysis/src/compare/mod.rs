//! Comparing strategies on one session (docs/strategies.md, "What each strategy loses"):
//! the reachability accounting (`reachability`, with the index of the store's files in
//! `files`) and the runner that replays a session under one strategy and collects, call by
//! call, sizes, stages, summary calls, broken tool pairs and reachability (`run`), and what
//! each strategy would have sent beside a captured agent's requests (`beside`).
//!
//! It observes the library's one replay loop (`crate::pipeline_replay::replay_events`) and reads the
//! files the replay's store wrote, through the store (so a dry-run store works too). It
//! never runs a stage itself, never calls a model and never prints: `ctxlab replay
//! --compare` and the workbench's compare view draw what it returns.

pub mod beside;
mod files;
pub mod reachability;
pub mod run;

pub use reachability::{
    Accountant, Amount, Kept, Piece, PieceId, PieceKind, PieceState, Reach, ReachTotals,
};
pub use run::{CallSummary, RunDetail, RunOptions, RunTotals, StrategyRun, run_strategy};

#[cfg(test)]
mod tests;
