//! Reading recorded sessions into messages. Only ever reads: nothing is written next to a
//! session file.
//!
//! Formats: a JSON array of messages (or `ctxlab pipeline`'s input object) and ctxlab's own
//! transcripts (one message per line).

use crate::commands::pipeline::{InputError, history_input_from_value, parse_history_input};
use crate::message::Message;

/// Reads a session: a JSON array of messages (or `ctxlab pipeline`'s input object), or a
/// transcript (one message per line).
pub fn parse_session(text: &str) -> Result<Vec<Message>, SessionError> {
    if text.trim_start().starts_with('[') {
        let input = parse_history_input(text).map_err(SessionError::Array)?;
        return Ok(input.messages);
    }
    // A whole file that is one JSON object with "messages" is `ctxlab pipeline`'s input;
    // anything else is read as a transcript, line by line. The file is parsed once either way.
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text)
        && value.get("messages").is_some()
    {
        let input = history_input_from_value(value).map_err(SessionError::Array)?;
        return Ok(input.messages);
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|source| SessionError::Line {
                line: i + 1,
                message: source.to_string(),
            })?;
        let m = Message::from_value(value).map_err(|source| SessionError::Line {
            line: i + 1,
            message: source.to_string(),
        })?;
        out.push(m);
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Array(InputError),
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
}
