//! The tokenizers a breakdown counts with: which family a model name belongs to, and each
//! family's encoder, built once per process on first use (a build takes a good part of a
//! second, so callers ask for it off the UI task).

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer;

/// A tokenizer family in the crate graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// GPT-4o, GPT-4.1, GPT-5, o-series, Codex models.
    O200k,
    /// GPT-4, GPT-3.5.
    Cl100k,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::O200k => "o200k_base",
            Family::Cl100k => "cl100k_base",
        }
    }
}

/// The family a model's own tokenizer is, when it is one of ours (OpenAI's names).
pub fn family_of(model: &str) -> Option<Family> {
    match tiktoken_rs::tokenizer::get_tokenizer(model)? {
        Tokenizer::O200kBase => Some(Family::O200k),
        Tokenizer::Cl100kBase => Some(Family::Cl100k),
        _ => None,
    }
}

static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();

/// The family's encoder, built on first use; None when it cannot be built.
pub fn encoder(f: Family) -> Option<&'static CoreBPE> {
    match f {
        Family::O200k => O200K.get_or_init(|| tiktoken_rs::o200k_base().ok()),
        Family::Cl100k => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().ok()),
    }
    .as_ref()
}

/// Tokens of `text` (special tokens read as text: it is content, not a prompt template).
pub fn count(bpe: &CoreBPE, text: &str) -> u64 {
    bpe.encode_ordinary(text).len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_map_to_their_family() {
        assert_eq!(family_of("gpt-5-codex"), Some(Family::O200k));
        assert_eq!(family_of("gpt-4o-2024-08-06"), Some(Family::O200k));
        assert_eq!(family_of("gpt-4-0613"), Some(Family::Cl100k));
        assert_eq!(family_of("claude-sonnet-4-5-20250929"), None);
    }
}
