//! A forgot report as lines for people: what `ctxlab forgot` prints and the workbench's
//! forgot view shows. The lines hold outside text (summaries, file names, commands) as it
//! is: the front end that prints them sanitizes them.

use super::{Breakdown, CompactionForgot, Count, KeptHow, SummaryText};
use crate::util::group_digits;

/// How the facts check decides, as the view and the command state it (docs/forgot.md).
pub const CHECK_RULE: &str = "carried = mentioned in the summary or the kept messages (case, quotes and path forms ignored; a path by its trailing components, a command by its first two words, a sentence by all its content words). A check of mentions, not of meaning: a mention can be wrong and a paraphrase can be missed.";

fn count(label: &str, c: Count) -> Option<String> {
    (c.count > 0).then(|| format!("{label} {} ({} chars)", c.count, group_digits(c.chars)))
}

/// `12 messages, 34,000 chars of message text (~8,500 tokens)`: the messages' own text,
/// not the strategy's unit the stage's rule line is in, so the line says which it is.
pub fn size_line(b: &Breakdown) -> String {
    format!(
        "{} messages, {} chars of message text (~{} tokens)",
        group_digits(b.messages),
        group_digits(b.chars),
        group_digits(b.tokens_estimate)
    )
}

/// The parts by kind: `user text 3 (400 chars), tool results 2 (…; Read 1 (…))`.
pub fn kinds_line(b: &Breakdown) -> String {
    let mut out: Vec<String> = [
        count("user text", b.user_text),
        count("injected", b.injected_text),
        count("assistant text", b.assistant_text),
        count("thinking", b.thinking),
        count("tool calls", b.tool_calls),
    ]
    .into_iter()
    .flatten()
    .collect();
    if b.tool_results.count > 0 {
        let by: Vec<String> = b
            .tool_results_by_tool
            .iter()
            .filter_map(|(tool, c)| count(tool, *c))
            .collect();
        out.push(format!(
            "tool results {} ({} chars: {})",
            b.tool_results.count,
            group_digits(b.tool_results.chars),
            by.join(", ")
        ));
    }
    out.extend(count("other", b.other));
    if out.is_empty() {
        "nothing".to_string()
    } else {
        out.join(", ")
    }
}

/// Lines of a summary shown at most, and characters of one line: a summary is a page or
/// two; one of megabytes (a hostile or broken file) is shown by its start, with the way to
/// get all of it.
pub const SUMMARY_LINES_SHOWN: usize = 400;
pub const SUMMARY_LINE_CHARS: usize = 2_000;

/// The summary's lines, `    | ` before each, within the caps above.
fn summary_lines(text: &str, l: &mut Vec<String>) {
    let mut lines = text.lines();
    let mut cut = false;
    for line in lines.by_ref().take(SUMMARY_LINES_SHOWN) {
        let mut chars = line.char_indices();
        match chars.nth(SUMMARY_LINE_CHARS) {
            Some((at, _)) => {
                l.push(format!("    | {} [...]", &line[..at]));
                cut = true;
            }
            None => l.push(format!("    | {line}")),
        }
    }
    let more = lines.count();
    if more > 0 || cut {
        let rest = if more > 0 {
            format!("{} more lines", group_digits(more))
        } else {
            "long lines cut".to_string()
        };
        l.push(format!(
            "    | ... ({rest}: `ctxlab forgot --json` gives the summary whole)"
        ));
    }
}

fn where_(message: Option<usize>, role: &str) -> String {
    match message {
        Some(n) => format!("message {n}, {role}"),
        None => role.to_string(),
    }
}

/// The report's lines; `summary` false leaves the summary's text out (its size stays).
pub fn report_lines(c: &CompactionForgot, summary: bool) -> Vec<String> {
    let mut l = Vec::new();
    let at = c.at.map(|a| format!(" at message {a}")).unwrap_or_default();
    let trigger = c
        .trigger
        .as_deref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    l.push(format!("#{} {}{trigger}{at}", c.index, c.kind));
    l.push(format!("  rule: {}", c.rule));
    let recorded = c
        .tokens_before
        .map(|t| format!("; the file records {} tokens", group_digits(t as usize)))
        .unwrap_or_default();
    l.push(format!("  before: {}{recorded}", size_line(&c.before)));
    match &c.summary {
        SummaryText::Text(t) => {
            l.push(format!(
                "  summary: {} chars",
                group_digits(c.summary_chars)
            ));
            if summary {
                summary_lines(t, &mut l);
            }
        }
        SummaryText::Encrypted => l.push("  summary: encrypted by the provider".into()),
        SummaryText::NotRecorded => l.push("  summary: not recorded in the file".into()),
        SummaryText::None => l.push("  summary: none (nothing is summarized)".into()),
    }
    let how = match c.kept.how {
        KeptHow::Recorded => "recorded",
        KeptHow::ByRule => "by the agent's rule",
        KeptHow::NotRecorded => "NOT RECORDED",
    };
    let why = c
        .kept
        .why
        .as_deref()
        .map(|w| format!(": {w}"))
        .unwrap_or_default();
    l.push(format!(
        "  kept ({how}{why}): {} messages, {} chars of message text",
        group_digits(c.kept.messages),
        group_digits(c.kept.chars)
    ));
    let bound = if c.kept.how == KeptHow::NotRecorded {
        " (an upper bound: what was kept is not known)"
    } else {
        ""
    };
    l.push(format!("  dropped{bound}: {}", size_line(&c.dropped)));
    l.push(format!("    {}", kinds_line(&c.dropped)));
    let total = c.facts.len();
    l.push(format!(
        "  facts: {} of {} not carried{}",
        c.not_carried,
        total,
        if c.facts_capped { " (list capped)" } else { "" }
    ));
    for f in &c.facts {
        let mark = if f.carried {
            "carried    "
        } else {
            "NOT CARRIED"
        };
        l.push(format!(
            "    {mark} {:<15} {} ({})",
            f.kind.name(),
            f.text.replace('\n', " "),
            where_(f.message, f.role)
        ));
    }
    for x in &c.cleared {
        let target = x
            .target
            .as_deref()
            .map(|t| format!(" {t}"))
            .unwrap_or_default();
        let again = if x.calls_again == 0 {
            "not read again".to_string()
        } else {
            format!(
                "read again {} (~{} tokens)",
                if x.calls_again == 1 {
                    "once".to_string()
                } else {
                    format!("{} times", x.calls_again)
                },
                group_digits(x.tokens_again)
            )
        };
        l.push(format!(
            "  cleared {} {}{target}: {} chars ({}); {again}",
            x.tool_use_id,
            x.tool,
            group_digits(x.chars),
            where_(x.message, "user")
        ));
    }
    l
}
