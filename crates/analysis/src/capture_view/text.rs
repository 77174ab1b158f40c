//! The requests view as lines: one per request for the list, and the selected request's
//! detail (its changes, its categories, the strategies beside it). `ctxlab inspect CAPTURE
//! --requests` prints them and the workbench draws them, so the two cannot disagree. Every
//! line goes through the sanitizer: model names, tool names and ids come from the capture.

use std::io::Write;

use super::{CaptureRequests, RequestRow};
use crate::compare::beside::StrategyAt;
use crate::sanitize::sanitize_line;
use crate::session::model::token_text;
use crate::util::{clip_chars, group_digits};

/// Widest model name in a row.
const MODEL_COLUMN: usize = 16;
/// Widest category label in the detail (longer ones are tool names: clipped).
const LABEL_CHARS: usize = 30;

fn clean(s: &str) -> String {
    sanitize_line(s).into_owned()
}

/// `10:00:03` of `2026-12-01T10:00:03.000Z`; the whole text when it is not that shape.
pub fn time_of(started: &str) -> String {
    match started.get(11..19) {
        Some(t) if started.as_bytes().get(10) == Some(&b'T') => t.to_string(),
        _ => clip_chars(started, 8),
    }
}

/// The list's column heads, aligned with `row_line`.
pub fn header_line() -> String {
    format!(
        "{:>4} {:<8} {:<m$} {:>4} {:>8} {:>8}  {}",
        "n",
        "time",
        "model",
        "msgs",
        "tokens",
        "usage",
        "change since the previous request",
        m = MODEL_COLUMN
    )
}

/// One request as a list row.
pub fn row_line(r: &RequestRow) -> String {
    let model = clip_chars(r.model.as_deref().unwrap_or("-"), MODEL_COLUMN);
    let usage = r
        .usage_tokens
        .map_or("-".to_string(), |u| group_digits(u as usize));
    clean(&format!(
        "{:>4} {:<8} {:<m$} {:>4} {:>8} {:>8}  {}",
        r.n,
        time_of(&r.started),
        model,
        r.messages,
        r.breakdown.total_text(),
        usage,
        r.label,
        m = MODEL_COLUMN
    ))
}

fn strategy_line(s: &StrategyAt) -> String {
    let mut line = format!(
        "{:<10} {:>10} chars {:>4} msgs: ",
        s.strategy,
        group_digits(s.size),
        s.messages
    );
    if s.stages.is_empty() {
        line.push_str("nothing dropped");
        return line;
    }
    line.push_str(&s.stages.join(", "));
    let mut what = Vec::new();
    for (n, one) in [
        (s.results_cleared, "result cleared"),
        (s.messages_snipped, "message snipped"),
        (s.messages_summarized, "message summarized"),
    ] {
        if n > 0 {
            let word = if n == 1 {
                one.to_string()
            } else {
                one.replacen(' ', "s ", 1)
            };
            what.push(format!("{n} {word}"));
        }
    }
    if !what.is_empty() {
        line.push_str(&format!(" ({})", what.join(", ")));
    }
    line
}

/// The selected request's detail.
pub fn detail_lines(r: &RequestRow, counting: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut head = format!("request {} at {} ({}", r.n, time_of(&r.started), r.api);
    if let Some(m) = &r.model {
        head.push_str(&format!(", {m}"));
    }
    head.push_str(&format!(
        "): {}, {} chars",
        crate::util::plural(r.messages, "message"),
        group_digits(r.chars as usize)
    ));
    out.push(head);
    let usage = match r.usage_tokens {
        Some(u) => format!("{} recorded by the response", group_digits(u as usize)),
        None => "no usage recorded".to_string(),
    };
    out.push(format!(
        "tokens: {} counted ({counting}); {usage}",
        r.breakdown.total_text()
    ));
    out.extend(server_lines(r));
    out.push(String::new());
    if r.side {
        out.push(format!(
            "{}: not a call of the main thread, not diffed",
            r.label
        ));
    } else if r.changes.is_empty() {
        out.push(format!("changes: none ({})", r.label));
    } else {
        out.push("changes since the thread's previous request:".into());
        for c in &r.changes {
            out.push(format!("  {}", c.describe()));
        }
    }
    out.push(String::new());
    out.push("by category:".into());
    for c in &r.breakdown.categories {
        let pct = if r.breakdown.total_tokens == 0 {
            0.0
        } else {
            100.0 * c.tokens as f64 / r.breakdown.total_tokens as f64
        };
        out.push(format!(
            "  {:<w$} {:>10} {:>5.1}%",
            clip_chars(&c.label(), LABEL_CHARS),
            token_text(c.tokens, c.estimate),
            pct,
            w = LABEL_CHARS
        ));
    }
    if !r.side {
        out.push(String::new());
        out.push(format!(
            "what the strategies would have sent instead (the agent sent {} chars, {} msgs):",
            group_digits(r.size),
            r.messages
        ));
        if r.strategies.is_empty() {
            out.push("  (no strategy replay for this request)".into());
        }
        for s in &r.strategies {
            out.push(format!("  {}", strategy_line(s)));
        }
    }
    out.into_iter().map(|l| clean(&l)).collect()
}

