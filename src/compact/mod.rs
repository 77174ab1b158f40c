//! The compaction pipeline (spec: `shared/spec/compaction.md`, strategy `lesson`).
//!
//! Pure and synchronous: it knows messages, sizes, the on-disk `Store` and summary requests
//! as data. It never performs a model call, never touches a terminal and never imports
//! tokio: `compact_history` and `reactive_compact` hand back a `SummaryRequest` and take
//! the summary text in a second step, so the caller decides how the call is made.

pub(crate) mod printable_table;
pub mod pyjson;
pub mod size;
pub mod summary;

pub use size::estimate_size;
