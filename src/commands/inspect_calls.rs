//! `ctxlab inspect FILE --calls`: every model call's context by category (docs/pipeline.md,
//! "Where the context goes"), as a table per call for a reader or as one JSON object with
//! one entry per call. The breakdown itself is `breakdown::session`'s.

use std::io::Write;

use crate::breakdown::CallBreakdown;
use crate::breakdown::session::SessionBreakdown;
use crate::util::group_digits;

/// Widest category label in the table; longer ones (tool names) are clipped.
const LABEL_CHARS: usize = 34;

/// A label fit for one table cell: no control characters, at most `LABEL_CHARS`.
fn cell(label: &str) -> String {
    let clean: String = label
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    crate::util::clip_chars(&clean, LABEL_CHARS)
}

fn call_table(out: &mut dyn Write, c: &CallBreakdown) -> std::io::Result<()> {
    let mut head = format!("call {}", c.call);
    if let Some(m) = c.message {
        head.push_str(&format!(", message {}", group_digits(m)));
    }
    if let Some(model) = &c.model {
        head.push_str(&format!(", {}", cell(model)));
    }
    head.push_str(&format!(": {} tokens", c.total_text()));
    match c.recorded_tokens {
        Some(r) => head.push_str(&format!(" ({} recorded)", group_digits(r as usize))),
        None => head.push_str(" (no usage recorded)"),
    }
    writeln!(out, "{head}")?;
    for cat in &c.categories {
        let pct = if c.total_tokens == 0 {
            0.0
        } else {
            100.0 * cat.tokens as f64 / c.total_tokens as f64
        };
        writeln!(
            out,
            "  {:<w$} {:>12} {:>6.1}%",
            cell(&cat.label()),
            cat.text(),
            pct,
            w = LABEL_CHARS
        )?;
    }
    Ok(())
}

/// Writes the breakdown as tables (or one JSON object).
pub fn write_calls(out: &mut dyn Write, b: &SessionBreakdown, json: bool) -> std::io::Result<()> {
    if json {
        // Written as it is serialized: a session of half a million calls makes an object of
        // some 170 MB, which is not held as one string first (issue 39 item 8).
        serde_json::to_writer(&mut *out, &b.to_json()).map_err(std::io::Error::other)?;
        writeln!(out)?;
        return out.flush();
    }
    writeln!(
        out,
        "calls: {}; tokens: {}",
        group_digits(b.calls.len()),
        b.counting.describe()
    )?;
    for c in &b.calls {
        call_table(out, c)?;
    }
    out.flush()
}
