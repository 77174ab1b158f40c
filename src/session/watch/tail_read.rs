//! The end of a session file, for a status line that runs after every answer: only the last
//! `MAX_BYTES` are read, once, and indexed by a byte scan (no JSON parse) into lines and
//! the lines that can hold a model call or a compaction (`is_marked`). The lines from
//! `FIRST_BYTES` before the end are folded by the same line reader the follower uses; when
//! they hold no model call, the fold starts at an earlier marked line instead, a few times
//! at most, and last of all takes only the marked lines of the whole read. A long line
//! with no mark (a tool's output) is never parsed. So the time is bounded by the read
//! whatever the tail holds (before: 13 MB parsed when the last 12 MB held no call), and
//! a status line never reads a 50 MB session whole. Compactions are counted within what
//! was folded, and the count says whether that was the whole file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::headroom::{Headroom, HeadroomTracker};
use super::live::{LiveItem, LiveSession};
use crate::session::SessionError;

/// The first fold starts this far from the end.
pub const FIRST_BYTES: u64 = 256 << 10;
/// The most read from the end.
pub const MAX_BYTES: u64 = 8 << 20;
/// A line longer than this with no mark is not parsed (it holds no call or compaction).
const UNMARKED_LINE_BYTES: usize = 16 << 10;
/// Earlier marked lines a fold may start at before the last fold (marked lines only).
const EARLIER_STARTS: usize = 4;

/// What the end of a session says.
#[derive(Debug, Clone, PartialEq)]
pub struct EndOfSession {
    pub headroom: Headroom,
    /// The model of the last call, when one was read.
    pub model: Option<String>,
    /// Bytes read from the end, and the file's length.
    pub read: u64,
    pub len: u64,
    /// Bytes handed to the JSON parser, all folds together: what the time goes on.
    pub parsed: u64,
}

impl EndOfSession {
    /// Whether the compaction count covers the whole file.
    pub fn whole_file(&self) -> bool {
        self.read >= self.len
    }
}

/// Reads the end of `path`; `model` and `window` are what the caller knows (Claude Code's
/// status line input), each with its source. Only the end is read, so a file over the
/// readers' file cap is still read.
pub fn read_end(
    path: &Path,
    model: Option<&str>,
    window: Option<(u64, &str)>,
) -> Result<EndOfSession, SessionError> {
    let mut opened = crate::session::open::open_regular_uncapped(path)?;
    let len = opened.len;
    let start = len.saturating_sub(MAX_BYTES);
    let mut buf = crate::session::open::reserve(len - start)?;
    opened
        .file
        .seek(SeekFrom::Start(start))
        .map_err(SessionError::Read)?;
    (&mut opened.file)
        .take(len - start)
        .read_to_end(&mut buf)
        .map_err(SessionError::Read)?;
    // A read that starts inside a line skips to the next whole one.
    let from = if start == 0 {
        0
    } else {
        buf.iter()
            .position(|&b| b == b'\n')
            .map_or(buf.len(), |i| i + 1)
    };
    let text = &buf[from..];
    let lines = line_spans(text);
    let first = lines
        .iter()
        .position(|&(at, _)| (text.len() - at) as u64 <= FIRST_BYTES)
        .unwrap_or(lines.len());
    let earlier = lines[..first]
        .iter()
        .enumerate()
        .rev()
        .filter(|&(_, &(at, end))| is_marked(&text[at..end]))
        .map(|(i, _)| i)
        .take(EARLIER_STARTS);
    let mut parsed = 0;
    let mut fold = |from_line: usize, only_marked: bool| {
        let at = lines.get(from_line).map_or(text.len(), |&(at, _)| at);
        let mut end = fold_lines(text, &lines[from_line..], only_marked, model, window);
        parsed += end.parsed;
        end.parsed = parsed;
        // From the first whole line: all that was read (the cut line before it included).
        end.read = if from_line == 0 {
            len - start
        } else {
            (text.len() - at) as u64
        };
        end.len = len;
        end
    };
    let starts: Vec<usize> = std::iter::once(first).chain(earlier).collect();
    for from_line in starts {
        let end = fold(from_line, false);
        if end.headroom.context_tokens.is_some() {
            return Ok(end);
        }
    }
    Ok(fold(0, true))
}

