//! What each compaction forgot (docs/forgot.md). One input shape for every compaction
//! ctxlab knows of (recorded by Claude Code or Codex, made by ctxlab's agent, made in a
//! replay): the history the model had before, the summary, what was kept and by which rule,
//! the tool results a micro compaction cleared and what came after. `analyze` turns it into
//! the report: sizes before and dropped by kind, the facts check, the cleared results and
//! whether they were read again.
//!
//! Pure: no files, no terminal, no model. `from_session` and `from_replay` build the inputs;
//! the front ends (`ctxlab forgot`, the export page, the workbench) only draw the reports.

mod aftermath;
pub mod at_risk;
mod before_index;
pub mod carry;
mod cleared;
pub mod facts;
pub mod from_replay;
pub mod from_session;
mod keyed;
mod memo;
pub mod parts;
pub mod task_text;
#[cfg(test)]
pub(crate) mod test_rollouts;
pub mod text;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::message::Message;
use crate::session::model::TokenCount;
pub use aftermath::{Aftermath, FailedAgain, ReadAgain, Restated};
pub use cleared::{Cleared, ReRead};
pub use facts::{Fact, FactKind};
pub use memo::Memo;
use parts::{Numbered, Part, PartKind, parts_of, tool_names};

/// The summary a compaction left, as far as anyone can read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "text")]
pub enum SummaryText {
    Text(String),
    /// The provider encrypted it (Codex's remote compaction).
    Encrypted,
    /// A compaction is marked, its summary is not in the file.
    NotRecorded,
    /// A micro compaction writes none.
    None,
}

impl SummaryText {
    pub fn text(&self) -> &str {
        match self {
            SummaryText::Text(t) => t,
            _ => "",
        }
    }
}

/// How ctxlab knows what a compaction kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeptHow {
    /// The file or the stage's report says.
    Recorded,
    /// The file does not say; the agent's stated rule, applied to the history before, does.
    ByRule,
    /// Neither: the dropped part is counted as the whole history before (an upper bound).
    NotRecorded,
}

/// What a compaction kept besides its summary.
#[derive(Debug, Clone)]
pub struct KeptInput {
    pub how: KeptHow,
    /// Why it is not recorded, or which rule gave it.
    pub why: Option<String>,
    /// The kept messages as the model saw them after the compaction.
    pub messages: Vec<Message>,
    /// Which of `CompactionInput::before` they are.
    pub from_before: Vec<usize>,
}

impl KeptInput {
    pub fn recorded(messages: Vec<Message>, from_before: Vec<usize>) -> KeptInput {
        KeptInput {
            how: KeptHow::Recorded,
            why: None,
            messages,
            from_before,
        }
    }

    pub fn not_recorded(why: impl Into<String>) -> KeptInput {
        KeptInput {
            how: KeptHow::NotRecorded,
            why: Some(why.into()),
            messages: Vec::new(),
            from_before: Vec::new(),
        }
    }
}

/// One compaction, in the one shape every source is turned into.
#[derive(Debug, Clone)]
pub struct CompactionInput {
    /// `claude-code full`, `codex remote`, `s08 compact_history`, …
    pub kind: String,
    /// Micro compactions clear tool results in place and keep everything else.
    pub micro: bool,
    /// The message number where it happened.
    pub at: Option<usize>,
    /// A stage of a run (the live agent, a replay): the model call it ran before, so a
    /// stage that only cleared results, which is no compaction, is named by its call.
    pub call: Option<usize>,
    pub trigger: Option<String>,
    /// The agent's own rule for what survives, in words.
    pub rule: String,
    /// The history the model had just before.
    pub before: Vec<Numbered>,
    pub summary: SummaryText,
    pub kept: KeptInput,
    /// Micro compactions: the tool results they cleared, by call id.
    pub cleared: Vec<String>,
    /// What came after, up to the next compaction: where a cleared result is read again.
    pub after: Vec<Numbered>,
    /// The tokens before, as `inspect` gives them: the count the recording tool wrote on
    /// the compaction, else the last call's before it (an estimate of the context, `~`).
    pub tokens_before: Option<TokenCount>,
}

/// A count and its size in chars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub count: usize,
    pub chars: usize,
}

impl Count {
    fn add(&mut self, chars: usize) {
        self.count += 1;
        self.chars += chars;
    }
}

/// Messages and their parts by kind, with their sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    pub messages: usize,
    pub chars: usize,
    /// chars / 4, rounded up: an estimate, whatever the model's tokenizer.
    pub tokens_estimate: usize,
    pub user_text: Count,
    pub injected_text: Count,
    pub assistant_text: Count,
    pub thinking: Count,
    pub tool_calls: Count,
    pub tool_results: Count,
    pub tool_results_by_tool: BTreeMap<String, Count>,
    pub other: Count,
}

