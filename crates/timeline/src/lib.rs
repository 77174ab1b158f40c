//! The model-call timeline of a run (from the agent's events or a replay), its diffs and
//! lineage, and the exported HTML page.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_agent::{agent, run};
use ctxlab_analysis::{forgot, pipeline_replay};
use ctxlab_core::{message, store, util};
use ctxlab_pipeline::compact;
use ctxlab_provider::provider;
use ctxlab_session::{breakdown, session};

pub mod timeline;