/// The byte ranges of the lines of `text`, without their newlines.
fn line_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            spans.push((at, i));
            at = i + 1;
        }
    }
    if at < text.len() {
        spans.push((at, text.len()));
    }
    spans
}

/// Whether a line may hold a model call (its usage: Claude Code's `usage`, Codex's
/// `total_token_usage`) or a compaction (`compact_boundary`, `isCompactSummary`, Codex's
/// `compacted`, an older `summary` line): a byte test, no parse. A false yes costs a parse.
fn is_marked(line: &[u8]) -> bool {
    const MARKS: [&[u8]; 3] = [b"usage\"", b"compact", b"\"summary\""];
    MARKS.iter().any(|m| line.windows(m.len()).any(|w| w == *m))
}

/// The fold of these lines of `text` by the follower's reader, into the headroom.
fn fold_lines(
    text: &[u8],
    lines: &[(usize, usize)],
    only_marked: bool,
    model: Option<&str>,
    window: Option<(u64, &str)>,
) -> EndOfSession {
    let mut tracker = HeadroomTracker::new();
    if let Some(m) = model {
        tracker.set_model(m);
    }
    if let Some((w, source)) = window {
        tracker.set_given_window(w, source);
    }
    let mut live = LiveSession::new();
    let mut items = Vec::new();
    let mut last_model = None;
    let mut parsed = 0;
    for (i, &(at, end)) in lines.iter().enumerate() {
        let line = &text[at..end];
        let parse = if only_marked || line.len() > UNMARKED_LINE_BYTES {
            is_marked(line)
        } else {
            true
        };
        if !parse {
            continue;
        }
        parsed += line.len() as u64;
        let line = String::from_utf8_lossy(line);
        live.push_line(i + 1, &line, &mut items);
        for item in items.drain(..) {
            if let LiveItem::Call(c) = &item
                && !c.summary
                && c.model.is_some()
            {
                last_model = c.model.clone();
            }
            tracker.push(&item);
        }
    }
    EndOfSession {
        headroom: tracker.headroom(),
        model: last_model,
        read: 0,
        len: 0,
        parsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn call(n: usize, cache_read: u64) -> String {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"a{n}","requestId":"r{n}","timestamp":"2025-10-01T10:00:{n:02}Z","message":{{"id":"m{n}","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{"command":"ls {n}"}}}}],"usage":{{"input_tokens":10,"cache_read_input_tokens":{cache_read},"cache_creation_input_tokens":100,"output_tokens":7}}}}}}"#
        )
    }

    fn result(n: usize, output: &str) -> String {
        format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"r{n}","timestamp":"2025-10-01T10:00:{n:02}Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{n}","content":"{output}"}}]}}}}"#
        )
    }

    #[test]
    fn a_tail_of_long_outputs_with_no_call_is_not_parsed() {
        // Issue 39, item 4: 12 MB with no model call were parsed 13 MB over, in 1 s.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = call(1, 40_000) + "\n";
        let output = "x".repeat(100_000);
        while text.len() < 12 << 20 {
            text.push_str(&result(2, &output));
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        let end = read_end(&path, None, None).unwrap();
        assert_eq!(end.headroom.context_tokens, None);
        assert_eq!(end.read, MAX_BYTES);
        assert!(end.parsed < 64 << 10, "{} bytes parsed", end.parsed);
        // With the call within the read, it is found and the outputs still not parsed.
        let mut text = result(0, "a") + "\n" + &call(1, 40_000) + "\n";
        for _ in 0..40 {
            text.push_str(&result(2, &output));
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        let end = read_end(&path, None, None).unwrap();
        assert_eq!(end.headroom.context_tokens, Some(40_110));
        assert!(end.parsed < 64 << 10, "{} bytes parsed", end.parsed);
        assert!(end.whole_file() || end.read > 3 << 20, "{end:?}");
    }

    #[test]
    fn a_file_over_the_readers_cap_still_has_an_end() {
        // Issue 39, item 4: a transcript over 2 GiB got "no status".
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        // Sparse: no disk is spent on the first 3 GiB.
        f.set_len(3 << 30).unwrap();
        f.seek(SeekFrom::End(0)).unwrap();
        f.write_all(format!("\n{}\n", call(1, 5_000)).as_bytes())
            .unwrap();
        drop(f);
        let end = read_end(&path, None, None).unwrap();
        assert_eq!(end.headroom.context_tokens, Some(5_110));
        assert!(end.len > 3 << 30);
    }
}
