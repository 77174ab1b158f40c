//! `ctxlab watch PATH --json`: a followed session as one JSON object per line, in file
//! order, written and flushed as each line of the session is written. By default the lines
//! already in the file are folded into one `summary` object and following starts at the
//! end; `--from-start` prints them too, then a `caught_up` object. What is followed and why
//! goes to stderr; a change of the followed file (`file` events) goes to stdout with the
//! rest. A closed stdout ends the follow quietly (`Closed`).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};

use super::watch_risk::RiskFollow;
use crate::forgot::at_risk::AtRisk;
use crate::session::SessionError;
use crate::session::model::{Compaction, Summary};
use crate::session::watch::threshold::AgentSettings;
use crate::session::watch::{
    Chosen, FollowOptions, Headroom, HeadroomTracker, LiveItem, WatchEvent, follow,
};

/// How a JSON follow ended.
#[derive(Debug)]
pub enum WatchEnd {
    /// Asked to stop.
    Stopped,
    /// Stdout went away (`ctxlab watch --json | head`).
    Closed,
    /// The file could not be read any more.
    Failed(SessionError),
}

/// The headroom as JSON: each number with its source.
pub fn headroom_json(h: &Headroom) -> Value {
    json!({
        "context_tokens": h.context_tokens,
        "limit_tokens": h.limit.as_ref().map(|l| l.tokens()),
        "limit": h.limit.as_ref().map(|l| l.text()),
        "limit_source": h.limit.as_ref().map(|l| l.source()),
        "calls_left": h.calls_left(),
        "tokens_left": h.tokens_left,
        "calls_since_compaction": h.calls_since_compaction,
        "growth_since_compaction": h.growth_since_compaction,
        "tokens_per_call": h.tokens_per_call,
        "compactions": h.compactions,
    })
}

fn summary_state(s: &Summary) -> (&'static str, Option<usize>) {
    match s {
        Summary::Text(t) => ("text", Some(t.chars().count())),
        Summary::Encrypted => ("encrypted", None),
        Summary::NotRecorded => ("not_recorded", None),
        Summary::None => ("none", None),
    }
}

fn compaction_json(event: &str, index: usize, c: &Compaction) -> Value {
    let (state, chars) = summary_state(&c.summary);
    json!({
        "event": event,
        "index": index,
        "line": c.line,
        "timestamp": c.timestamp,
        "kind": c.kind.name(),
        "trigger": c.trigger.as_ref().map(|t| t.name()),
        "tokens_before": c.tokens_before.map(|t| t.tokens),
        "tokens_before_source": c.tokens_before.map(|t| t.source),
        "tokens_after": c.tokens_after.map(|t| t.tokens),
        "tokens_after_source": c.tokens_after.map(|t| t.source),
        "duration_ms": c.duration_ms,
        "summary": state,
        "summary_chars": chars,
        "kept_messages": c.kept_messages(),
        "cleared_tool_ids": c.cleared_tool_ids,
    })
}

/// One item as its JSON object; `headroom` is the headroom after it.
pub fn item_json(item: &LiveItem, headroom: &Headroom) -> Value {
    match item {
        LiveItem::Call(c) => json!({
            "event": "call",
            "line": c.line,
            "timestamp": c.timestamp,
            "model": c.model,
            "context_tokens": c.context_tokens,
            "input_tokens": c.usage.input_tokens,
            "cache_read_tokens": c.usage.cache_read_tokens,
            "cache_creation_tokens": c.usage.cache_creation_tokens,
            "output_tokens": c.usage.output_tokens,
            "context_window": c.context_window,
            "summary_call": c.summary,
            "headroom": headroom_json(headroom),
        }),
        LiveItem::Compaction {
            index,
            compaction,
            update,
            ..
        } => compaction_json(
            if *update {
                "compaction_update"
            } else {
                "compaction"
            },
            *index,
            compaction,
        ),
        LiveItem::Message(m) => json!({
            "event": "message",
            "index": m.index,
            "line": m.line,
            "role": m.role,
            "kind": m.kind,
            "preview": m.preview,
            "tool_uses": m.tool_uses,
            "tool_results": m.tool_results,
        }),
        LiveItem::ToolCall {
            line,
            id,
            name,
            subject,
        } => {
            json!({"event": "tool_call", "line": line, "id": id, "name": name, "subject": subject})
        }
        LiveItem::Skipped { line, what } => json!({"event": "skipped", "line": line, "what": what}),
        LiveItem::Warning(w) => json!({"event": "warning", "line": w.line, "message": w.message}),
    }
}

/// The `at_risk` event: the facts a compaction now would put at risk, and the focus texts.
fn at_risk_json(r: &AtRisk) -> Value {
    json!({
        "event": "at_risk",
        "total": r.total,
        "total_is_at_least": r.cut,
        "facts": r.top,
        "claude_compact": r.claude_compact,
        "codex_message": r.codex_message,
    })
}

