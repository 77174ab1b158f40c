//! Bounded text capture for tool output: a streaming lossy UTF-8 decoder and a char-capped
//! buffer that counts what it drops.
//!
//! It owns the truncation note format. It must stay bounded: whatever a command or a file
//! produces, at most the cap (plus one partial UTF-8 sequence) is held in memory, while the
//! full length is still counted so the note can say exactly how much was cut.

/// Start of the note appended when text was cut: `\n[output truncated: N chars cut]`.
pub const TRUNCATION_NOTE_PREFIX: &str = "[output truncated: ";

/// The note appended after the kept text when `cut_chars` chars were dropped from the end.
/// It starts with a newline so the kept text is exactly the first `cap` chars.
pub fn truncation_note(cut_chars: usize) -> String {
    format!("\n{TRUNCATION_NOTE_PREFIX}{cut_chars} chars cut]")
}

/// Appends `line` on a line of its own: a newline first unless `text` is empty or already
/// ends with one.
pub(crate) fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}

/// Decodes a byte stream fed in arbitrary chunks exactly as `String::from_utf8_lossy` would
/// decode the concatenation: each maximal invalid subsequence becomes one U+FFFD. Only an
/// incomplete sequence at a chunk end (at most 3 bytes) is carried over.
#[derive(Debug, Default)]
pub(crate) struct LossyDecoder {
    pending: Vec<u8>,
}

impl LossyDecoder {
    pub(crate) fn feed(&mut self, bytes: &[u8], sink: &mut impl FnMut(&str)) {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut buf = std::mem::take(&mut self.pending);
            buf.extend_from_slice(bytes);
            joined = buf;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    if !valid.is_empty() {
                        sink(valid);
                    }
                    return;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    // `valid` is valid UTF-8 by the contract of `valid_up_to`.
                    if let Ok(valid) = std::str::from_utf8(valid)
                        && !valid.is_empty()
                    {
                        sink(valid);
                    }
                    match err.error_len() {
                        Some(bad) => {
                            sink("\u{FFFD}");
                            rest = &after[bad..];
                        }
                        None => {
                            // An incomplete sequence at the end: the next chunk may finish it.
                            self.pending = after.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: a sequence left incomplete becomes one U+FFFD.
    pub(crate) fn finish(&mut self, sink: &mut impl FnMut(&str)) {
        if !self.pending.is_empty() {
            self.pending.clear();
            sink("\u{FFFD}");
        }
    }
}

/// Keeps the first `cap` chars pushed into it and counts every char, kept or not.
#[derive(Debug, Clone)]
pub(crate) struct CappedText {
    text: String,
    kept_chars: usize,
    total_chars: usize,
    cap: usize,
}

impl CappedText {
    pub(crate) fn new(cap: usize) -> Self {
        CappedText {
            text: String::new(),
            kept_chars: 0,
            total_chars: 0,
            cap,
        }
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        let room = self.cap - self.kept_chars;
        if room == 0 {
            self.total_chars += s.chars().count();
            return;
        }
        // Find the byte index after `room` chars, counting the rest only if there is one.
        match s.char_indices().nth(room) {
            None => {
                let n = s.chars().count();
                self.text.push_str(s);
                self.kept_chars += n;
                self.total_chars += n;
            }
            Some((cut_at, _)) => {
                self.text.push_str(&s[..cut_at]);
                self.kept_chars += room;
                self.total_chars += room + s[cut_at..].chars().count();
            }
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn total_chars(&self) -> usize {
        self.total_chars
    }

    pub(crate) fn cut_chars(&self) -> usize {
        self.total_chars - self.kept_chars
    }

    /// The kept text followed by the truncation note when anything was cut.
    pub(crate) fn into_text_with_note(self) -> String {
        let cut = self.cut_chars();
        let mut text = self.text;
        if cut > 0 {
            text.push_str(&truncation_note(cut));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_in_chunks(bytes: &[u8], chunk: usize) -> String {
        let mut out = String::new();
        let mut dec = LossyDecoder::default();
        for piece in bytes.chunks(chunk.max(1)) {
            dec.feed(piece, &mut |s| out.push_str(s));
        }
        dec.finish(&mut |s| out.push_str(s));
        out
    }

    #[test]
    fn decoder_replaces_invalid_bytes() {
        let bytes = b"ok \xff\xfe end \xe2\x82";
        assert_eq!(decode_in_chunks(bytes, 1), String::from_utf8_lossy(bytes));
        assert_eq!(
            decode_in_chunks(bytes, 100),
            "ok \u{FFFD}\u{FFFD} end \u{FFFD}"
        );
    }

    #[test]
    fn decoder_joins_a_char_split_across_chunks() {
        let bytes = "é€😀".as_bytes();
        for chunk in 1..bytes.len() {
            assert_eq!(decode_in_chunks(bytes, chunk), "é€😀");
        }
    }

    proptest! {
        #[test]
        fn decoder_matches_from_utf8_lossy(bytes in proptest::collection::vec(any::<u8>(), 0..64),
                                           chunk in 1usize..8) {
            prop_assert_eq!(decode_in_chunks(&bytes, chunk), String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn capped_text_keeps_prefix_and_counts_all(parts in proptest::collection::vec(".{0,12}", 0..10),
                                                    cap in 0usize..40) {
            let mut capped = CappedText::new(cap);
            for p in &parts {
                capped.push_str(p);
            }
            let all: String = parts.concat();
            let expected: String = all.chars().take(cap).collect();
            prop_assert_eq!(capped.text(), expected.as_str());
            prop_assert_eq!(capped.total_chars(), all.chars().count());
            prop_assert_eq!(capped.cut_chars(), all.chars().count().saturating_sub(cap));
        }
    }

    #[test]
    fn note_only_when_cut() {
        let mut c = CappedText::new(5);
        c.push_str("abc");
        assert_eq!(c.clone().into_text_with_note(), "abc");
        c.push_str("défgh");
        assert_eq!(
            c.into_text_with_note(),
            "abcdé\n[output truncated: 3 chars cut]"
        );
    }
}
