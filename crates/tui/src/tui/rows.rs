//! One message as the UI shows it: `MessageInfo` classifies a message once (role, kind,
//! one-line label, size, persisted paths, each result's fate: `timeline::label`) so that
//! drawing a row is a few string copies, and it caches the tokenizer's count. It also lays out a message's full text for an expanded
//! row. It owns no view state and never reads the clock or the disk.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use unicode_width::UnicodeWidthChar;

use crate::message::Message;
use crate::timeline::label::{self, ResultInfo};

pub use crate::timeline::label::RowKind;

/// The widest label kept per row, in terminal columns; the pane clips further to its width.
const LABEL_MAX_COLS: usize = 240;

/// Every `MessageInfo` gets a distinct id so expansion state and diffs survive index
/// shifts when the history is replaced.
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// A message plus what the UI needs to draw it cheaply. (`PartialEq` lets effects that
/// carry rows be compared in tests.)
#[derive(Debug, PartialEq)]
pub struct MessageInfo {
    pub uid: u64,
    pub message: Message,
    pub kind: RowKind,
    /// The collapsed row's text after the role, e.g. `tool_use bash {"command":"ls"}`.
    pub label: String,
    /// `message.estimate_size()`, the lesson's chars.
    pub chars: usize,
    /// Workspace-relative files this message's `<persisted-output>` markers point at.
    pub persisted_paths: Vec<String>,
    /// Each tool result it holds, with its id and fate.
    pub results: Vec<ResultInfo>,
    /// The tokenizer's count, set once by `App::update` when a counting job's result
    /// arrives (the job itself only reads the row).
    tokens: OnceLock<usize>,
}

impl MessageInfo {
    pub fn new(message: Message) -> Arc<MessageInfo> {
        let chars = message.estimate_size();
        let l = label::label(&message, clip);
        Arc::new(MessageInfo {
            uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
            message,
            kind: l.kind,
            label: l.label,
            chars,
            persisted_paths: l.persisted_paths,
            results: l.results,
            tokens: OnceLock::new(),
        })
    }

    pub fn role(&self) -> &str {
        self.message.role()
    }

    pub fn role_kind(&self) -> crate::message::Role {
        self.message.role_kind()
    }

    pub fn tokens(&self) -> Option<usize> {
        self.tokens.get().copied()
    }

    /// The text the tokenizer counts for this message (its JSON).
    pub fn token_text(&self) -> String {
        serde_json::to_string(&self.message).unwrap_or_default()
    }

    /// Keeps the count a `Work::CountTokens` job sent back (`App::update` calls it); the
    /// first count stays.
    pub fn set_tokens(&self, n: usize) {
        let _ = self.tokens.set(n);
    }

    /// The full text an expanded row shows, block by block; each tool result is headed
    /// by its id and fate.
    pub fn full_text(&self) -> String {
        label::full_text(&self.message)
    }
}

fn clip(s: &str) -> String {
    crate::util::clip_width(s, LABEL_MAX_COLS)
}

/// Hard-wraps `text` to `width` terminal columns, at most `max_lines` lines. The second
/// value says whether text was left over. Columns, not chars: a CJK character or an emoji
/// takes two, and a piece of `width` chars would overflow the pane. Stops early so a
/// 200,000-char result costs only what is shown.
pub fn wrap_lines(text: &str, width: usize, max_lines: usize) -> (Vec<String>, bool) {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        let mut chars = line.chars().map(expand_tab).peekable();
        // An empty line still takes a line.
        let mut first = true;
        while first || chars.peek().is_some() {
            first = false;
            if out.len() == max_lines {
                return (out, true);
            }
            let mut piece = String::new();
            let mut used = 0;
            while let Some(&c) = chars.peek() {
                let w = c.width().unwrap_or(0);
                // A wide char that does not fit starts the next line (unless the line is
                // empty: a 1-column pane still shows it).
                if used + w > width && !piece.is_empty() {
                    break;
                }
                piece.push(c);
                used += w;
                chars.next();
            }
            out.push(piece);
        }
    }
    (out, false)
}

