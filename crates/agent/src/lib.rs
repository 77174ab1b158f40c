//! The agent: its loop and protocol (`agent`), the tools the model may call, the run's
//! events folded once into facts with stable ids (`run`), where settings come from
//! (`user_config`), the recording of live sessions (`record`), and the composition root
//! that makes a ready agent (`startup`, with the embedded demo project).
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{message, safe_fs, store, util};
use ctxlab_pipeline::compact;
use ctxlab_provider::provider;
use ctxlab_session::session;

pub mod agent;
pub mod demo;
pub mod record;
pub mod run;
pub mod startup;
pub mod tools;
pub mod user_config;
