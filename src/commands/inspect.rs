//! `ctxlab inspect FILE`: a session's summary in numbers (format, calls, tool pairs, each
//! recorded compaction with its tokens before and after, the peak context, what was
//! skipped), as lines for a reader or as one JSON object.

use std::io::Write;

use crate::session::summary::SessionSummary;
use crate::util::group_digits;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group_digits(n), crate::util::noun(n, one, many))
}

/// Writes the summary as lines (or one JSON object).
pub fn write_inspect(out: &mut dyn Write, s: &SessionSummary, json: bool) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(s).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")?;
        return out.flush();
    }
    let version = s
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    writeln!(out, "format: {} ({}{version})", s.format, s.tool)?;
    if let Some(id) = &s.session_id {
        writeln!(out, "session: {id}")?;
    }
    if let Some(t) = &s.title {
        writeln!(out, "title: {t}")?;
    }
    let mark = s.project_source.map(|p| p.mark()).unwrap_or("");
    writeln!(
        out,
        "project: {}{mark}",
        s.project.as_deref().unwrap_or("not recorded")
    )?;
    if !s.models.is_empty() {
        writeln!(out, "models: {}", s.models.join(", "))?;
    }
    if s.started.is_some() || s.ended.is_some() {
        writeln!(
            out,
            "time: {} -> {}",
            s.started.as_deref().unwrap_or("start not recorded"),
            s.ended.as_deref().unwrap_or("end not recorded")
        )?;
    }
    let compaction_calls = if s.compaction_calls > 0 {
        format!(
            " and {}",
            plural(s.compaction_calls, "compaction call", "compaction calls")
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "{}: {}, {} ({}{} with usage){compaction_calls}, {}",
        plural(s.lines, "line", "lines"),
        plural(s.messages, "message", "messages"),
        plural(s.calls, "model call", "model calls"),
        if s.refused_calls > 0 {
            format!("{} refused as too long, ", group_digits(s.refused_calls))
        } else {
            String::new()
        },
        group_digits(s.calls_with_usage),
        plural(s.tool_pairs, "tool pair", "tool pairs"),
    )?;
    let peak = s
        .peak_context_tokens
        .map(|p| format!("{} tokens", group_digits(p as usize)))
        .unwrap_or_else(|| "not recorded".into());
    let window = s
        .context_window
        .map(|w| format!("{} tokens", group_digits(w as usize)))
        .unwrap_or_else(|| "not recorded".into());
    writeln!(out, "peak context: {peak}; context window: {window}")?;
    if s.rewinds > 0 {
        let branch = if s.rewinds == 1 {
            "an abandoned branch"
        } else {
            "abandoned branches"
        };
        writeln!(
            out,
            "rewinds: {} ({} on {branch}, left out of a replay)",
            group_digits(s.rewinds),
            plural(s.abandoned_messages, "message", "messages"),
        )?;
    }
    if let Some(holds) = &s.without_conversation {
        writeln!(out, "holds: {holds}")?;
    }
    writeln!(
        out,
        "conversation: {} chars in the lesson's unit",
        group_digits(s.conversation_chars)
    )?;
    writeln!(out, "compactions: {}", group_digits(s.compactions.len()))?;
    for (i, c) in s.compactions.iter().enumerate() {
        writeln!(out, "  {}", c.describe(i))?;
    }
    if !s.sidechains.is_empty() {
        writeln!(out, "sidechains: {}", group_digits(s.sidechains.len()))?;
        for side in &s.sidechains {
            writeln!(
                out,
                "  {}: {}, {}, {}",
                side.agent_id.as_deref().unwrap_or("(no id)"),
                plural(side.messages, "message", "messages"),
                plural(side.calls, "model call", "model calls"),
                plural(side.compactions, "compaction", "compactions"),
            )?;
        }
    }
    writeln!(out, "warnings: {}", group_digits(s.warnings.len()))?;
    for w in &s.warnings {
        writeln!(out, "  line {}: {}", w.line, w.message)?;
    }
    let skipped: Vec<String> = s
        .skipped
        .iter()
        .map(|(what, n)| format!("{what} {}", group_digits(*n)))
        .collect();
    if skipped.is_empty() {
        writeln!(out, "skipped: 0")?;
    } else {
        writeln!(out, "skipped: {} ({})", s.skipped_total, skipped.join(", "))?;
    }
    let unknown: Vec<String> = s
        .unknown_types
        .iter()
        .map(|(name, n)| format!("{} {n}", crate::sanitize::sanitize_line(name)))
        .collect();
    if unknown.is_empty() {
        writeln!(out, "unknown types: none")?;
    } else {
        writeln!(out, "unknown types: {}", unknown.join(", "))?;
    }
    if let Some(r) = &s.request_record {
        writeln!(
            out,
            "request record: {} ({} of {} matched to a call), {} with their shape, {}, {}, {}",
            plural(r.requests, "api-request line", "api-request lines"),
            group_digits(r.requests_matched),
            group_digits(r.requests),
            plural(r.calls_with_shape, "call", "calls"),
            plural(r.shapes, "request shape", "request shapes"),
            plural(
                r.rendered_attachments,
                "rendered attachment",
                "rendered attachments"
            ),
            plural(r.blobs, "message blob", "message blobs"),
        )?;
        if !r.context_edits.is_empty() {
            let edits: Vec<String> = r
                .context_edits
                .iter()
                .map(|(t, n)| {
                    let t = crate::sanitize::sanitize_line(t);
                    format!("{t} in {}", plural(*n, "request", "requests"))
                })
                .collect();
            writeln!(
                out,
                "context editing asked of the API: {}",
                edits.join(", ")
            )?;
        }
    }
    if s.claude_code_persisted_outputs > 0 {
        writeln!(
            out,
            "persisted outputs: {} (Claude Code's persisted-output stage, the analogue of \
             ctxlab's tool_result_budget: a ~2 KB preview in context, the full output in the \
             session's tool-results/)",
            plural(
                s.claude_code_persisted_outputs,
                "tool result",
                "tool results"
            ),
        )?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every count `inspect` prints is grouped as the other surfaces group it (the status
    /// line's "6,421 compactions"): a long capture printed "compactions: 1499".
    #[test]
    fn counts_of_thousands_are_grouped() {
        let mut lines = vec![
            r#"{"type":"user","sessionId":"s","uuid":"u0","message":{"role":"user","content":"go"}}"#
                .to_string(),
        ];
        for i in 0..1_200 {
            lines.push(format!(
                r#"{{"type":"system","subtype":"compact_boundary","sessionId":"s","uuid":"b{i}","content":"Conversation compacted","compactMetadata":{{"trigger":"auto","preTokens":2000,"postTokens":900}}}}"#
            ));
            lines.push(format!(
                r#"{{"type":"user","sessionId":"s","uuid":"s{i}","isCompactSummary":true,"message":{{"role":"user","content":"summary {i}"}}}}"#
            ));
        }
        let session = crate::session::parse_session_text(&lines.join("\n")).unwrap();
        assert_eq!(session.compactions.len(), 1_200);
        let mut out = Vec::new();
        write_inspect(&mut out, &SessionSummary::of(&session), false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\ncompactions: 1,200\n"), "{text:.400}");
    }
}