/// The word wrapping every view shares, textwrap's first fit: lines break at ASCII spaces
/// only (a path or a URL stays whole), a word longer than a line is cut by columns, no
/// hyphen is added. Widths are terminal columns (a CJK character or an emoji takes two).
pub fn wrap_options(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width.max(1))
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        .break_words(true)
}

/// One line (no `\n`) in rows of at most `width` terminal columns, broken between words,
/// at most `max_rows` rows; each row with the index of its first char in `line`, so a
/// search match (kept in chars) can be placed in it. A word longer than a row is cut by
/// columns; a wide char that does not fit starts the next row. The spaces a row ends at
/// are left out (the next row starts at the following word), so rows need not be
/// contiguous. The second value says whether rows were left over. The viewer's renderer
/// and its scrolling both lay lines out with this, so they count the same rows.
pub fn wrap_words_at(line: &str, width: usize, max_rows: usize) -> (Vec<(usize, String)>, bool) {
    let line: String = line
        .trim_end_matches('\r')
        .chars()
        .map(expand_tab)
        .collect();
    let options = wrap_options(width);
    // Only a prefix is wrapped, so a 200,000-char line costs what is shown. Once a prefix
    // wraps to more rows than are kept, its first rows are the whole line's: first fit
    // places each word by the words before it, and the one the prefix cut (shorter than
    // it is) did not fit before the row past the cap, so the whole word would not either.
    let mut take = max_rows.saturating_add(1).saturating_mul(width.max(1) + 1);
    loop {
        let end = line.char_indices().nth(take).map_or(line.len(), |(i, _)| i);
        let prefix = &line[..end];
        let rows = textwrap::wrap(prefix, &options);
        if rows.len() > max_rows || end == line.len() {
            let mut cursor = 0;
            let out = rows
                .iter()
                .take(max_rows)
                .map(|row| {
                    // A row is the line's text from its first word on: found from where
                    // the row before it ended (only spaces lie between).
                    let at = prefix[cursor..]
                        .find(row.as_ref())
                        .map_or(cursor, |i| cursor + i);
                    cursor = at + row.len();
                    (prefix[..at].chars().count(), row.to_string())
                })
                .collect();
            return (out, rows.len() > max_rows);
        }
        take = take.saturating_mul(2);
    }
}

/// Wraps `text` at spaces to `width` columns, each `\n` starting a line; a word longer
/// than a line (a path) is cut by columns. For headers, where a word split in two reads
/// badly.
pub fn word_wrap(text: &str, width: usize) -> Vec<String> {
    textwrap::wrap(text, wrap_options(width))
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect()
}

