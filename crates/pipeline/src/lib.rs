//! The compaction pipeline and its strategies: pure and synchronous; it builds a summary
//! request as data and takes the summary text back, and never touches the network, tokio or
//! a terminal.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{message, pyrepr, store, util};

pub mod compact;
