//! Helpers shared by the integration tests, one file per concern. Each test module imports
//! what it uses by path (`crate::common::http::anthropic::simple_answer`), so a reader sees
//! where a helper lives. (`crate::support` holds the TUI's fake session and is the TUI
//! tests' own.)
#![allow(dead_code)]

/// Agent tests: a recording model, event collectors with timeouts, the history mirror.
pub mod agent;
/// The real binary as a command, bare or sealed off from the caller's setup.
pub mod cli;
/// Temp workspaces, a store in one, every file under a folder.
pub mod files;
/// Histories: message builders, the pairing check, sizes counted from scratch.
pub mod history;
/// wiremock responses and both wire formats' SSE bodies; models pointed at a mock server.
pub mod http;
/// Processes started through bash: alive, dead, pid files.
pub mod process;
/// Provider calls: a plain request, fast retries, reading stream events.
pub mod provider;
