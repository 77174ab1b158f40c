//! Analyses over recorded sessions: the one replay loop (`pipeline_replay`), the strategies
//! compared (`compare`), what a compaction forgot (`forgot`), a capture's requests
//! (`capture_view`), and new sessions forked before a compaction (`fork`).
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{message, safe_fs, sanitize, store, util};
use ctxlab_pipeline::compact;
use ctxlab_session::{breakdown, session};

pub mod capture_view;
pub mod compare;
pub mod forgot;
pub mod fork;
pub mod pipeline_replay;
