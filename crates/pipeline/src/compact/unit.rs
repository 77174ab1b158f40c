//! `SizeUnit`: what a strategy counts a history's size in, and how it measures one. A leaf:
//! every stage, report and strategy uses it, and it uses none of them.

use serde::Serialize;

use crate::message::{Message, estimate_size, json_size};

/// What a strategy counts sizes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeUnit {
    /// Code points of Python's `str()` of the history (s08, guarded).
    #[default]
    Chars,
    /// Code points of `json.dumps(history, ensure_ascii=False)` (s08-latest).
    JsonChars,
    /// `len(str(history)) // 4` (s06).
    Tokens,
}

impl SizeUnit {
    /// The size of a history in this unit, from the messages' cached lengths.
    pub fn measure(self, messages: &[Message]) -> usize {
        match self {
            SizeUnit::Chars => estimate_size(messages),
            SizeUnit::JsonChars => json_size(messages),
            SizeUnit::Tokens => estimate_size(messages) / 4,
        }
    }

    /// The word after a number: `chars`, `JSON chars`, `tokens`.
    pub fn label(self) -> &'static str {
        match self {
            SizeUnit::Chars => "chars",
            SizeUnit::JsonChars => "JSON chars",
            SizeUnit::Tokens => "tokens",
        }
    }

    /// How many chars of Python `str()` one unit stands for: 4 for s06's tokens, else 1.
    pub fn chars_per_unit(self) -> usize {
        match self {
            SizeUnit::Tokens => 4,
            SizeUnit::Chars | SizeUnit::JsonChars => 1,
        }
    }

    pub(crate) fn is_chars(&self) -> bool {
        *self == SizeUnit::Chars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_measure_the_same_history_three_ways() {
        let h = vec![Message::user_text("é\"x")];
        // {'role': 'user', 'content': 'é"x'} in a list; the JSON escapes the quote.
        assert_eq!(SizeUnit::Chars.measure(&h), 36);
        assert_eq!(SizeUnit::JsonChars.measure(&h), 37);
        assert_eq!(SizeUnit::Tokens.measure(&h), 9);
    }
}
