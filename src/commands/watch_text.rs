//! `ctxlab watch` for people, until the workbench has its live view: one readable line per
//! call, compaction, message, tool call and file change, as the session is written, with
//! the headroom on each call and a terminal bell on each compaction (`--no-bell` silences
//! it). Every line passes the sanitizer here, on its way out; the bell is ctxlab's own
//! control byte and goes to the terminal as it is (a sanitizing writer would print it as
//! `\a`).

use std::io::Write;
use std::sync::atomic::AtomicBool;

use crate::sanitize::sanitize;
use crate::session::model::Summary;
use crate::session::watch::threshold::AgentSettings;
use crate::session::watch::{
    Chosen, FileEvent, FollowOptions, HeadroomTracker, LiveItem, WatchEvent, follow,
};
use crate::util::{group_digits, plural};

use super::watch::WatchEnd;
use super::watch_risk::{RiskFollow, risk_lines};

/// Characters of a message's preview shown.
const PREVIEW_CHARS: usize = 100;

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

fn item_line(item: &LiveItem, tracker: &HeadroomTracker) -> Option<String> {
    Some(match item {
        LiveItem::Call(c) if c.summary => format!(
            "line {}: the compaction's own call, {} tokens (not on the curve)",
            c.line,
            g(c.context_tokens)
        ),
        LiveItem::Call(c) => format!("line {}: call · {}", c.line, tracker.headroom().text()),
        LiveItem::Compaction {
            compaction: c,
            update,
            at,
            ..
        } => {
            let before = c
                .tokens_before
                .map(|t| format!(" · {} tokens before", t.text()))
                .unwrap_or_default();
            let summary = match &c.summary {
                Summary::Text(t) => format!(" · summary {} chars", g(t.chars().count() as u64)),
                Summary::Encrypted => " · summary encrypted by the provider".into(),
                Summary::NotRecorded => String::new(),
                Summary::None => format!(
                    " · cleared {}",
                    plural(c.cleared_tool_ids.len(), "tool result")
                ),
            };
            let trigger = c
                .trigger
                .as_ref()
                .map(|t| format!(" ({})", t.name()))
                .unwrap_or_default();
            if *update {
                // At the line that added it: numbers never go down.
                format!(
                    "line {at}: more on the {} compaction of line {}{trigger}{before}{summary}",
                    c.kind.name(),
                    c.line
                )
            } else {
                format!(
                    "line {}: COMPACTION: {} compaction{trigger}{before}{summary}",
                    c.line,
                    c.kind.name()
                )
            }
        }
        LiveItem::Message(m) => {
            // One event, one line: a reader piping this into grep keeps the `line N:` on
            // every line, so a message's own line breaks become spaces.
            let mut preview: String = m
                .preview
                .chars()
                .take(PREVIEW_CHARS)
                .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
                .collect();
            if preview.is_empty() && m.tool_results > 0 {
                preview = plural(m.tool_results, "tool result");
            }
            if preview.trim().is_empty() {
                // Nothing to read (an answer of tool calls only: their own lines say them).
                return None;
            }
            format!("line {}:   {}: {preview}", m.line, m.role)
        }
        // The path or command the call names; its id only when it names neither.
        LiveItem::ToolCall {
            line,
            id,
            name,
            subject,
        } => {
            if subject.is_empty() {
                format!("line {line}:   tool {name} ({id})")
            } else {
                format!("line {line}:   tool {name}: {subject}")
            }
        }
        LiveItem::Skipped { line, what } => format!("line {line}: skipped ({what})"),
        LiveItem::Warning(_) => return None,
    })
}

fn file_line(event: &FileEvent) -> String {
    match event {
        FileEvent::Truncated { was, now } => format!(
            "the file was truncated ({} -> {} bytes): read again from its start",
            g(*was),
            g(*now)
        ),
        FileEvent::Replaced => "the file was replaced: read again from its start".into(),
        FileEvent::Gone => "the file is gone: waiting for it".into(),
        FileEvent::Back => "the file is back: read from its start".into(),
        FileEvent::Switched { to, why, .. } => format!("now following {} ({why})", to.display()),
        FileEvent::LineTooLong { line } => format!("line {line} is over the line cap: skipped"),
        FileEvent::NotUtf8 => "bytes that are not UTF-8 were replaced".into(),
    }
}

