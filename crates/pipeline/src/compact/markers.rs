//! The texts the pipeline puts in a history in place of what it took out, written and
//! recognised in one place (docs/pipeline.md names each stage's marker). A stage writes its
//! marker through `Marker::write` or `persisted_marker`; every reader (the active request,
//! the breakdown, the timeline's labels, the stages that must not cut a marker twice) reads
//! it back through `Marker::parse` or `persisted_path`, so the two can never drift apart.
//! The exact texts are the lesson's: sizes are measured on them, so they must not change.

/// A user-text marker one strategy left where messages were cut or compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker<'a> {
    /// s08's snip_compact: `[snipped {removed} messages]`.
    Snipped { removed: usize },
    /// s08-latest's snip: `[{removed} messages archived at {path}]`.
    ArchivedAt { removed: usize, path: &'a str },
    /// guarded's snip: `[{N} messages ({first}-{last}) archived in {path}]`, original indices.
    ArchivedIn {
        first: usize,
        last: usize,
        path: &'a str,
    },
    /// s06's auto_compact: `[Conversation compressed. Transcript: {transcript}]`, then the
    /// summary after a blank line (only the first line is the marker).
    Compressed { transcript: &'a str },
}

const SNIPPED: (&str, &str) = ("[snipped ", " messages]");
const ARCHIVED_AT: &str = " messages archived at ";
const ARCHIVED_IN: &str = ") archived in ";
const COMPRESSED: &str = "[Conversation compressed. Transcript: ";

/// `s` as a count written in digits only (no sign, no space).
fn count(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl<'a> Marker<'a> {
    /// The marker's text. `Compressed` gives its first line; s06 appends the summary.
    pub fn write(&self) -> String {
        match *self {
            Marker::Snipped { removed } => format!("{}{removed}{}", SNIPPED.0, SNIPPED.1),
            Marker::ArchivedAt { removed, path } => format!("[{removed}{ARCHIVED_AT}{path}]"),
            Marker::ArchivedIn { first, last, path } => format!(
                "[{} messages ({first}-{last}{ARCHIVED_IN}{path}]",
                last.saturating_sub(first) + 1
            ),
            Marker::Compressed { transcript } => format!("{COMPRESSED}{transcript}]"),
        }
    }

    /// The marker `text` is, if it is one in the exact shape its stage writes.
    pub fn parse(text: &'a str) -> Option<Marker<'a>> {
        if let Some(rest) = text.strip_prefix(COMPRESSED) {
            let first = rest.split('\n').next()?;
            let transcript = first.strip_suffix(']')?;
            return Some(Marker::Compressed { transcript });
        }
        let body = text.strip_prefix('[')?.strip_suffix(']')?;
        if let Some(n) = text
            .strip_prefix(SNIPPED.0)
            .and_then(|r| r.strip_suffix(SNIPPED.1))
        {
            return Some(Marker::Snipped { removed: count(n)? });
        }
        if let Some((n, path)) = body.split_once(ARCHIVED_AT) {
            return Some(Marker::ArchivedAt {
                removed: count(n)?,
                path,
            });
        }
        let (n, rest) = body.split_once(" messages (")?;
        let (range, path) = rest.split_once(ARCHIVED_IN)?;
        let (a, b) = range.split_once('-')?;
        let (first, last) = (count(a)?, count(b)?);
        count(n)?;
        (first <= last).then_some(Marker::ArchivedIn { first, last, path })
    }

    /// The original message indices a guarded archive marker stands for.
    pub fn archived_range(text: &str) -> Option<(usize, usize)> {
        match Marker::parse(text)? {
            Marker::ArchivedIn { first, last, .. } => Some((first, last)),
            _ => None,
        }
    }
}

const PERSISTED_START: &str = "<persisted-output>\n";
const FULL_OUTPUT: &str = "Full output: ";

/// tool_result_budget's marker in place of a persisted result: the file and a preview of the
/// first `preview_chars` characters.
pub fn persisted_marker(path: &str, text: &str, preview_chars: usize) -> String {
    let preview: String = text.chars().take(preview_chars).collect();
    format!("{PERSISTED_START}{FULL_OUTPUT}{path}\nPreview:\n{preview}\n</persisted-output>")
}

/// Whether `text` starts as a `<persisted-output>` marker: ours, or Claude Code's, which
/// starts the same way (`session::claude_persisted` tells it apart).
pub fn is_persisted(text: &str) -> bool {
    text.starts_with(PERSISTED_START)
}

/// The `Full output: <path>` a persisted marker of ours names.
pub fn persisted_path(text: &str) -> Option<&str> {
    if !is_persisted(text) {
        return None;
    }
    text.lines()
        .find_map(|l| l.strip_prefix(FULL_OUTPUT))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(m: Marker<'_>, text: &str) {
        assert_eq!(m.write(), text);
        assert_eq!(Marker::parse(text), Some(m));
    }

    #[test]
    fn snipped_round_trips() {
        round_trip(Marker::Snipped { removed: 3 }, "[snipped 3 messages]");
        assert_eq!(Marker::parse("[snipped three messages]"), None);
        assert_eq!(Marker::parse("[snipped 3 messages] and more"), None);
    }

    #[test]
    fn archived_at_round_trips() {
        let m = Marker::ArchivedAt {
            removed: 12,
            path: ".transcripts/transcript_1.jsonl",
        };
        round_trip(
            m,
            "[12 messages archived at .transcripts/transcript_1.jsonl]",
        );
        assert_eq!(Marker::parse("[2 apples] archived at home"), None);
    }

    #[test]
    fn archived_in_round_trips_with_its_range() {
        let m = Marker::ArchivedIn {
            first: 3,
            last: 7,
            path: ".transcripts/archive.jsonl",
        };
        let text = "[5 messages (3-7) archived in .transcripts/archive.jsonl]";
        round_trip(m, text);
        assert_eq!(Marker::archived_range(text), Some((3, 7)));
        assert_eq!(
            Marker::parse("[1 messages (7-3) archived in .transcripts/archive.jsonl]"),
            None
        );
    }

    #[test]
    fn compressed_round_trips_with_the_summary_after_it() {
        let m = Marker::Compressed {
            transcript: ".transcripts/t.jsonl",
        };
        round_trip(
            m,
            "[Conversation compressed. Transcript: .transcripts/t.jsonl]",
        );
        let with_summary = format!("{}\n\nsummary", m.write());
        assert_eq!(Marker::parse(&with_summary), Some(m));
    }

    #[test]
    fn persisted_round_trips_its_path_and_not_claude_codes() {
        let text = persisted_marker(".task_outputs/tool-results/t.txt", "abcdef", 2);
        assert_eq!(
            text,
            "<persisted-output>\nFull output: .task_outputs/tool-results/t.txt\nPreview:\nab\n</persisted-output>"
        );
        assert_eq!(
            persisted_path(&text),
            Some(".task_outputs/tool-results/t.txt")
        );
        let cc = "<persisted-output>\nOutput too large (109.4KB). Full output saved to: /h/t.txt\n\nPreview (first 2KB):\n1\n</persisted-output>";
        assert!(is_persisted(cc));
        assert_eq!(persisted_path(cc), None);
        assert_eq!(persisted_path("Full output: x"), None);
    }
}
