//! The leaves every other crate stands on: the message model and its size unit (the length
//! of Python's `str()`), the one sanitizer of outside text, safe file handling, the store
//! of persisted outputs and transcripts, the exported-file writer, the process signals.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The tools' process groups, the openat-style file handles and the signals are POSIX, and
// only Linux and macOS are built and tested: say so at build time instead of half working.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("ctxlab supports Linux and macOS only");

pub mod export_file;
pub mod message;
pub mod process;
pub mod pyrepr;
pub mod safe_fs;
pub mod sanitize;
pub mod store;
pub mod util;
