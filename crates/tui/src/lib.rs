//! The workbench: the ratatui front end, its views, its jobs and its event loop. It draws
//! state and never runs the agent itself.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_agent::{agent, record, run};
use ctxlab_analysis::{capture_view, compare, forgot, fork, pipeline_replay};
use ctxlab_core::{export_file, message, process, sanitize, store, util};
use ctxlab_pipeline::compact;
use ctxlab_session::{breakdown, listing_cache, session};
use ctxlab_timeline::timeline;

pub mod tui;
