//! Context windows of the models Claude Code and Codex record, by model id, each with where
//! the figure comes from. Only what a vendor's own page states is here; a model not in the
//! table has no window (headroom then rests on the session's own compactions, or on
//! nothing). A window the session file records itself (Codex's `model_context_window`), or
//! that Claude Code passes to a status line, always wins over this table.

/// One row: a model id prefix, its window in tokens, and the source of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRow {
    pub prefix: &'static str,
    pub tokens: u64,
    pub source: &'static str,
}

/// Anthropic's support article "How large is the Claude API's context window?"
/// (support.claude.com, article 8606395): 1M tokens for the models that offer it when the
/// 1M window is asked for, 200K for every other model and by default.
const CLAUDE_WINDOW_ARTICLE: &str =
    "Anthropic support article 8606395, \"How large is the Claude API's context window?\"";

/// The first row whose prefix matches wins, so specific rows come before general ones.
pub const WINDOWS: &[WindowRow] = &[
    WindowRow {
        prefix: "claude-",
        tokens: 200_000,
        source: CLAUDE_WINDOW_ARTICLE,
    },
    // OpenAI's model page for GPT-5-Codex (developers.openai.com, docs/models/gpt-5-codex):
    // "400,000 context window".
    WindowRow {
        prefix: "gpt-5-codex",
        tokens: 400_000,
        source: "OpenAI's model page for gpt-5-codex",
    },
];

/// The window of `model` from the table, with its source.
pub fn window_of(model: &str) -> Option<WindowRow> {
    // Claude Code writes `[1m]` after a model id when the 1M window was asked for.
    if model.ends_with("[1m]") && model.starts_with("claude-") {
        return Some(WindowRow {
            prefix: "claude-…[1m]",
            tokens: 1_000_000,
            source: CLAUDE_WINDOW_ARTICLE,
        });
    }
    WINDOWS
        .iter()
        .find(|r| model.starts_with(r.prefix))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ids_have_a_window_with_its_source_and_others_none() {
        let w = window_of("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(w.tokens, 200_000);
        assert!(w.source.contains("8606395"));
        assert_eq!(window_of("claude-opus-4-1[1m]").unwrap().tokens, 1_000_000);
        assert_eq!(window_of("gpt-5-codex").unwrap().tokens, 400_000);
        assert_eq!(window_of("gpt-4o"), None);
        assert_eq!(window_of("<synthetic>"), None);
        assert!(WINDOWS.iter().all(|r| !r.source.is_empty()));
    }
}
