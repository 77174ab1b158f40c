//! ctxlab: a terminal workbench where a coding agent runs while its context compaction
//! pipeline happens live. The library holds everything; the binary only parses flags and
//! picks a front end.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod compact;
pub mod inspect;
pub mod launch;
pub mod message;
pub mod provider;
pub mod replay;
pub mod settings;
pub mod store;
pub mod tools;
pub mod tui;
