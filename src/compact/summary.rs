//! Placeholder for the extractive summary (being written in the `compact` worktree); it
//! exists only so the scripted model compiles here and is replaced at merge.

/// A deterministic stand-in: the first 200 chars of the summarizer's input.
pub fn extractive_summary_from_request(text: &str) -> String {
    text.chars().take(200).collect()
}
