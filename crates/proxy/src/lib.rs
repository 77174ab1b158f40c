//! `ctxlab proxy`: a loopback pass-through between an agent and its model API that captures
//! each exchange, byte for byte, without keeping keys.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{safe_fs, sanitize, util};
use ctxlab_provider::provider;
use ctxlab_session::session;

pub mod proxy;
