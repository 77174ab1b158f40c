//! A timeline as one self-contained HTML page: the plot (inline SVG), the model calls,
//! every stage event with its reason and its diff, the summaries, what each compaction
//! forgot (`html_forgot`), the final history and the exact request bodies (`html_exact`).
//! Inline CSS, no script, no network, no external asset; every piece of text is escaped.
//! `ctxlab export` and the workbench's `/export` both call `page`, so the same model gives
//! the same page. It returns a string; the caller writes the file.

use std::fmt::Write;

use super::diff::{DiffOp, DiffRow, Fold, counts, fold};
pub use super::html_cap::{EDGE_ROWS, PLOT_BARS};
use super::html_cap::{
    Section, Shown, changed_steps, event_link, left_out_paragraph, left_out_row, see_every,
    written_steps,
};
pub use super::html_escape::escape;
use super::label::{full_text, label};
use super::lineage::RowEffect;
use super::{CallOutcome, Source, StageStep, Timeline};
use crate::message::{Message, Role};
use crate::util::{clip_chars, group_digits};

/// Unchanged rows kept on each side of a change before the rest is folded.
const DIFF_CONTEXT: usize = 2;
/// Chars of a message shown in a before/after or history cell; the rest is cut, with a note.
const TEXT_MAX_CHARS: usize = 4_000;
const LABEL_MAX_CHARS: usize = 140;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#1b1b1b;background:#fff}\
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{text-align:left;padding:2px 6px;vertical-align:top;border-bottom:1px solid #eee}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}\
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.5em;margin:.25em 0;max-height:30em;overflow:auto}\
.removed{background:#fde8e8}.added{background:#e6f4e6}.changed{background:#fff4d6}.fold td{color:#666;font-style:italic;text-align:center}\
.stage{border:1px solid #ddd;border-radius:4px;padding:.25em .75em;margin:.75em 0}\
.stage>summary{cursor:pointer;font-weight:600}.reason{color:#444}.empty{color:#666}\
svg.plot{width:100%;height:auto;background:#fafafa;border:1px solid #ddd}\
svg .before{fill:#b9c7e6}svg .after{fill:#2f5db3}svg .refused{fill:#c0392b}\
svg .limit{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:6 4}svg .limit-label{fill:#c0392b;font-size:12px}\
svg .grid{stroke:#e3e3e3}svg .axis{fill:#555;font-size:11px}\
svg .clip{fill:none;stroke:#fafafa;stroke-width:2.5}svg .clip-label{fill:#555;font-size:11px}\
.legend span{display:inline-block;margin-right:1.5em}.sw{display:inline-block;width:.9em;height:.9em;vertical-align:middle;margin-right:.3em}\
@media (prefers-color-scheme: dark){body{background:#161616;color:#e6e6e6}pre{background:#222}th,td{border-color:#333}\
.removed{background:#3a1f1f}.added{background:#1f3a22}.changed{background:#3a331c}svg.plot{background:#1d1d1d}.reason{color:#bbb}}";

fn role(m: &Message) -> &'static str {
    if m.role_kind() == Role::Assistant {
        "asst"
    } else {
        "user"
    }
}

fn one_line(m: &Message) -> String {
    label(m, |s| clip_chars(s, LABEL_MAX_CHARS)).label
}

fn clipped_text(m: &Message) -> String {
    let text = full_text(m);
    let n = text.chars().count();
    if n <= TEXT_MAX_CHARS {
        return text;
    }
    let head: String = text.chars().take(TEXT_MAX_CHARS).collect();
    format!(
        "{head}\n… ({} more chars)",
        group_digits(n - TEXT_MAX_CHARS)
    )
}

/// The page for `t`, titled after its source.
pub fn page(t: &Timeline) -> String {
    let name = match &t.source {
        Source::Live => "live session".to_string(),
        Source::Replay { name } => format!("replay of {name}"),
    };
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>ctxlab timeline: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>ctxlab timeline: {}</h1>\n",
        escape(&name),
        escape(&name)
    );
    header(&mut s, t);
    super::html_recorded::section(&mut s, t);
    let _ = write!(
        s,
        "<h2 id=\"plot\">Request size per model call</h2>\n{}\n<p class=\"legend\">\
         <span><i class=\"sw\" style=\"background:#b9c7e6\"></i>history before the pipeline</span>\
         <span><i class=\"sw\" style=\"background:#2f5db3\"></i>request sent</span>\
         <span><i class=\"sw\" style=\"background:#c0392b\"></i>limit, and a request the API refused</span></p>\n",
        super::svg::plot(t)
    );
    refusals(&mut s, t);
    context_section(&mut s, t);
    // Which stage events the page writes, so no section links to one it left out.
    let written = written_steps(t);
    calls_table(&mut s, t, &written);
    stage_events(&mut s, t);
    summaries(&mut s, t, &written);
    super::html_forgot::section(&mut s, t, &written);
    final_history(&mut s, t);
    super::html_exact::section(&mut s, t);
    s.push_str("</body>\n</html>\n");
    s
}

/// Every refused call with the API's reason, under the plot whose red bars they are.
fn refusals(s: &mut String, t: &Timeline) {
    let in_table = Shown::of(t.calls.len());
    let refused: Vec<String> = t
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.outcome == CallOutcome::PromptTooLong)
        .map(|(i, c)| {
            let call = if in_table.contains(i) {
                format!("<a href=\"#call-{n}\">call {n}</a>", n = c.number)
            } else {
                format!("call {}", c.number)
            };
            format!(
                "<li>{call} ({} chars of history sent): {}</li>",
                group_digits(c.size_after),
                escape(&refusal_reason(c)),
            )
        })
        .collect();
    if refused.is_empty() {
        return;
    }
    // A replay that does not reproduce the live run sent other sizes than the API refused.
    let whose = match t.live_run() {
        Some(live) if !live.reproduces() => {
            " (the live run's refusals: the API's words are for the live run's request)"
        }
        _ => "",
    };
    let _ = write!(
        s,
        "<p>Refused by the API as too long{whose}:</p>\n<ul class=\"refusals\">\n{}\n</ul>\n",
        refused.join("\n")
    );
}

/// The API's words for a refused call, or that they were not recorded.
fn refusal_reason(c: &super::ModelCall) -> String {
    match &c.refusal {
        Some(words) => words.clone(),
        None => "prompt too long (the API's words were not recorded)".to_string(),
    }
}

/// Where each call's context goes, stacked by category (docs/pipeline.md).
fn context_section(s: &mut String, t: &Timeline) {
    let b = super::breakdown::of_timeline(t);
    let _ = write!(
        s,
        "<h2 id=\"context\">Where the context goes</h2>\n<p>Each request by category, in \
         tokens: {}.</p>\n{}",
        escape(&b.counting.describe()),
        super::svg_stack::stacked_plot(&b)
    );
}

fn header(s: &mut String, t: &Timeline) {
    let changed = t.steps.iter().filter(|st| st.report.changed).count();
    let mut fired: Vec<(&str, usize)> = Vec::new();
    for st in t.steps.iter().filter(|st| st.report.changed) {
        let name = st.report.stage.name();
        match fired.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => e.1 += 1,
            None => fired.push((name, 1)),
        }
    }
    let fired: Vec<String> = fired
        .iter()
        .map(|(n, c)| format!("{n} {}", group_digits(*c)))
        .collect();
    let fired = if fired.is_empty() {
        String::new()
    } else {
        format!(" ({})", fired.join(", "))
    };
    let note = super::html_exact::note(t);
    let _ = write!(
        s,
        "<p>{} model calls · {} stage events that changed the history{} · {} · \
         {} messages appended.</p>\n<p class=\"reason\">{}</p>\n",
        group_digits(t.calls.len()),
        group_digits(changed),
        escape(&fired),
        escape(&t.limits_text()),
        group_digits(t.session.len()),
        escape(&note)
    );
}

fn calls_table(s: &mut String, t: &Timeline, written: &[bool]) {
    let _ = write!(
        s,
        "<h2 id=\"calls\">Model calls</h2>\n<table>\n<tr><th class=\"n\">call</th>\
         <th class=\"n\">before</th><th class=\"n\">sent</th><th class=\"n\">messages</th>\
         <th>stages</th><th class=\"n\">{}</th><th>outcome</th><th>every stage that ran</th></tr>\n",
        super::html_recorded::usage_column(t)
    );
    let shown = Shown::of(t.calls.len());
    for i in shown.indices() {
        if shown.gap_before(i) {
            left_out_row(s, &shown, 8, "calls", see_every(t, Section::Calls));
        }
        let c = &t.calls[i];
        let tokens = c
            .input_tokens
            .or(c.live_input_tokens)
            .map(|n| group_digits(n as usize))
            .unwrap_or_else(|| "–".into());
        let outcome = match c.outcome {
            CallOutcome::Answered => "answered".to_string(),
            CallOutcome::PromptTooLong => format!("refused: {}", escape(&refusal_reason(c))),
            CallOutcome::Pending => "no answer recorded".to_string(),
        };
        let ran: Vec<String> = t.steps[c.steps.clone()]
            .iter()
            .enumerate()
            .map(|(k, st)| step_line(st, c.steps.start + k, written))
            .collect();
        let _ = writeln!(
            s,
            "<tr id=\"call-{n}\"><td class=\"n\">{n}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"mono\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            group_digits(c.size_before),
            group_digits(c.size_after),
            c.rows.len(),
            escape(&c.letters(&t.steps)),
            tokens,
            outcome,
            ran.join("<br>"),
            n = c.number,
        );
    }
    s.push_str("</table>\n");
}

/// `snip_compact: 53 messages > 50 (head 3, kept 47)`, linked to its event when the page
/// writes it.
fn step_line(st: &StageStep, index: usize, written: &[bool]) -> String {
    let text = escape(&format!("{}: {}", st.report.stage.name(), st.report.why()));
    if written.get(index).copied().unwrap_or(false) {
        format!("<a href=\"#step-{index}\">{text}</a>")
    } else {
        format!("<span class=\"reason\">{text}</span>")
    }
}

fn stage_events(s: &mut String, t: &Timeline) {
    s.push_str("<h2 id=\"stages\">Stage events</h2>\n");
    let changed = changed_steps(t);
    if changed.is_empty() {
        s.push_str("<p class=\"empty\">No stage changed the history.</p>\n");
        return;
    }
    let shown = Shown::of(changed.len());
    for k in shown.indices() {
        if shown.gap_before(k) {
            left_out_paragraph(s, &shown, "stage events", see_every(t, Section::Steps));
        }
        let (i, st) = changed[k];
        let r = &st.report;
        let _ = write!(
            s,
            "<details class=\"stage\" id=\"step-{i}\" open>\n<summary>call {} · {} · {} · \
             {} → {} messages</summary>\n<p class=\"reason\">why: {}</p>\n<p>{}</p>\n",
            st.call,
            r.stage.name(),
            // In the strategy's unit, as every surface gives a stage's sizes.
            escape(&r.delta().sizes()),
            r.messages_before,
            r.messages_after,
            escape(&r.why()),
            escape(&r.summary())
        );
        if let Some(note) = t.snip_note(i) {
            let _ = writeln!(s, "<p>{}</p>", escape(&note));
        }
        if !r.files_written.is_empty() {
            s.push_str("<p>files written: ");
            let files: Vec<String> = r
                .files_written
                .iter()
                .map(|f| {
                    format!(
                        "<code>{}</code> ({} chars)",
                        escape(&f.path),
                        group_digits(f.chars)
                    )
                })
                .collect();
            s.push_str(&files.join(", "));
            s.push_str("</p>\n");
        }
        diff_table(s, &t.step_diff(i));
        s.push_str("</details>\n");
    }
}

fn diff_table(s: &mut String, rows: &[DiffRow]) {
    if rows.is_empty() {
        return;
    }
    let (removed, added, changed) = counts(rows);
    let _ = write!(
        s,
        "<p>− {removed} removed · + {added} added · ~ {changed} changed</p>\n<table class=\"diff\">\n\
         <tr><th></th><th class=\"n\">before #</th><th class=\"n\">after #</th><th>role</th>\
         <th>message</th><th class=\"n\">chars</th><th>what happened</th></tr>\n"
    );
    for f in fold(rows, DIFF_CONTEXT) {
        match f {
            Fold::Folded { count, .. } => {
                let _ = writeln!(
                    s,
                    "<tr class=\"fold\"><td colspan=\"7\">⋯ {count} unchanged rows ⋯</td></tr>"
                );
            }
            Fold::Line(i) => diff_line(s, &rows[i]),
        }
    }
    s.push_str("</table>\n");
}

fn diff_line(s: &mut String, row: &DiffRow) {
    let (class, mark) = match row.op {
        DiffOp::Same => ("", " "),
        DiffOp::Removed => ("removed", "−"),
        DiffOp::Added => ("added", "+"),
        DiffOp::Changed => ("changed", "~"),
    };
    let idx = |side: &Option<super::DiffSide>| {
        side.as_ref()
            .and_then(|d| d.index)
            .map(|i| i.to_string())
            .unwrap_or_default()
    };
    let Some(shown) = row.new.as_ref().or(row.old.as_ref()) else {
        return;
    };
    let m = &shown.message;
    let what: Vec<String> = row
        .touches
        .iter()
        .filter(|t| t.effect != RowEffect::Appended || row.op != DiffOp::Same)
        .map(|t| t.effect.describe())
        .collect();
    let _ = write!(
        s,
        "<tr class=\"{class}\"><td class=\"mono\">{mark}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
         <td>{}</td><td class=\"mono\">{}",
        idx(&row.old),
        idx(&row.new),
        role(m),
        escape(&one_line(m))
    );
    if row.op == DiffOp::Changed
        && let (Some(old), Some(new)) = (&row.old, &row.new)
    {
        let _ = write!(
            s,
            "<details><summary>before / after</summary><pre>{}</pre><pre>{}</pre></details>",
            escape(&clipped_text(&old.message)),
            escape(&clipped_text(&new.message))
        );
    }
    let _ = writeln!(
        s,
        "</td><td class=\"n\">{}</td><td>{}</td></tr>",
        group_digits(m.estimate_size()),
        escape(&what.join("; "))
    );
}

fn summaries(s: &mut String, t: &Timeline, written: &[bool]) {
    s.push_str("<h2 id=\"summaries\">Summaries</h2>\n");
    // (step, row of its history after) of each summary, found without writing any.
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (i, st) in t.steps.iter().enumerate() {
        let Some(change) = &st.change else {
            continue;
        };
        if !matches!(
            super::lineage::new_row_effect(&st.report),
            RowEffect::Summary { .. }
        ) {
            continue;
        }
        for (j, from) in change.map.iter().enumerate() {
            if *from == super::lineage::RowFrom::New {
                found.push((i, j));
            }
        }
    }
    if found.is_empty() {
        s.push_str("<p class=\"empty\">No summary was made.</p>\n");
        return;
    }
    let shown = Shown::of(found.len());
    for k in shown.indices() {
        if shown.gap_before(k) {
            left_out_paragraph(s, &shown, "summaries", see_every(t, Section::Forgot));
        }
        let (i, j) = found[k];
        let st = &t.steps[i];
        let Some(change) = &st.change else {
            continue;
        };
        let _ = write!(
            s,
            "<h3>call {} · {} ({})</h3>\n<pre>{}</pre>\n",
            st.call,
            st.report.stage.name(),
            event_link(i, written),
            escape(&full_text(&change.after[j]))
        );
    }
}

fn final_history(s: &mut String, t: &Timeline) {
    let messages: Vec<&Message> = t.current().collect();
    let _ = write!(
        s,
        "<h2 id=\"final\">Final history</h2>\n<p>{} messages.</p>\n<table>\n\
         <tr><th class=\"n\">#</th><th>role</th><th>message</th><th class=\"n\">chars</th></tr>\n",
        messages.len()
    );
    let shown = Shown::of(messages.len());
    for i in shown.indices() {
        if shown.gap_before(i) {
            left_out_row(s, &shown, 4, "messages", see_every(t, Section::History));
        }
        let m = messages[i];
        let _ = writeln!(
            s,
            "<tr><td class=\"n\">{i}</td><td>{}</td><td class=\"mono\"><details><summary>{}</summary>\
             <pre>{}</pre></details></td><td class=\"n\">{}</td></tr>",
            role(m),
            escape(&one_line(m)),
            escape(&clipped_text(m)),
            group_digits(m.estimate_size())
        );
    }
    s.push_str("</table>\n");
}