/// Follows `chosen`, writing readable, sanitized lines to `out` (the terminal), until `stop`;
/// within `at_risk_within` tokens of the threshold, the facts a compaction would put at
/// risk (`watch_risk`).
pub fn watch_text(
    chosen: Chosen,
    bell: bool,
    at_risk_within: Option<u64>,
    options: &FollowOptions,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> WatchEnd {
    let settings = AgentSettings::read();
    let mut tracker = HeadroomTracker::with_settings(settings.clone());
    let mut risk = RiskFollow::new(at_risk_within);
    let mut closed = false;
    // The limit's source as last said: said once, and again only when it changes.
    let mut source_said: Option<String> = None;
    let mut write = |out: &mut dyn Write, text: &str| -> bool {
        let ok = writeln!(out, "{}", sanitize(text))
            .and_then(|()| out.flush())
            .is_ok();
        closed |= !ok;
        ok
    };
    let result = follow(chosen, options, stop, &mut |event| {
        risk.see(&event);
        match event {
            WatchEvent::Following { path, why, waiting } => {
                tracker = HeadroomTracker::with_settings(settings.clone());
                if let Some(format) = crate::session::sniff_format(&path) {
                    tracker.set_format(format);
                }
                risk.following(&path);
                write(
                    out,
                    &format!("following {} ({why}; {waiting})", path.display()),
                )
            }
            WatchEvent::Item {
                item, caught_up, ..
            } => {
                tracker.push(&item);
                if !caught_up {
                    return true;
                }
                let compaction = matches!(&item, LiveItem::Compaction { update: false, .. });
                if compaction && bell && write!(out, "\x07").is_err() {
                    return false;
                }
                let written = match item_line(&item, &tracker) {
                    Some(text) => write(out, &text),
                    None => true,
                };
                if written && matches!(&item, LiveItem::Call(c) if !c.summary) {
                    let h = tracker.headroom();
                    if let Some(l) = &h.limit
                        && source_said.as_deref() != Some(l.source().as_str())
                    {
                        source_said = Some(l.source());
                        if !write(
                            out,
                            &format!("  (headroom to {}: {})", l.text(), l.source()),
                        ) {
                            return false;
                        }
                    }
                    if let Some(r) = risk.after_call(&h) {
                        return risk_lines(&r, h.tokens_left).iter().all(|l| write(out, l));
                    }
                }
                written
            }
            WatchEvent::CaughtUp { lines, .. } => {
                let h = tracker.headroom();
                // The limit's source is named here, once; the call lines give its figure.
                source_said = h.limit.as_ref().map(|l| l.source());
                let limit = h
                    .limit
                    .as_ref()
                    .map(|l| format!("headroom to {}: {}", l.text(), l.source()))
                    .unwrap_or_else(|| "no limit known (no window or rule for this model)".into());
                write(out, &limit)
                    && write(
                        out,
                        &format!(
                            "{} lines read · {} · {} · from now on, as it is written:",
                            g(lines as u64),
                            h.compactions_text(),
                            h.text()
                        ),
                    )
            }
            WatchEvent::File { event, .. } => write(out, &file_line(&event)),
            WatchEvent::Error { message, .. } => write(out, &format!("cannot read on: {message}")),
            WatchEvent::Recognised { format } => {
                tracker.set_format(format);
                write(out, &format!("format: {}", format.name()))
            }
        }
    });
    match result {
        _ if closed => WatchEnd::Closed,
        Ok(()) => WatchEnd::Stopped,
        Err(e) => WatchEnd::Failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::MessageKind;
    use crate::session::watch::LiveMessage;

    fn message(preview: &str, tool_results: usize) -> LiveItem {
        LiveItem::Message(LiveMessage {
            index: 0,
            line: 7,
            role: "user".into(),
            kind: MessageKind::Conversation,
            preview: preview.into(),
            tool_uses: 0,
            tool_results,
        })
    }

    #[test]
    fn a_message_of_several_lines_is_one_line_and_counts_are_singular_for_one() {
        let tracker = HeadroomTracker::default();
        let line = item_line(
            &message("<system-reminder>x</system-reminder>\nfix a.rs", 0),
            &tracker,
        );
        assert_eq!(
            line.as_deref(),
            Some("line 7:   user: <system-reminder>x</system-reminder> fix a.rs")
        );
        let line = item_line(&message("", 1), &tracker);
        assert_eq!(line.as_deref(), Some("line 7:   user: 1 tool result"));
    }

    /// Issue 38: an answer of tool calls only printed an empty "assistant: " line, and a
    /// tool call only its id.
    #[test]
    fn an_empty_answer_says_nothing_and_a_tool_call_names_its_command() {
        let tracker = HeadroomTracker::default();
        let mut empty = message("", 0);
        if let LiveItem::Message(m) = &mut empty {
            m.role = "assistant".into();
            m.tool_uses = 1;
        }
        assert_eq!(item_line(&empty, &tracker), None);
        let tool = LiveItem::ToolCall {
            line: 9,
            id: "toolu_1".into(),
            name: "Bash".into(),
            subject: "cargo test -q".into(),
        };
        assert_eq!(
            item_line(&tool, &tracker).as_deref(),
            Some("line 9:   tool Bash: cargo test -q")
        );
    }

    /// Issue 38: a compaction's later detail printed the compaction's own line (46 after
    /// 52); it is printed at the line that added it, naming the compaction's.
    #[test]
    fn more_on_a_compaction_is_printed_at_the_line_that_added_it() {
        use crate::session::{Compaction, CompactionKind};
        let tracker = HeadroomTracker::default();
        let mut c = Compaction::new(CompactionKind::Server, 3, 9);
        c.line = 46;
        c.summary = Summary::Encrypted;
        let item = |update, at| LiveItem::Compaction {
            index: 0,
            compaction: Box::new(c.clone()),
            update,
            at,
        };
        let first = item_line(&item(false, 46), &tracker).unwrap();
        assert!(
            first.starts_with("line 46: COMPACTION: server compaction"),
            "{first}"
        );
        let more = item_line(&item(true, 53), &tracker).unwrap();
        assert!(
            more.starts_with("line 53: more on the server compaction of line 46"),
            "{more}"
        );
    }
}
