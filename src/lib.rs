//! ctxlab: a terminal workbench where a coding agent runs while its context compaction
//! pipeline happens live. The library holds everything; the binary only parses flags and
//! picks a front end. docs/architecture.md describes the modules and what may import what.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The tools' process groups, the openat-style file handles and the signals are POSIX, and
// only Linux and macOS are built and tested: say so at build time instead of half working.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("ctxlab supports Linux and macOS only");

pub mod agent;
pub mod breakdown;
pub mod capture_view;
pub mod commands;
pub mod compact;
pub mod compare;
pub mod demo;
pub mod export_file;
pub mod forgot;
pub mod fork;
pub mod listing_cache;
pub mod message;
pub mod pipeline_replay;
pub mod process;
pub mod provider;
pub mod proxy;
pub mod pyrepr;
pub mod record;
pub mod run;
pub mod safe_fs;
pub mod sanitize;
pub mod session;
pub mod startup;
pub mod store;
pub mod timeline;
pub mod tools;
pub mod tui;
pub mod user_config;
pub mod util;
