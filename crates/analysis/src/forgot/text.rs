//! A forgot report as lines for people: what `ctxlab forgot` prints and the workbench's
//! forgot view shows. The lines hold outside text (summaries, file names, commands) as it
//! is: the front end that prints them sanitizes them.

use super::{Breakdown, CompactionForgot, Count, Fact, KeptHow, SummaryText};
use crate::session::numbers::compaction_label;
use crate::util::group_digits;

/// How the facts check decides, as the view and the command state it (docs/forgot.md).
pub const CHECK_RULE: &str = "carried = mentioned in the summary or the kept messages (case, quotes and path forms ignored; a path by its trailing components, dot files included; an instruction, error or decision by 7 in 10 of its content words). A check of mentions, not of meaning: a mention can be wrong and a paraphrase can be missed.";

/// Facts listed per compaction unless `--all`: the most important, not carried first.
pub const DEFAULT_FACTS_SHOWN: usize = 12;

/// How the report's lines are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Columns a line may take (at least 40).
    pub width: usize,
    /// Every fact, carried ones included, instead of the first `DEFAULT_FACTS_SHOWN`.
    pub all: bool,
    /// The summary's text at the end (its size is always given).
    pub summary: bool,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            width: 80,
            all: false,
            summary: true,
        }
    }
}

/// The workbench's forgot view: the most important facts, not wrapped here (the viewer
/// wraps to its own width, or not, `w`); the summary's text is last (End).
pub const VIEW_LAYOUT: Layout = Layout {
    width: usize::MAX,
    all: false,
    summary: true,
};

