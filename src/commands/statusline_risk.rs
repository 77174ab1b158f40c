//! The status line's "N at risk" (docs/forgot.md): once the context is within the set
//! distance of Claude Code's threshold, how many facts a compaction now would have to
//! carry, by `forgot::at_risk`'s rules (those of `watch --text` and the live view). The
//! status line has a budget of milliseconds, so this reads only the tail: from the last
//! compaction the status line's index records (its summary and what came after: the
//! messages the next compaction would summarise), at most `TAIL_CAP` bytes from the end,
//! and only the lines that hold the conversation. A cut tail says "N+".

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
        if RECORD_PREFIXES.iter().any(|p| line.starts_with(p)) {
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