impl Breakdown {
    fn of<'a>(parts: impl Iterator<Item = &'a Part>, messages: usize) -> Breakdown {
        let mut b = Breakdown {
            messages,
            ..Breakdown::default()
        };
        for p in parts {
            let tool = match &p.kind {
                PartKind::ToolResult(tool) => tool.as_str(),
                _ => "",
            };
            b.count(&p.kind, tool, p.chars());
        }
        b.tokens_estimate = b.chars.div_ceil(4);
        b
    }

    /// Counts a part of `chars` chars; `tool` names a tool result's tool.
    fn count(&mut self, kind: &PartKind, tool: &str, chars: usize) {
        let b = self;
        {
            b.chars += chars;
            match kind {
                PartKind::UserText => b.user_text.add(chars),
                PartKind::InjectedText => b.injected_text.add(chars),
                PartKind::AssistantText => b.assistant_text.add(chars),
                PartKind::Thinking => b.thinking.add(chars),
                PartKind::ToolCall(_) => b.tool_calls.add(chars),
                PartKind::ToolResult(_) => {
                    b.tool_results.add(chars);
                    // Looked up before inserting: the name is copied once per report.
                    match b.tool_results_by_tool.get_mut(tool) {
                        Some(c) => c.add(chars),
                        None => {
                            let mut c = Count::default();
                            c.add(chars);
                            b.tool_results_by_tool.insert(tool.to_string(), c);
                        }
                    }
                }
                PartKind::Other => b.other.add(chars),
            }
        }
    }
}

/// What was kept, counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptReport {
    pub how: KeptHow,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub messages: usize,
    pub chars: usize,
}

/// What one compaction forgot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactionForgot {
    /// 1-based, in the order the compactions happened; 0 for a run's stage that forgot
    /// something without summarizing, which the run does not count as a compaction.
    pub index: usize,
    pub kind: String,
    pub at: Option<usize>,
    /// The model call a run's stage ran before (`CompactionInput::call`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    pub trigger: Option<String>,
    pub rule: String,
    pub before: Breakdown,
    pub tokens_before: Option<TokenCount>,
    pub summary: SummaryText,
    pub summary_chars: usize,
    pub kept: KeptReport,
    pub dropped: Breakdown,
    /// Not carried first, ranked by kind; then the unknown ones; then the carried ones.
    pub facts: Vec<Fact>,
    pub not_carried: usize,
    /// Facts whose fate is unknown: no summary is recorded and the kept messages do not
    /// mention them.
    pub unknown: usize,
    /// More items were found than `facts::MAX_FACTS`: the dropped messages up to this
    /// one (the farthest from the compaction) were not checked.
    pub facts_capped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchecked_through: Option<usize>,
    pub cleared: Vec<Cleared>,
    /// What the not-carried facts cost after the compaction.
    pub afterwards: Aftermath,
}

/// The report for one compaction; `index` is its 1-based number.
pub fn analyze(index: usize, input: &CompactionInput) -> CompactionForgot {
    analyze_with(index, input, &mut Memo::default())
}

/// `analyze` with the messages' analysed forms kept in `memo` for the next compaction (a
/// Codex rollout's compactions repeat most of their history: each distinct message is cut
/// into parts and normalised once). The same report as `analyze`.
pub fn analyze_with(index: usize, input: &CompactionInput, memo: &mut Memo) -> CompactionForgot {
    let report = analyze_in(index, input, memo);
    memo.sweep();
    report
}