/// Tabs would make the terminal jump; one space keeps columns predictable.
fn expand_tab(c: char) -> char {
    if c == '\t' { ' ' } else { c }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::s08::micro::MICRO_PLACEHOLDER;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn kinds_are_recognized() {
        let k = |m: Message| MessageInfo::new(m).kind;
        assert_eq!(k(Message::user_text("hi")), RowKind::Request);
        assert_eq!(k(Message::user_text("[snipped 4 messages]")), RowKind::Snip);
        assert_eq!(
            k(Message::user_text(
                "[Compacted]\n\nAuthoritative request:\nx"
            )),
            RowKind::Summary
        );
        assert_eq!(
            k(Message::assistant_blocks(vec![block::tool_use(
                "t",
                "bash",
                json!({"command": "ls"})
            )])),
            RowKind::ToolUse
        );
        assert_eq!(
            k(Message::user_blocks(vec![block::tool_result(
                "t",
                MICRO_PLACEHOLDER
            )])),
            RowKind::Placeholder
        );
        let p = MessageInfo::new(Message::user_blocks(vec![block::tool_result(
            "t",
            "<persisted-output>\nFull output: .task_outputs/tool-results/t.txt\nPreview:\nab\n</persisted-output>",
        )]));
        assert_eq!(p.kind, RowKind::Persisted);
        assert_eq!(p.persisted_paths, vec![".task_outputs/tool-results/t.txt"]);
    }

    #[test]
    fn word_wrap_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(word_wrap("one two three", 7), vec!["one two", "three"]);
        let lines = word_wrap("to .task_outputs/x.txt end", 10);
        assert_eq!(lines, vec!["to", ".task_outp", "uts/x.txt", "end"]);
        // Nothing is lost: the path reads whole across the cut.
        assert!(lines.concat().contains(".task_outputs/x.txt"));
    }

    #[test]
    fn word_rows_break_between_words_and_keep_char_offsets() {
        let rows = |t: &str, w: usize| wrap_words_at(t, w, usize::MAX).0;
        assert_eq!(
            rows("the parser reads", 10),
            vec![(0, "the parser".to_string()), (11, "reads".to_string())]
        );
        // A word longer than the row is cut by columns; the next word follows it.
        assert_eq!(
            rows("a abcdefghij b", 4),
            vec![
                (0, "a".to_string()),
                (2, "abcd".to_string()),
                (6, "efgh".to_string()),
                (10, "ij b".to_string())
            ]
        );
        // Offsets are chars, widths are columns: 解析 is four columns.
        assert_eq!(
            rows("解析 器x 🎉y", 5),
            vec![
                (0, "解析".to_string()),
                (3, "器x".to_string()),
                (6, "🎉y".to_string())
            ]
        );
        // Indentation stays; an empty line is one empty row.
        assert_eq!(
            rows("  ab cd", 5),
            vec![(0, "  ab".to_string()), (5, "cd".to_string())]
        );
        assert_eq!(rows("", 5), vec![(0, String::new())]);
        let (capped, more) = wrap_words_at(&"word ".repeat(100), 10, 3);
        assert_eq!((capped.len(), more), (3, true));
    }

    /// The capped wrap reads only a prefix: its rows must still be the whole line's first
    /// rows, and it must say rows were left over exactly when they were.
    #[test]
    fn capped_word_rows_are_the_first_rows_of_the_whole_line() {
        let line = "a ".to_string()
            + &"x".repeat(37)
            + " short words 解析器 then 🎉🎉 more   spaces "
            + &"long".repeat(30)
            + " end";
        for width in [1, 2, 3, 5, 8, 13, 40] {
            let (all, more) = wrap_words_at(&line, width, usize::MAX);
            assert!(!more);
            for cap in 0..all.len() + 2 {
                let (rows, more) = wrap_words_at(&line, width, cap);
                let want = &all[..cap.min(all.len())];
                assert_eq!(rows, want, "width {width}, cap {cap}");
                assert_eq!(more, cap < all.len(), "width {width}, cap {cap}");
            }
            for (_, row) in &all {
                // A wide char alone may overflow a 1-column row; nothing else does.
                assert!(
                    crate::util::display_width(row) <= width.max(2),
                    "{row:?} at {width}"
                );
            }
        }
    }

    #[test]
    fn wrapping_stops_at_the_cap() {
        let (lines, more) = wrap_lines("abcdef\n\nxy", 4, 10);
        assert_eq!(lines, vec!["abcd", "ef", "", "xy"]);
        assert!(!more);
        let (lines, more) = wrap_lines(&"a".repeat(100), 10, 3);
        assert_eq!(lines.len(), 3);
        assert!(more);
    }

    #[test]
    fn wrapping_counts_columns_not_chars() {
        // Two columns each: three fit in 7 columns, the fourth starts the next line.
        let (lines, more) = wrap_lines("解析器です", 7, 10);
        assert_eq!(lines, vec!["解析器", "です"]);
        assert!(!more);
        let (lines, _) = wrap_lines("ab🚀cd", 3, 10);
        assert_eq!(lines, vec!["ab", "🚀c", "d"]);
        // A pane one column wide still shows a wide char, alone.
        let (lines, _) = wrap_lines("解a", 1, 10);
        assert_eq!(lines, vec!["解", "a"]);
        for l in wrap_lines(&"漢字とemoji🎉".repeat(20), 11, 100).0 {
            assert!(crate::util::display_width(&l) <= 11, "{l}");
        }
    }
}
