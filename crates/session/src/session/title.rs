//! A session's title for a listing: its first request, the first user message of the main
//! conversation that a person typed (not context the tool injected, not a tool's result,
//! not a summary, not a slash command's echo), on one line and capped, so that sessions of one project can be told
//! apart at a glance. It is the file's text: whoever prints it sanitizes it. Pure: it
//! reads a parsed `Session`, nothing else.

use super::model::{MessageKind, Session};
use crate::message::Role;

/// Chars a title keeps at most: a listing shows far fewer, and a pasted log as the first
/// request must not cost its whole length in every row.
pub const TITLE_MAX_CHARS: usize = 200;

/// The first request of `session`, whitespace runs as one space, at most
/// `TITLE_MAX_CHARS` chars (`…` when cut); None when it has none.
pub fn first_request(session: &Session) -> Option<String> {
    session
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            m.role_kind() == Role::User
                && !m.is_tool_result_message()
                && session
                    .info
                    .get(*i)
                    .is_none_or(|o| o.kind == MessageKind::Conversation)
        })
        .map(|(_, m)| one_line(&m.joined_text()))
        .find(|t| !t.is_empty() && !is_command_echo(t))
}

/// Claude Code writes a slash command the person ran (`/clear` starts many sessions) and
/// its output as user lines in tags: what they typed next is the request.
fn is_command_echo(text: &str) -> bool {
    ["<command-name>", "<command-message>", "<local-command-"]
        .iter()
        .any(|tag| text.starts_with(tag))
}

/// `text` on one line: whitespace runs (newlines too) as one space, cut to
/// `TITLE_MAX_CHARS`.
pub fn one_line(text: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars >= TITLE_MAX_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_lines_and_caps() {
        assert_eq!(one_line("  fix\n\nthe   parser\t"), "fix the parser");
        let long = "x".repeat(TITLE_MAX_CHARS + 50);
        let t = one_line(&long);
        assert_eq!(t.chars().count(), TITLE_MAX_CHARS + 1);
        assert!(t.ends_with('…'));
    }
}
