//! `ctxlab statusline`: Claude Code's status line command. Claude Code runs it after each
//! answer with a JSON object on stdin (`transcript_path`, `model.id`, `model.display_name`,
//! `cwd`, and in newer versions `context_window`); it prints one short line: the context
//! of the last call, of the window and in percent, the compactions counted in what was
//! read, and the headroom when known. Only the end of the transcript is read
//! (`session::watch::tail_read`). Whatever goes wrong, the answer is one short line saying
//! so: a status line must never break the agent's screen, so there is no error exit.

use std::path::Path;

use serde_json::Value;

use crate::sanitize::sanitize_line;
use crate::session::watch::tail_read::{EndOfSession, read_end};
use crate::util::group_digits;

/// Characters of the model's name shown at most.
const MODEL_CHARS: usize = 24;

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

fn kb(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// The window Claude Code passes: `context_window.context_window_size` (or a bare number).
fn given_window(input: &Value) -> Option<u64> {
    let w = input.get("context_window")?;
    w.as_u64()
        .or_else(|| w.get("context_window_size").and_then(Value::as_u64))
        .filter(|w| *w > 0)
}

/// Most bytes of the status line's input read (Claude Code's object is a few hundred).
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// How long the status line waits for its input: Claude Code writes it at once, so a
/// stdin that stays open without a whole object is not waited on past this.
pub const INPUT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// The input from `reader` (stdin): read until its end, until what was read is one whole
/// JSON value (Claude Code may keep the pipe open), until `MAX_INPUT_BYTES`, or until
/// `deadline`, whichever comes first. The read runs on its own thread, so a reader that
/// never returns is left behind, not waited for.
pub fn read_input(
    reader: impl std::io::Read + Send + 'static,
    deadline: std::time::Duration,
) -> String {
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let spawned = std::thread::Builder::new()
        .name("statusline-stdin".to_string())
        .spawn(move || {
            let mut reader = reader;
            let mut chunk = vec![0u8; 64 << 10];
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.send(chunk[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
    let mut input = Vec::new();
    if spawned.is_err() {
        return String::new();
    }
    let until = std::time::Instant::now() + deadline;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                input.extend_from_slice(&chunk);
                if input.len() >= MAX_INPUT_BYTES {
                    input.truncate(MAX_INPUT_BYTES);
                    break;
                }
                if serde_json::from_slice::<serde::de::IgnoredAny>(&input).is_ok() {
                    break;
                }
            }
            // The end of the input, or the deadline.
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&input).into_owned()
}

/// The status line for Claude Code's JSON `input`.
pub fn status_line(input: &str) -> String {
    let Ok(input) = serde_json::from_str::<Value>(input) else {
        return "ctxlab: no status (stdin is not Claude Code's status JSON)".to_string();
    };
    let Some(path) = input.get("transcript_path").and_then(Value::as_str) else {
        return "ctxlab: no status (no transcript_path in the input)".to_string();
    };
    let model_id = input
        .get("model")
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str);
    let name = input
        .get("model")
        .and_then(|m| m.get("display_name"))
        .and_then(Value::as_str)
        .or(model_id);
    let window = given_window(&input);
    let end = match read_end(
        Path::new(path),
        model_id,
        window.map(|w| (w, "Claude Code's status line input")),
    ) {
        Ok(end) => end,
        Err(e) => {
            let text = format!("ctxlab: no status (transcript: {e})");
            return sanitize_line(&text).chars().take(120).collect();
        }
    };
    let mut parts = Vec::new();
    if let Some(name) = name {
        let name: String = sanitize_line(name).chars().take(MODEL_CHARS).collect();
        parts.push(name);
    }
    parts.push(context_part(&end, window));
    parts.push(compactions_part(&end));
    if let (Some(left), Some(limit)) = (end.headroom.tokens_left, &end.headroom.limit)
        && matches!(limit, crate::session::watch::Limit::CompactedAt { .. })
    {
        parts.push(format!(
            "{} to go (compacted at {} last time)",
            g(left.max(0) as u64),
            g(limit.tokens())
        ));
    }
    parts.join(" · ")
}

fn context_part(end: &EndOfSession, window: Option<u64>) -> String {
    let Some(tokens) = end.headroom.context_tokens else {
        return format!("no model call in the last {}", kb(end.read));
    };
    // The window Claude Code passes, else the one the file or the table gives.
    let window = window.or(end.headroom.window.as_ref().map(|w| w.tokens()));
    match window {
        Some(w) => format!(
            "ctx {}/{} ({}%)",
            g(tokens),
            g(w),
            (tokens.saturating_mul(100) / w.max(1))
        ),
        None => format!("ctx {} tokens", g(tokens)),
    }
}

fn compactions_part(end: &EndOfSession) -> String {
    let n = end.headroom.compactions;
    let word = if n == 1 { "compaction" } else { "compactions" };
    if end.whole_file() {
        format!("{n} {word}")
    } else if n == 0 {
        format!("no compaction in the last {}", kb(end.read))
    } else {
        format!("{n} {word} in the last {}", kb(end.read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stdin that gives its bytes, then blocks forever (a pipe left open).
    struct NeverEnds(Option<Vec<u8>>);

    impl std::io::Read for NeverEnds {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.take() {
                Some(bytes) => {
                    buf[..bytes.len()].copy_from_slice(&bytes);
                    Ok(bytes.len())
                }
                None => loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                },
            }
        }
    }

    #[test]
    fn a_stdin_that_never_closes_is_not_waited_on() {
        // Issue 39, item 4: the status line blocked until EOF.
        let start = std::time::Instant::now();
        let whole = br#"{"transcript_path": "/x.jsonl"}"#.to_vec();
        let input = read_input(NeverEnds(Some(whole)), std::time::Duration::from_secs(30));
        assert_eq!(input, r#"{"transcript_path": "/x.jsonl"}"#);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "a whole object ends the read"
        );
        let start = std::time::Instant::now();
        let input = read_input(
            NeverEnds(Some(b"{\"tr".to_vec())),
            std::time::Duration::from_millis(200),
        );
        assert_eq!(input, "{\"tr");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "the deadline ends it"
        );
        assert!(status_line(&input).starts_with("ctxlab: no status"));
    }

    #[test]
    fn bad_input_is_one_short_line() {
        for input in [
            "",
            "nope",
            "{}",
            r#"{"transcript_path": "/no/such/file.jsonl"}"#,
        ] {
            let line = status_line(input);
            assert!(line.starts_with("ctxlab: no status"), "{line}");
            assert!(
                !line.contains('\n') && line.chars().count() <= 120,
                "{line}"
            );
        }
    }
}
