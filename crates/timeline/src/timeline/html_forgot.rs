//! The export page's "What each compaction forgot" section: per compaction the rule, the
//! sizes before, kept and dropped by kind, the summary's size, the facts not carried (then
//! the carried ones, folded) and the cleared results with their re-reads
//! (docs/forgot.md). Every piece of text is escaped.

use std::fmt::Write;

use super::Timeline;
use super::forgot_inputs::{forgetting_steps, timeline_reports_of};
use super::html_cap::{Section, Shown, event_link, left_out_paragraph, see_every};
use super::html_escape::escape;
use crate::forgot::text::{CHECK_RULE, afterwards_lines, headline, kinds_line, size_line};
use crate::forgot::{Fact, KeptHow};
use crate::util::group_digits;

fn facts_table(s: &mut String, facts: &[&Fact]) {
    s.push_str(
        "<table><tr><th>kind</th><th>item</th><th>from</th><th class=\"n\">message</th></tr>\n",
    );
    for f in facts {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            f.kind.name(),
            escape(&f.text),
            escape(&f.from),
            f.message.map(|m| m.to_string()).unwrap_or_default(),
        );
    }
    s.push_str("</table>\n");
}

/// What the losses cost after the compaction: the same lines `ctxlab forgot` prints.
fn afterwards(s: &mut String, c: &crate::forgot::CompactionForgot) {
    let mut lines = Vec::new();
    afterwards_lines(c, usize::MAX, &mut lines);
    if lines.is_empty() {
        return;
    }
    s.push_str("<p>Afterwards:</p>\n<ul class=\"afterwards\">\n");
    for l in &lines {
        let _ = writeln!(s, "<li>{}</li>", escape(l.trim()));
    }
    s.push_str("</ul>\n");
}

/// Appends the section; `written`: the stage events the page writes (`html_cap`).
pub fn section(s: &mut String, t: &Timeline, written: &[bool]) {
    s.push_str("<h2 id=\"forgot\">What each compaction forgot</h2>\n");
    let _ = writeln!(s, "<p class=\"reason\">{}</p>", escape(CHECK_RULE));
    // Only the reports the page writes are made (`html_cap`): the first and the last.
    let shown = Shown::of(forgetting_steps(t));
    let reports = timeline_reports_of(t, |k| shown.contains(k));
    if reports.is_empty() {
        s.push_str("<p class=\"empty\">No stage dropped or cleared anything.</p>\n");
        return;
    }
    for (k, (step, c)) in shown.indices().zip(&reports) {
        if shown.gap_before(k) {
            left_out_paragraph(s, &shown, "entries", see_every(t, Section::Forgot));
        }
        let _ = writeln!(
            s,
            "<details class=\"forgot\" open><summary>{} ({}): {} of {} items not carried</summary>",
            escape(&headline(c)),
            event_link(step.index(), written),
            c.not_carried,
            c.facts.len()
        );
        let _ = writeln!(s, "<p class=\"reason\">rule: {}</p>", escape(&c.rule));
        let kept = match c.kept.how {
            KeptHow::Recorded => "recorded",
            KeptHow::ByRule => "by the agent's rule",
            KeptHow::NotRecorded => "not recorded",
        };
        let _ = writeln!(
            s,
            "<table><tr><td>before</td><td>{}</td></tr>\
             <tr><td>summary</td><td>{} chars of text</td></tr>\
             <tr><td>kept ({kept})</td><td>{} messages, {} chars of text</td></tr>\
             <tr><td>dropped</td><td>{}<br>{}</td></tr></table>",
            escape(&size_line(&c.before)),
            group_digits(c.summary_chars),
            group_digits(c.kept.messages),
            group_digits(c.kept.chars),
            escape(&size_line(&c.dropped)),
            escape(&kinds_line(&c.dropped)),
        );
        let (gone, kept_facts): (Vec<&Fact>, Vec<&Fact>) =
            c.facts.iter().partition(|f| f.carried != Some(true));
        if !gone.is_empty() {
            s.push_str("<p>Not carried (or unknown, where no summary is recorded):</p>\n");
            facts_table(s, &gone);
        }
        afterwards(s, c);
        if !kept_facts.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>Carried ({})</summary>",
                kept_facts.len()
            );
            facts_table(s, &kept_facts);
            s.push_str("</details>\n");
        }
        if !c.cleared.is_empty() {
            s.push_str("<table><tr><th>cleared</th><th>tool</th><th>target</th><th class=\"n\">chars</th><th class=\"n\">read again</th><th class=\"n\">~tokens again</th></tr>\n");
            for x in &c.cleared {
                let _ = writeln!(
                    s,
                    "<tr><td class=\"mono\">{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                    escape(&x.tool_use_id),
                    escape(&x.tool),
                    escape(x.target.as_deref().unwrap_or("")),
                    group_digits(x.chars),
                    x.calls_again,
                    group_digits(x.tokens_again)
                );
            }
            s.push_str("</table>\n");
        }
        s.push_str("</details>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forgot::parts::Numbered;
    use crate::forgot::{CompactionInput, KeptInput, SummaryText, analyze};
    use crate::message::Message;

    #[test]
    fn the_page_lists_what_the_losses_cost_afterwards() {
        let input = CompactionInput {
            kind: "test full".into(),
            micro: false,
            at: Some(1),
            call: None,
            trigger: None,
            rule: "everything is replaced".into(),
            before: vec![Numbered::new(
                Some(0),
                Message::user_text("Never push to main."),
            )],
            summary: SummaryText::Text("Work went on.".into()),
            kept: KeptInput::recorded(Vec::new(), Vec::new()),
            cleared: Vec::new(),
            after: vec![Numbered::new(
                Some(2),
                Message::user_text("Again: never push to <main>!"),
            )],
            tokens_before: None,
        };
        let c = analyze(1, &input);
        let mut s = String::new();
        afterwards(&mut s, &c);
        assert!(s.contains("<p>Afterwards:</p>"), "{s}");
        assert!(
            s.contains("restated by the user: Never push to main. (message 2)"),
            "{s}"
        );
    }
}
