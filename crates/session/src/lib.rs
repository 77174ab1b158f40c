//! Reading sessions (ctxlab's recordings and transcripts, Claude Code and Codex files,
//! `ctxlab proxy` captures) into one model, finding them on disk, following them as they
//! grow, the listing's cache, and where a call's context goes (`breakdown`). It only reads:
//! other tools' files are never written.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{message, safe_fs, util};
use ctxlab_pipeline::compact;

pub mod breakdown;
pub mod listing_cache;
pub mod session;
