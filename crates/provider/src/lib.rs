//! The model providers behind one `Model` trait: Anthropic Messages, OpenAI-compatible
//! chat, the scripted model; the HTTP client, the SSE decoder with its limits, retries and
//! deadlines.
//!
//! One layer of the workspace (docs/architecture.md, "Crates"): it may use only the crates
//! its Cargo.toml names, so the import rules between layers are the compiler's.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules of the crates below, under the names the import table uses, so a path such as
// `crate::message::Message` reads the same in every crate.
use ctxlab_core::{message, util};
use ctxlab_pipeline::compact;

pub mod provider;
