//! The exported page's "Exact requests" section and its one-line note: for each call, the
//! body the model received as its provider encoded it (`exact`), escaped, within a page
//! budget. The page must not claim more than the record holds: a call without a recorded
//! body, a replay, or the scripted model's own record is said to be what it is.

use std::fmt::Write;

use super::html_escape::escape;
use super::{Source, Timeline};
use crate::provider::WireFormat;
use crate::util::group_digits;

/// Most bytes of request bodies written into one page (8 MiB), the latest calls first:
/// each body repeats the history, so a long session's would not open in a browser.
pub const PAGE_BODIES_BYTES: usize = 8 * 1024 * 1024;

/// The header's sentence on what the calls' requests are.
pub(super) fn note(t: &Timeline) -> String {
    if let Source::Replay { .. } = t.source {
        return "A replay: the pipeline ran again on the recorded messages; the system prompt \
                and the tools were not recorded."
            .to_string();
    }
    let mut formats: Vec<&WireFormat> = Vec::new();
    for f in t
        .calls
        .iter()
        .filter_map(|c| c.body.as_ref())
        .map(|b| b.format())
    {
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    let recorded = t.calls.iter().filter(|c| c.body.is_some()).count();
    if formats.is_empty() {
        return "A live session whose requests' bodies were not recorded: each call shows \
                the messages it held."
            .to_string();
    }
    let what: Vec<&str> = formats.iter().map(|f| f.describe()).collect();
    let wire = formats.iter().all(|f| f.is_wire());
    let lead = if wire {
        "The requests (Exact requests, below) are exactly what the model received"
    } else {
        "The requests (Exact requests, below) are what the model read"
    };
    let partial = if recorded < t.calls.len() {
        format!(" ({recorded} of {} calls recorded)", t.calls.len())
    } else {
        String::new()
    };
    format!("{lead}{partial}: {}.", what.join("; "))
}

/// The section, when any call recorded its body.
pub(super) fn section(s: &mut String, t: &Timeline) {
    if !t.calls.iter().any(|c| c.body.is_some()) {
        return;
    }
    s.push_str("<h2 id=\"requests\">Exact requests</h2>\n");
    // The latest calls get the room first.
    let mut room = PAGE_BODIES_BYTES;
    let mut shown = vec![false; t.calls.len()];
    for (i, c) in t.calls.iter().enumerate().rev() {
        if let Some(b) = &c.body
            && b.len() <= room
        {
            room -= b.len();
            shown[i] = true;
        }
    }
    for (c, show) in t.calls.iter().zip(shown) {
        let Some(sent) = &c.body else {
            let _ = writeln!(s, "<p>call {}: no body recorded.</p>", c.number);
            continue;
        };
        if !show {
            let _ = writeln!(
                s,
                "<p>call {}: {}; {} bytes, sha256 <code>{}</code>; not in this page (it holds \
                 at most {} MiB of request bodies, the latest calls first).</p>",
                c.number,
                escape(sent.format().label()),
                group_digits(sent.len()),
                sent.sha256_hex(),
                PAGE_BODIES_BYTES / (1024 * 1024)
            );
            continue;
        }
        let Some(exact) = c.exact_request() else {
            continue;
        };
        let _ = write!(
            s,
            "<details id=\"request-{n}\"><summary>call {n}: {}</summary>\n<p class=\"reason\">{}</p>\n",
            escape(&exact.short()),
            escape(&exact.describe()),
            n = c.number
        );
        if let Some(text) = exact.pretty() {
            let _ = writeln!(s, "<pre>{}</pre>", escape(&text));
        }
        s.push_str("</details>\n");
    }
}
