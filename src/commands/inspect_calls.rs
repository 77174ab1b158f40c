//! `ctxlab inspect FILE --calls`: every model call's context by category (docs/pipeline.md,
//! "Where the context goes"), as a table per call for a reader or as one JSON object with
//! one entry per call, each call written as it is broken down. The breakdown itself is
//! `breakdown::sized`'s on a sized read of a Claude Code or Codex file, and
//! `breakdown::session`'s on any other file, read whole.

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use crate::breakdown::session::{SessionBreakdown, of_session};
use crate::breakdown::sized::{Collector, SizedCalls, Unsized};
use crate::breakdown::tokens::Family;
use crate::breakdown::{CallBreakdown, Counting};
use crate::session::sized_read::read_sized;
use crate::session::{SessionError, SessionFormat};
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
    write_head(out, &b.counting, b.calls.len(), json)?;
    for (i, c) in b.calls.iter().enumerate() {
        write_call(out, c, i, json)?;
    }
    write_tail(out, json)
}

/// What comes before the calls: the table's first line, or the JSON object up to its
/// `calls` list.
fn write_head(
    out: &mut dyn Write,
    counting: &Counting,
    calls: usize,
    json: bool,
) -> std::io::Result<()> {
    if json {
        // The object with no calls, cut before its empty list: the calls follow one by
        // one, so a session of half a million calls is never held as one value (issue 39
        // item 8).
        let head = SessionBreakdown {
            counting: *counting,
            calls: Vec::new(),
        };
        let text = serde_json::to_string(&head.to_json()).map_err(std::io::Error::other)?;
        let open = text.strip_suffix("]}").unwrap_or(&text);
        return out.write_all(open.as_bytes());
    }
    writeln!(
        out,
        "calls: {}; tokens: {}",
        group_digits(calls),
        counting.describe()
    )
}

/// Call `index` (0-based): a table, or one element of the JSON list.
fn write_call(
    out: &mut dyn Write,
    c: &CallBreakdown,
    index: usize,
    json: bool,
) -> std::io::Result<()> {
    if json {
        if index > 0 {
            out.write_all(b",")?;
        }
        return serde_json::to_writer(&mut *out, c).map_err(std::io::Error::other);
    }
    call_table(out, c)
}

fn write_tail(out: &mut dyn Write, json: bool) -> std::io::Result<()> {
    if json {
        out.write_all(b"]}\n")?;
    }
    out.flush()
}

/// Why a session's calls could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CallsError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot write to stdout: {0}")]
    Write(#[from] std::io::Error),
}

/// `ctxlab inspect FILE --calls`: a Claude Code or Codex file is read measuring each
/// message once and keeping its sizes, not its text (`session::sized_read`,
/// `breakdown::sized`), and each call is written as it is broken down; any other file,
/// or one that read cannot size, is read whole and broken down as before (issue 36).
pub fn inspect_calls(path: &Path, out: &mut dyn Write, json: bool) -> Result<(), CallsError> {
    // Codex's models count with o200k: measure with it first; a file whose calls ask for
    // another tokenizer is measured again with that one.
    let mut family = match crate::session::sniff_format(path) {
        Some(SessionFormat::Codex | SessionFormat::CodexLegacy) => Some(Family::O200k),
        _ => None,
    };
    for _ in 0..2 {
        let collector = Rc::new(RefCell::new(Collector::new(family)));
        let Some(read) = read_sized(path, collector.clone())? else {
            break;
        };
        let collector = collector.borrow();
        match SizedCalls::new(&read.session, &collector) {
            Ok(calls) => {
                write_head(out, &calls.counting(), calls.len(), json)?;
                let mut i = 0;
                calls.each(&mut |c| {
                    write_call(out, &c, i, json)?;
                    i += 1;
                    Ok::<(), std::io::Error>(())
                })?;
                return Ok(write_tail(out, json)?);
            }
            Err(Unsized::Tokenizer(wanted)) => family = wanted,
            Err(Unsized::Mismatch) => break,
        }
    }
    let session = crate::session::load_session(path)?;
    let calls = of_session(&session);
    drop(session);
    Ok(write_calls(out, &calls, json)?)
}
