//! `ContextWindow`: a model's context window as the server's refusal gives it, in tokens
//! (a real API's count) or in chars (the scripted model's simulated window). The agent
//! reads it from the typed provider error and hands it to a strategy's reactive stage,
//! which may size its summary request to it (guarded does; docs/strategies.md).
//!
//! A leaf: it knows numbers only.

/// A context window named by a provider's refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextWindow {
    Tokens(usize),
    Chars(usize),
}

/// Chars per token assumed when sizing text for a window given in tokens: low on purpose,
/// so the text fits whatever the tokenizer.
const CHARS_PER_TOKEN: usize = 3;

impl ContextWindow {
    /// The chars a summary request's user text may take: the window less the system text
    /// and, for a window in tokens (which counts the answer too), the summary's tokens.
    pub fn input_chars(self, system_chars: usize, max_tokens: usize) -> usize {
        match self {
            ContextWindow::Tokens(t) => t
                .saturating_sub(max_tokens)
                .saturating_mul(CHARS_PER_TOKEN)
                .saturating_sub(system_chars),
            ContextWindow::Chars(c) => c.saturating_sub(system_chars),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_leaves_room_for_the_system_text_and_the_answer() {
        assert_eq!(
            ContextWindow::Tokens(10_000).input_chars(100, 2_000),
            23_900
        );
        assert_eq!(ContextWindow::Chars(42_500).input_chars(500, 2_000), 42_000);
        assert_eq!(ContextWindow::Tokens(1_000).input_chars(100, 2_000), 0);
        assert_eq!(
            ContextWindow::Tokens(usize::MAX).input_chars(0, 0),
            usize::MAX
        );
    }
}
