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
/// A small HTML tokenizer: well-formedness and text of exported pages.
pub mod html;
/// wiremock responses and both wire formats' SSE bodies; models pointed at a mock server.
pub mod http;
/// Small models for the agent: a fixed text, a panic, one tool call.
pub mod models;
/// Processes started through bash: alive, dead, pid files.
pub mod process;
/// Provider calls: a plain request, fast retries, reading stream events.
pub mod provider;
/// A program in a real pseudo-terminal, read through a vt100 parser.
pub mod pty;
/// The real binary in a scratch home; waits for pid files and dead processes.
pub mod scratch;
/// A hand-written Anthropic stub on 127.0.0.1 for tests of the real binary.
pub mod stub_server;
/// The scripted tour, run once: its events and workspace.
pub mod tour;
