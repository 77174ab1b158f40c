//! The status line's "N at risk" (docs/forgot.md): once the context is within the set
//! distance of Claude Code's threshold, how many facts a compaction now would have to
//! carry, by `forgot::at_risk`'s rules (those of `watch --text` and the live view). The
//! status line has a budget of milliseconds, so this reads only the tail: from the last
//! compaction the status line's index records (its summary and what came after: the
//! messages the next compaction would summarise), at most `TAIL_CAP` bytes from the end,
//! and only the lines that may hold the conversation: Claude Code's request records and
//! attachments (most of a 2.1.332 file's bytes: the system prompt, the tool schemas and the
//! reminders again and again) are passed over unparsed; the rules look at the conversation
//! only. A cut tail says "N+".

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::forgot::at_risk::at_risk;
use crate::session::open::open_regular_any_size;
use crate::session::parse_session_text;

/// Bytes read from the end at most.
pub const TAIL_CAP: u64 = 8 << 20;

/// Line prefixes of Claude Code's request records (the whole system prompt, the tool
/// schemas and each request's messages again, tens of KB a line): never conversation.
const RECORD_PREFIXES: &[&[u8]] = &[b"{\"type\":\"api-request"];
/// An attachment line (reminders, file and prompt snapshots: injected, never conversation)
/// names its `attachment` object within its first bytes (at byte 73 in 2.1.332's lines).
const ATTACHMENT_KEY: &[u8] = b"\"attachment\":{";
const ATTACHMENT_WITHIN: usize = 256;

/// Whether `line` cannot hold a conversation message.
fn passed_over(line: &[u8]) -> bool {
    RECORD_PREFIXES.iter().any(|p| line.starts_with(p))
        || memchr::memmem::find(&line[..line.len().min(ATTACHMENT_WITHIN)], ATTACHMENT_KEY)
            .is_some()
}

/// Facts at risk in `path` from byte `from` (the last compaction's line, 0 without one)
/// to its end; the flag says the tail was cut at `TAIL_CAP`. None: not readable.
pub fn at_risk_count(path: &Path, from: u64) -> Option<(usize, bool)> {
    let mut opened = open_regular_any_size(path).ok()?;
    let start = from.max(opened.len.saturating_sub(TAIL_CAP));
    let cut = start > from;
    opened.file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    (&mut opened.file)
        .take(opened.len.saturating_sub(start))
        .read_to_end(&mut bytes)
        .ok()?;
    // A cut tail starts inside a line: from the next one.
    let body = if cut {
        let nl = memchr::memchr(b'\n', &bytes)?;
        &bytes[nl + 1..]
    } else {
        &bytes[..]
    };
    let mut text = String::with_capacity(body.len() / 4);
    for line in body.split(|b| *b == b'\n') {
        if passed_over(line) {
            continue;
        }
        text.push_str(&String::from_utf8_lossy(line));
        text.push('\n');
    }
    let session = parse_session_text(&text).ok()?;
    Some((at_risk(&session, 1).total, cut))
}

/// The part of the status line: "N at risk" (`N+` when cut), nothing when none.
pub fn part(count: usize, cut: bool) -> Option<String> {
    (count > 0).then(|| format!("{count}{} at risk", if cut { "+" } else { "" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a session the real Claude Code 2.1.332 wrote: every request record and attachment
    /// line is passed over, no line of the conversation is.
    #[test]
    fn only_records_and_attachments_are_passed_over() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sessions/claude_code_2_1_332.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let mut over = 0;
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let kind = v["type"].as_str().unwrap_or("");
            let skipped = passed_over(line.as_bytes());
            if kind == "attachment" || kind.starts_with("api-request") {
                assert!(skipped, "{kind}: {}", &line[..line.len().min(200)]);
                over += 1;
            }
            if matches!(kind, "user" | "assistant" | "system") {
                assert!(!skipped, "{kind}: {}", &line[..line.len().min(200)]);
            }
        }
        assert!(over > 10, "{over}");
    }
}