/// What the server did to the request's context before the model read it: the edits asked
/// for, those applied with what they cleared, its own compaction, and what the model saw
/// against the body sent.
fn server_lines(r: &RequestRow) -> Vec<String> {
    let s = &r.server;
    let mut out = Vec::new();
    if !s.asked.is_empty() {
        let asked: Vec<String> = s
            .asked
            .iter()
            .map(|a| match a.trigger_tokens {
                Some(t) => format!("{} (at {} tokens)", a.kind, group_digits(t as usize)),
                None => a.kind.clone(),
            })
            .collect();
        out.push(format!("server edits asked for: {}", asked.join(", ")));
    }
    for a in &s.applied {
        let mut what = Vec::new();
        if let Some(n) = a.cleared_tool_uses {
            what.push(crate::util::plural(n as usize, "tool use"));
        }
        if let Some(n) = a.cleared_thinking_turns {
            what.push(crate::util::plural(n as usize, "thinking turn"));
        }
        if let Some(n) = a.cleared_input_tokens {
            what.push(format!("{} tokens", group_digits(n as usize)));
        }
        out.push(format!(
            "applied by the server: {}: cleared {}",
            a.kind,
            what.join(", ")
        ));
    }
    if let (Some(chars), Some(bytes)) = (s.compaction_chars, s.compaction_bytes) {
        out.push(if chars > 0 {
            format!(
                "the server compacted the context: a summary of {} chars replaces the history from the next request",
                group_digits(chars as usize)
            )
        } else {
            format!(
                "the server compacted the context: an opaque compaction item ({} bytes) replaces the history from the next request",
                group_digits(bytes as usize)
            )
        });
    }
    // By category: the tool results (all tools together: the server does not say whose it
    // cleared) and the thinking, as sent and less what the edits of their kind cleared.
    let mut after = Vec::new();
    for (category, edit, label) in [
        ("tool_results", "clear_tool_uses", "tool results"),
        ("thinking", "clear_thinking", "thinking"),
    ] {
        let cleared: u64 = s
            .applied
            .iter()
            .filter(|a| a.kind.starts_with(edit))
            .filter_map(|a| a.cleared_input_tokens)
            .sum();
        if cleared == 0 {
            continue;
        }
        let sent: u64 = r
            .breakdown
            .categories
            .iter()
            .filter(|c| c.category == category)
            .map(|c| c.tokens)
            .sum();
        after.push(format!(
            "{label} ~{} (the body's {} less {})",
            group_digits(sent.saturating_sub(cleared) as usize),
            group_digits(sent as usize),
            group_digits(cleared as usize)
        ));
    }
    if !after.is_empty() {
        out.push(format!("after the server's edits: {}", after.join("; ")));
    }
    if !s.applied.is_empty() {
        let sent = r.breakdown.total_tokens;
        let cleared = s.cleared_tokens();
        out.push(format!(
            "what the model saw: ~{} tokens: the body's {} less the {} the server cleared{}",
            group_digits(sent.saturating_sub(cleared) as usize),
            r.breakdown.total_text(),
            group_digits(cleared as usize),
            r.usage_tokens.map_or(String::new(), |u| format!(
                " (the response recorded {})",
                group_digits(u as usize)
            ))
        ));
    }
    out
}

/// `ctxlab inspect CAPTURE --requests`: the list, then each request's detail (or one JSON
/// object).
pub fn write_requests(
    out: &mut dyn Write,
    reqs: &CaptureRequests,
    json: bool,
) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(reqs).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")?;
        return out.flush();
    }
    writeln!(
        out,
        "requests: {}; tokens: {}",
        reqs.rows.len(),
        clean(&reqs.counting)
    )?;
    for w in &reqs.warnings {
        writeln!(out, "warning: {}", clean(w))?;
    }
    if let Some(e) = &reqs.strategies_error {
        writeln!(out, "strategies not replayed: {}", clean(e))?;
    }
    writeln!(out, "{}", header_line())?;
    for r in &reqs.rows {
        writeln!(out, "{}", row_line(r))?;
    }
    for r in &reqs.rows {
        writeln!(out)?;
        for l in detail_lines(r, &reqs.counting) {
            writeln!(out, "{l}")?;
        }
    }
    out.flush()
}