fn analyze_in(index: usize, input: &CompactionInput, memo: &mut Memo) -> CompactionForgot {
    let ids: Vec<_> = input
        .before
        .iter()
        .map(|n| memo.id(&n.message, n.injected))
        .collect();
    let kept_ids: Vec<_> = input
        .kept
        .messages
        .iter()
        .map(|m| memo.id(m, false))
        .collect();
    // The tools named as `tool_names` names them over before, after and kept, in order.
    let mut names = HashMap::new();
    for &id in &ids {
        memo.name_tools(id, &mut names);
    }
    names.extend(tool_names(input.after.iter().map(|n| &n.message)));
    for &id in &kept_ids {
        memo.name_tools(id, &mut names);
    }
    let mut before = Breakdown {
        messages: input.before.len(),
        ..Breakdown::default()
    };
    for &id in &ids {
        for (p, chars) in memo.sized(id) {
            before.count(&p.kind, memo::result_tool(p, &names), chars);
        }
    }
    before.tokens_estimate = before.chars.div_ceil(4);
    // Which messages before were kept, by position (a set of thousands of positions was
    // hashed at every Codex compaction).
    let mut kept_set = vec![false; input.before.len()];
    for &i in &input.kept.from_before {
        if let Some(k) = kept_set.get_mut(i) {
            *k = true;
        }
    }
    // Only the parts searched for facts (or cleared results) are built as parts; the rest
    // of the history is counted from the memo.
    let every_part = input.micro || !input.cleared.is_empty();
    let before_parts: Vec<Vec<Part>> = input
        .before
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(i, (n, &id))| {
            if every_part || !kept_set[i] {
                memo.parts(id, n.number, &names)
            } else {
                Vec::new()
            }
        })
        .collect();
    let cleared_ids: HashSet<&str> = input.cleared.iter().map(String::as_str).collect();
    let is_cleared = |p: &Part| {
        p.tool_id
            .as_deref()
            .is_some_and(|id| cleared_ids.contains(id))
    };
    let (dropped_parts, dropped_messages, reference_texts): (Vec<&Part>, usize, Vec<String>) =
        if input.micro {
            let dropped: Vec<&Part> = before_parts
                .iter()
                .flatten()
                .filter(|p| matches!(p.kind, PartKind::ToolResult(_)) && is_cleared(p))
                .collect();
            let rest = before_parts
                .iter()
                .flatten()
                .filter(|p| !(matches!(p.kind, PartKind::ToolResult(_)) && is_cleared(p)))
                .map(|p| carry::normalize(&p.text))
                .collect();
            (dropped, 0, rest)
        } else {
            let dropped_msgs: Vec<usize> =
                (0..input.before.len()).filter(|&i| !kept_set[i]).collect();
            let dropped = dropped_msgs
                .iter()
                .flat_map(|&i| before_parts[i].iter())
                .collect();
            (dropped, dropped_msgs.len(), Vec::new())
        };
    let kept_chars: usize = kept_ids
        .iter()
        .flat_map(|&id| memo.sized(id).map(|(_, chars)| chars))
        .sum();
    let extractor = facts::Extractor::new(&dropped_parts).run(&dropped_parts);
    let facts_capped = extractor.unchecked_through.is_some();
    let unchecked_through = extractor.unchecked_through.flatten();
    let known = match input.summary {
        SummaryText::Text(_) | SummaryText::None => facts::Known::Yes,
        SummaryText::Encrypted | SummaryText::NotRecorded => facts::Known::OnlyKept,
    };
    // The reference (the summary and every kept message, normalised and joined) is built
    // only when there is a fact to look for in it: a Codex compaction keeps thousands of
    // prompts, and most compactions of a long rollout drop no fact (issue 36).
    let facts = if extractor.items.is_empty() {
        Vec::new()
    } else {
        for &id in &kept_ids {
            memo.normalize(id);
        }
        memo.count_referenced(kept_ids.len());
        let summary = carry::normalize(input.summary.text());
        let memo = &*memo;
        let reference = carry::Reference::of_normalized(
            std::iter::once(summary.as_str())
                .chain(
                    kept_ids
                        .iter()
                        .flat_map(|&id| memo.normalized(id).iter().map(String::as_str)),
                )
                .chain(reference_texts.iter().map(String::as_str)),
        );
        facts::check(extractor.items, &reference, known)
    };
    let cleared = cleared::cleared(input, &before_parts, &names);
    let after_parts: Vec<Part> = input
        .after
        .iter()
        .flat_map(|n| parts_of(n, &names))
        .collect();
    let afterwards = aftermath::aftermath(&facts, &after_parts, input.after.len());
    CompactionForgot {
        index,
        kind: input.kind.clone(),
        at: input.at,
        call: input.call,
        trigger: input.trigger.clone(),
        rule: input.rule.clone(),
        tokens_before: input.tokens_before,
        summary_chars: input.summary.text().chars().count(),
        summary: input.summary.clone(),
        kept: KeptReport {
            how: input.kept.how,
            why: input.kept.why.clone(),
            messages: if input.micro {
                input.kept.from_before.len()
            } else {
                input.kept.messages.len()
            },
            chars: if input.micro {
                before.chars - dropped_parts.iter().map(|p| p.chars()).sum::<usize>()
            } else {
                kept_chars
            },
        },
        dropped: Breakdown::of(dropped_parts.iter().copied(), dropped_messages),
        not_carried: facts.iter().filter(|f| f.not_carried()).count(),
        unknown: facts.iter().filter(|f| f.carried.is_none()).count(),
        facts_capped,
        unchecked_through,
        afterwards,
        facts,
        cleared,
        before,
    }
}

/// Every compaction's report, numbered from 1.
pub fn analyze_all(inputs: &[CompactionInput]) -> Vec<CompactionForgot> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, c)| analyze(i + 1, c))
        .collect()
}

/// The `--json` shape: `{"compactions": [...]}`.
#[derive(Debug, Clone, Serialize)]
pub struct ForgotReport {
    pub compactions: Vec<CompactionForgot>,
}

#[cfg(test)]
mod tests;