/// What was folded while catching up, for the `summary` object.
#[derive(Default)]
struct Folded {
    calls: usize,
    summary_calls: usize,
    peak: Option<u64>,
    messages: usize,
    tool_calls: usize,
    warnings: usize,
}

impl Folded {
    fn push(&mut self, item: &LiveItem) {
        match item {
            LiveItem::Call(c) if c.summary => self.summary_calls += 1,
            LiveItem::Call(c) => {
                self.calls += 1;
                self.peak = self.peak.max(Some(c.context_tokens));
            }
            LiveItem::Message(_) => self.messages += 1,
            LiveItem::ToolCall { .. } => self.tool_calls += 1,
            LiveItem::Warning(_) => self.warnings += 1,
            _ => {}
        }
    }
}

/// Follows `chosen`, writing JSON lines to `out` and what is followed to `err`, until
/// `stop` is set, `out` is closed or the file fails.
pub fn watch_json(
    chosen: Chosen,
    from_start: bool,
    at_risk_within: Option<u64>,
    options: &FollowOptions,
    stop: &AtomicBool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> WatchEnd {
    let settings = AgentSettings::read();
    let mut tracker = HeadroomTracker::with_settings(settings.clone());
    let mut risk = RiskFollow::new(at_risk_within);
    let mut folded = Folded::default();
    let mut first_file = true;
    let mut closed = false;
    let mut write = |out: &mut dyn Write, v: Value| -> bool {
        let ok = writeln!(out, "{v}").and_then(|()| out.flush()).is_ok();
        if !ok {
            closed = true;
        }
        ok
    };
    let result = follow(chosen, options, stop, &mut |event| {
        risk.see(&event);
        match event {
            WatchEvent::Following { path, why, waiting } => {
                // Best effort: stderr going away does not end a follow whose output is fine.
                let _ = writeln!(
                    err,
                    "ctxlab: following {} ({why}; {waiting})",
                    path.display()
                );
                tracker = HeadroomTracker::with_settings(settings.clone());
                if let Some(format) = crate::session::sniff_format(&path) {
                    tracker.set_format(format);
                }
                risk.following(&path);
                folded = Folded::default();
                true
            }
            WatchEvent::Item {
                item, caught_up, ..
            } => {
                tracker.push(&item);
                folded.push(&item);
                if !caught_up && first_file && !from_start {
                    return true;
                }
                if !write(out, item_json(&item, &tracker.headroom())) {
                    return false;
                }
                // Only what is written from now on: a session read from its start is not
                // read again at every call of its past.
                match &item {
                    LiveItem::Call(c) if caught_up && !c.summary => {
                        match risk.after_call(&tracker.headroom()) {
                            Some(r) => write(out, at_risk_json(&r)),
                            None => true,
                        }
                    }
                    _ => true,
                }
            }
            WatchEvent::CaughtUp {
                path,
                format,
                lines,
                bytes,
                skipped,
                sidechain_lines,
                unknown_format,
            } => {
                let event = if first_file && !from_start {
                    "summary"
                } else {
                    "caught_up"
                };
                first_file = false;
                let headroom = tracker.headroom();
                write(
                    out,
                    json!({
                        "event": event,
                        "path": path,
                        "format": format.map(|f| f.name()),
                        "unknown_format": unknown_format,
                        "lines": lines,
                        "bytes": bytes,
                        "calls": folded.calls,
                        "summary_calls": folded.summary_calls,
                        "compactions": headroom.compactions,
                        "messages": folded.messages,
                        "tool_calls": folded.tool_calls,
                        "warnings": folded.warnings,
                        "skipped": skipped,
                        "sidechain_lines": sidechain_lines,
                        "peak_context_tokens": folded.peak,
                        "headroom": headroom_json(&headroom),
                    }),
                )
            }
            WatchEvent::File { path, event } => {
                let mut v = serde_json::to_value(&event).unwrap_or(Value::Null);
                if let Value::Object(o) = &mut v {
                    o.insert("path".into(), json!(path));
                    o.shift_insert(0, "event".into(), json!("file"));
                }
                write(out, v)
            }
            WatchEvent::Error { path, message } => write(
                out,
                json!({"event": "error", "path": path, "message": message}),
            ),
            WatchEvent::Recognised { format } => {
                tracker.set_format(format);
                write(out, json!({"event": "recognised", "format": format.name()}))
            }
        }
    });
    match result {
        _ if closed => WatchEnd::Closed,
        Ok(()) => WatchEnd::Stopped,
        Err(e) => WatchEnd::Failed(e),
    }
}

/// The line `ctxlab watch` prints to say what it follows (also the workbench's title).
pub fn following_text(path: &Path, why: &str) -> String {
    format!("following {} ({why})", path.display())
}