/// `text` cut into lines of at most `width` columns (40 at least) at spaces, the first
/// after `first`, the rest after `indent` spaces; runs of white space read as one space.
/// A word longer than a line is cut by columns. Textwrap's first fit, as the workbench's
/// rows wrap.
pub fn wrap(first: &str, text: &str, indent: usize, width: usize) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return vec![first.to_string()];
    }
    // A label is followed by a space; a prefix that ends with one is not.
    let first = if first.is_empty() || first.ends_with(' ') {
        first.to_string()
    } else {
        format!("{first} ")
    };
    let indent = " ".repeat(indent);
    let options = textwrap::Options::new(width.max(40))
        .initial_indent(&first)
        .subsequent_indent(&indent)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        .break_words(true);
    textwrap::wrap(&words.join(" "), options)
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect()
}

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
fn summary_lines(text: &str, width: usize, l: &mut Vec<String>) {
    let mut lines = text.lines();
    let mut cut = false;
    for line in lines.by_ref().take(SUMMARY_LINES_SHOWN) {
        let mut chars = line.char_indices();
        match chars.nth(SUMMARY_LINE_CHARS) {
            Some((at, _)) => {
                l.extend(wrap("    |", &format!("{} [...]", &line[..at]), 6, width));
                cut = true;
            }
            None => l.extend(wrap("    |", line, 6, width)),
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

fn mark(f: &Fact) -> &'static str {
    match f.carried {
        Some(false) => "NOT CARRIED",
        None => "unknown    ",
        Some(true) => "carried    ",
    }
}

fn fact_lines(f: &Fact, width: usize) -> Vec<String> {
    let first = format!("    {} {:<12}", mark(f), f.kind.name());
    let indent = first.chars().count() + 1;
    let seen = if f.seen > 1 {
        format!(", {} places", f.seen)
    } else {
        String::new()
    };
    let text = format!(
        "{} ({}; message {}{seen})",
        f.text.replace('\n', " "),
        f.from,
        f.message.map_or("?".to_string(), |m| m.to_string())
    );
    wrap(&first, &text, indent, width)
}

/// The facts, most important first; then the evidence of what they cost afterwards.
fn facts_section(c: &CompactionForgot, layout: &Layout, l: &mut Vec<String>) {
    let carried = c.facts.len() - c.not_carried - c.unknown;
    let unknown = if c.unknown > 0 {
        format!(
            ", {} unknown (no summary is recorded: only the kept messages could be searched)",
            c.unknown
        )
    } else {
        String::new()
    };
    let capped = if c.facts_capped {
        format!(
            "; the list is full at {}: messages up to {} (the farthest from the compaction) were not checked",
            super::facts::MAX_FACTS,
            c.unchecked_through
                .map_or("the first".to_string(), |m| m.to_string())
        )
    } else {
        String::new()
    };
    l.extend(wrap(
        "  facts:",
        &format!(
            "{} not carried, {carried} carried{unknown}{capped}",
            c.not_carried
        ),
        4,
        layout.width,
    ));
    let shown: Vec<&Fact> = if layout.all {
        c.facts.iter().collect()
    } else {
        c.facts
            .iter()
            .filter(|f| f.carried != Some(true))
            .take(DEFAULT_FACTS_SHOWN)
            .collect()
    };
    for f in &shown {
        l.extend(fact_lines(f, layout.width));
    }
    let rest = c.facts.len() - shown.len();
    if rest > 0 {
        l.push(format!(
            "    ({rest} more, carried ones included: `ctxlab forgot --all` lists them)"
        ));
    }
    afterwards_lines(c, layout.width, l);
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{} {what}s", group_digits(n))
    }
}

fn times(n: usize) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

/// What the losses cost after the compaction.
pub fn afterwards_lines(c: &CompactionForgot, width: usize, l: &mut Vec<String>) {
    let a = &c.afterwards;
    if c.not_carried == 0 {
        return;
    }
    if a.messages == 0 {
        l.push("  afterwards: no message after this compaction in the file".into());
        return;
    }
    if a.is_empty() {
        l.extend(wrap(
            "  afterwards:",
            &format!(
                "in the {} after it, no lost file read again, no failed command failing again, no lost instruction restated",
                plural(a.messages, "message")
            ),
            4,
            width,
        ));
        return;
    }
    l.push(format!(
        "  afterwards (the {} after it):",
        plural(a.messages, "message")
    ));
    for r in &a.read_again {
        l.extend(wrap(
            "    read again:",
            &format!(
                "{} {} (~{} tokens), first at message {}",
                r.file,
                times(r.calls),
                group_digits(r.tokens),
                r.first_message.map_or("?".into(), |m| m.to_string())
            ),
            6,
            width,
        ));
    }
    for f in &a.failed_again {
        l.extend(wrap(
            "    failed again:",
            &format!(
                "{} {}: {} (first at message {})",
                f.command,
                times(f.times),
                f.error,
                f.first_message.map_or("?".into(), |m| m.to_string())
            ),
            6,
            width,
        ));
    }
    for r in &a.restated {
        l.extend(wrap(
            "    restated by the user:",
            &format!(
                "{} (message {})",
                r.instruction,
                r.message.map_or("?".into(), |m| m.to_string())
            ),
            6,
            width,
        ));
    }
    for t in &a.never_touched {
        l.extend(wrap("    never touched afterwards:", t, 6, width));
    }
}

/// The report's first line: the compaction's one label (`numbers::compaction_label`, as
/// `inspect` and the workbench name it), its kind and trigger. A run's stage that forgot
/// without summarizing (index 0) is no compaction (the run numbers summaries only): it is
/// named by the call it ran before.
pub fn headline(c: &CompactionForgot) -> String {
    let trigger = c
        .trigger
        .as_deref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    match c.call {
        Some(call) if c.index == 0 => format!("{}{trigger} before call {call}", c.kind),
        Some(call) => format!(
            "{}: {}{trigger}, before call {call}",
            compaction_label(c.index, c.at),
            c.kind
        ),
        None => format!("{}: {}{trigger}", compaction_label(c.index, c.at), c.kind),
    }
}

/// The report's lines: the facts first, then what they cost afterwards, the sizes, and the
/// summary's text last (when `layout.summary`).
pub fn report_lines(c: &CompactionForgot, layout: &Layout) -> Vec<String> {
    let w = layout.width;
    let mut l = Vec::new();
    l.push(headline(c));
    facts_section(c, layout, &mut l);
    l.extend(wrap("  rule:", &c.rule, 4, w));
    let recorded = c
        .tokens_before
        .map(|t| {
            let whose = if t.is_estimate() {
                "the last call before it recorded"
            } else {
                "the file records"
            };
            format!(
                "; {whose} {} tokens for that call's whole request (system prompt, tool definitions and attachments included, in the model's own tokens), so the two differ",
                t.text()
            )
        })
        .unwrap_or_default();
    l.extend(wrap(
        "  before:",
        &format!("{}{recorded}", size_line(&c.before)),
        4,
        w,
    ));
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
    l.extend(wrap(
        &format!("  kept ({how}{why}):"),
        &format!(
            "{} messages, {} chars of message text",
            group_digits(c.kept.messages),
            group_digits(c.kept.chars)
        ),
        4,
        w,
    ));
    if c.kind == "claude-code full" {
        l.extend(wrap(
            "  note:",
            "Claude Code also re-attaches files it read recently after a compaction; the session's messages do not record which, so they are not counted as kept.",
            4,
            w,
        ));
    }
    let bound = if c.kept.how == KeptHow::NotRecorded {
        " (an upper bound: what was kept is not known)"
    } else {
        ""
    };
    l.extend(wrap(
        &format!("  dropped{bound}:"),
        &size_line(&c.dropped),
        4,
        w,
    ));
    l.extend(wrap("   ", &kinds_line(&c.dropped), 4, w));
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
                times(x.calls_again),
                group_digits(x.tokens_again)
            )
        };
        l.extend(wrap(
            "  cleared",
            &format!(
                "{} {}{target}: {} chars ({}); {again}",
                x.tool_use_id,
                x.tool,
                group_digits(x.chars),
                where_(x.message, "user")
            ),
            4,
            w,
        ));
    }
    match &c.summary {
        SummaryText::Text(t) => {
            l.push(format!(
                "  summary: {} chars of text{}",
                group_digits(c.summary_chars),
                if layout.summary { ":" } else { "" }
            ));
            if layout.summary {
                summary_lines(t, w, &mut l);
            }
        }
        SummaryText::Encrypted => l.push("  summary: encrypted by the provider (unknown)".into()),
        SummaryText::NotRecorded => l.push("  summary: not recorded in the file (unknown)".into()),
        SummaryText::None => l.push("  summary: none (nothing is summarized)".into()),
    }
    l
}
