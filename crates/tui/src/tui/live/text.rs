//! The live view's words: what happened to the followed file, and a row's full text for
//! the viewer. Unsanitized (the drawing and the viewer sanitize what they show).

use crate::session::watch::FileEvent;
use crate::tui::sessions::text::{compaction_detail, compaction_headline, compaction_name};
use crate::util::group_digits;

use super::LiveRow;

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

/// What happened to the followed file, as its notice row says it.
pub fn file_text(event: &FileEvent) -> String {
    match event {
        FileEvent::Truncated { was, now } => format!(
            "file truncated ({} -> {} bytes), started again from its start",
            g(*was),
            g(*now)
        ),
        FileEvent::Replaced => "file replaced, started again from its start".into(),
        FileEvent::Gone => "file disappeared: waiting for it to come back".into(),
        FileEvent::Back => "file is back, started again from its start".into(),
        FileEvent::Switched { to, why, .. } => {
            format!("followed session changed: now {} ({why})", to.display())
        }
        FileEvent::LineTooLong { line } => format!("line {line} is over the line cap: skipped"),
        FileEvent::NotUtf8 => "bytes that are not UTF-8 were replaced".into(),
    }
}

/// A row's title and full text for the viewer.
pub fn row_full_text(row: &LiveRow) -> (String, String) {
    match row {
        LiveRow::Message(m) => (
            format!("message {} (line {})", m.index, m.line),
            format!(
                "{} · {} tool call(s) · {} tool result(s)\n\n{}\n\n(the live view keeps the first characters of each message; `ctxlab open` shows it whole)",
                m.role, m.tool_uses, m.tool_results, m.preview
            ),
        ),
        LiveRow::Call { call, number } => {
            let u = &call.usage;
            let title = match number {
                Some(n) => format!("call {n} (line {})", call.line),
                None => format!("a compaction's own call (line {})", call.line),
            };
            let mut text = format!(
                "context {} tokens: input {} + cache read {} + cache write {}\noutput {} tokens",
                g(call.context_tokens),
                g(u.input_tokens),
                g(u.cache_read_tokens),
                g(u.cache_creation_tokens),
                g(u.output_tokens)
            );
            if let Some(m) = &call.model {
                text.push_str(&format!("\nmodel {m}"));
            }
            if let Some(t) = &call.timestamp {
                text.push_str(&format!("\nat {t}"));
            }
            if let Some(w) = call.context_window {
                text.push_str(&format!("\nwindow {} tokens (recorded)", g(w)));
            }
            if number.is_none() {
                text.push_str("\n\nThe summary request of a compaction: not on the context curve.");
            }
            (title, text)
        }
        LiveRow::Tool {
            line,
            id,
            name,
            subject,
        } => (
            format!("tool call (line {line})"),
            format!("{name}: {subject}\n\nid {id}"),
        ),
        LiveRow::Compaction { index, compaction } => {
            let c = compaction;
            let headline = format!("{} · line {}", compaction_headline(c, *index), c.line);
            let text = compaction_detail(c, headline, "The file holds no summary for it (yet).");
            (format!("compaction {}", compaction_name(c, *index)), text)
        }
        LiveRow::Skipped { line, what } => (
            format!("skipped line {line}"),
            format!("a line of a kind this ctxlab does not know ({what}), counted and passed over"),
        ),
        LiveRow::Notice(t) => ("the followed file".into(), t.clone()),
    }
}
