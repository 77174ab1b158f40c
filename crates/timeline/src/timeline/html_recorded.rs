//! The exported page's section on the live run a replayed file recorded (`recorded::LiveRun`):
//! its calls, usage and compactions as `inspect` counts them, a ctxlab recording's stage
//! events, and whether the replay reproduces that run or which figures are the live run's.

use std::fmt::Write;

use super::Timeline;
use super::html_cap::{Shown, left_out_text};
use super::html_escape::escape;
use super::recorded::{LiveRun, counts};
use crate::compact::PipelineConfig;
use crate::session::Tool;
use crate::util::{group_digits, noun};

/// Calls listed where the replay and the recording differ; the rest are counted.
const LISTED_CALLS: usize = 12;

/// The header of the table's usage column: a replay's figures are the live run's.
pub(super) fn usage_column(t: &Timeline) -> &'static str {
    match t.live_run() {
        Some(_) => "API input tokens (live run, recorded)",
        None => "API input tokens",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group_digits(n), noun(n, one, many))
}

/// `s08, context_limit 50,000 chars`.
fn settings(c: &PipelineConfig) -> String {
    format!(
        "{}, context_limit {} {}",
        c.strategy,
        group_digits(c.context_limit),
        c.strategy.unit().label()
    )
}

fn named_counts(list: &[(&str, usize)]) -> String {
    let parts: Vec<String> = list.iter().map(|(n, c)| format!("{n} {c}")).collect();
    parts.join(", ")
}

pub(super) fn section(s: &mut String, t: &Timeline) {
    let Some(live) = t.live_run() else {
        return;
    };
    let run = &live.run;
    let n = &run.numbers;
    let peak = n
        .peak_context_tokens
        .map(|p| format!("; peak context {} tokens", group_digits(p as usize)))
        .unwrap_or_default();
    let _ = write!(
        s,
        "<h2 id=\"recorded\">The live run, as the file recorded it</h2>\n<p>Recorded by {}: \
         {} ({} with the API's usage){}; {}.</p>\n",
        escape(run.tool.name()),
        plural(n.calls, "model call", "model calls"),
        group_digits(run.calls_with_usage),
        peak,
        plural(n.compactions, "compaction", "compactions"),
    );
    let refused = t
        .calls
        .iter()
        .filter(|c| c.outcome == super::CallOutcome::PromptTooLong)
        .count();
    if refused > 0 {
        // `inspect` counts the answers; the table also counts each refused request.
        let _ = writeln!(
            s,
            "<p>The calls counted here are the answered ones; the table also counts {},              which got no answer.</p>",
            plural(refused, "refused request", "refused requests")
        );
    }
    match run.config {
        Some(config) => ctxlab_run(s, t, live, &config),
        None => other_tool(s, live),
    }
    if !live.not_applied.is_empty() {
        s.push_str("<p>Recorded events this replay could not follow:</p>\n<ul>\n");
        list_items(
            s,
            &live.not_applied,
            "recorded ",
            "events",
            "ctxlab replay prints every one",
        );
        s.push_str("</ul>\n");
    }
    if !run.compactions.is_empty() {
        let _ = write!(
            s,
            "<p>Its compactions, as <code>ctxlab inspect</code> lists them (messages of the \
             file numbered from 0):</p>\n<ul class=\"mono\">\n"
        );
        list_items(
            s,
            &run.compactions,
            "",
            "compactions",
            "ctxlab inspect lists every one",
        );
        s.push_str("</ul>\n");
    }
}

/// A ctxlab recording: its stage events, and whether the replay fired the same.
/// `items` as list items after `lead`, a long list cut to its ends with the left-out line
/// (`html_cap`) naming them `what` and where to `see` every one.
fn list_items(s: &mut String, items: &[String], lead: &str, what: &str, see: &str) {
    let shown = Shown::of(items.len());
    for i in shown.indices() {
        if shown.gap_before(i) {
            let _ = writeln!(s, "<li>{}</li>", escape(&left_out_text(&shown, what, see)));
        }
        let _ = writeln!(s, "<li>{lead}{}</li>", escape(&items[i]));
    }
}

fn ctxlab_run(s: &mut String, t: &Timeline, live: &LiveRun, config: &PipelineConfig) {
    let stages = live.stage_counts();
    let _ = writeln!(
        s,
        "<p>The live run ran {} and recorded {} that changed the history ({}).</p>",
        escape(&settings(config)),
        plural(live.run.stages.len(), "stage event", "stage events"),
        escape(&named_counts(&stages)),
    );
    if live.reproduces() {
        s.push_str(
            "<p>This replay ran the same strategy and settings and fired the same stage \
             events at the same calls: its calls are the live run's, and the API input \
             tokens in the table are the API's counts of them.</p>\n",
        );
        return;
    }
    let replayed = counts(
        t.steps
            .iter()
            .filter(|st| st.report.changed)
            .map(|st| st.report.stage),
    );
    let in_table = Shown::of(t.calls.len());
    let listed: Vec<String> = live
        .differing_calls
        .iter()
        .take(LISTED_CALLS)
        .map(|&c| {
            // Linked when the calls table writes it (`html_cap`); calls are numbered from 1.
            if in_table.contains(c.saturating_sub(1)) {
                format!("<a href=\"#call-{c}\">{c}</a>")
            } else {
                c.to_string()
            }
        })
        .collect();
    let more = live.differing_calls.len().saturating_sub(LISTED_CALLS);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let same = if *config == live.replay_config {
        "the live run's strategy and settings"
    } else {
        "other settings than the live run"
    };
    let _ = writeln!(
        s,
        "<p>This replay ran {} ({same}) and fired {} ({}){}. Its stages and sizes are its \
         own; the API input tokens in the table are the live run's, each on the call that \
         produced the same answer.</p>",
        escape(&settings(&live.replay_config)),
        plural(
            t.steps.iter().filter(|st| st.report.changed).count(),
            "stage event",
            "stage events"
        ),
        escape(&named_counts(&replayed)),
        if listed.is_empty() {
            String::new()
        } else {
            format!(
                "; they differ from the recorded ones at {} {}{more}",
                noun(live.differing_calls.len(), "call", "calls"),
                listed.join(", ")
            )
        },
    );
}

/// Another tool's session: its compactions were its own; the figures are the live run's.
fn other_tool(s: &mut String, live: &LiveRun) {
    let tool = match live.run.tool {
        Tool::Proxy => "the captured agent",
        other => other.name(),
    };
    let _ = writeln!(
        s,
        "<p>The live run compacted as {} does; this replay runs {} on the same conversation \
         instead, so its stages and sizes are its own. The API input tokens in the table are \
         the live run's, each on the call that produced the same answer (after a compaction \
         the live run sent other requests than the replay).</p>",
        escape(tool),
        escape(&settings(&live.replay_config)),
    );
}
