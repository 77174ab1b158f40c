//! ctxlab: a terminal workbench where a coding agent runs while its context compaction
//! pipeline happens live. The work is done by the workspace's crates (`crates/`, one per
//! layer of docs/architecture.md); this library is their face, under the module names the
//! architecture uses, plus the headless commands the binary runs. The binary only parses
//! flags and picks a front end.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub use ctxlab_agent::{agent, demo, record, run, startup, tools, user_config};
pub use ctxlab_analysis::{capture_view, compare, forgot, fork, pipeline_replay};
pub use ctxlab_core::{export_file, message, process, pyrepr, safe_fs, sanitize, store, util};
pub use ctxlab_pipeline::compact;
pub use ctxlab_provider::provider;
pub use ctxlab_proxy::proxy;
pub use ctxlab_session::{breakdown, listing_cache, session};
pub use ctxlab_timeline::timeline;
pub use ctxlab_tui::tui;

pub mod commands;
