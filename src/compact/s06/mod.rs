//! `s06`: the lesson's older three-layer design (docs/strategies.md, "s06").
//!
//! Before every call: `micro` (older results become `[Previous: used {tool}]`), then
//! `auto_compact` when the history is over `context_limit` tokens (`len(str(history)) // 4`).
//! No budget, no snip, no reactive stage. The `compact` tool answers `Compressing...`; after
//! its batch the history is auto-compacted with its focus and the turn ends.

pub mod auto_compact;
pub mod micro;

pub use auto_compact::begin_auto_compact;
pub use micro::micro_previous;

/// The summarizer's one user message starts with this; s06 sends no system prompt.
pub const SUMMARY_PROMPT: &str = "Summarize this conversation for continuity. Include: 1) What was accomplished, 2) Current state, 3) Key decisions made. Be concise but preserve critical details.";

/// What stands in for a summary the model returned without text.
pub const NO_SUMMARY: &str = "No summary generated.";

/// What a `compact` tool call answers.
pub const COMPACT_TOOL_RESULT: &str = "Compressing...";

/// The `compact` tool's description and its `focus` field's, as the lesson words them.
pub const COMPACT_TOOL_DESCRIPTION: &str = "Trigger manual conversation compression.";
pub const FOCUS_DESCRIPTION: &str = "What to preserve in the summary";

/// Results of this tool are reference material and never replaced.
pub const PRESERVED_TOOL: &str = "read_file";
