//! What a stage did, as data: the UI draws these and never recomputes them.

use serde::Serialize;

use super::unit::SizeUnit;
use crate::store::FileWritten;
use crate::util::group_digits;

/// The stages of every strategy, by the lesson's function names. A stage that two strategies
/// share a name for does the same job in both (snip, micro); which variant ran is the
/// strategy's (docs/strategies.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    ToolResultBudget,
    SnipCompact,
    MicroCompact,
    /// s08-latest: the largest results become previews until the history fits a target.
    FitToolResults,
    CompactHistory,
    ReactiveCompact,
    /// s06: the transcript and a summary replace the whole history (also its compact tool).
    AutoCompact,
}

impl Stage {
    /// The stage's name, as the lesson spells it (docs/pipeline.md).
    pub fn name(self) -> &'static str {
        match self {
            Stage::ToolResultBudget => "tool_result_budget",
            Stage::SnipCompact => "snip_compact",
            Stage::MicroCompact => "micro_compact",
            Stage::FitToolResults => "fit_tool_results",
            Stage::CompactHistory => "compact_history",
            Stage::ReactiveCompact => "reactive_compact",
            Stage::AutoCompact => "auto_compact",
        }
    }

    /// Whether the stage replaces (part of) the history with a summary.
    pub fn summarizes(self) -> bool {
        matches!(
            self,
            Stage::CompactHistory | Stage::ReactiveCompact | Stage::AutoCompact
        )
    }

    pub const ALL: [Stage; 7] = [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
        Stage::FitToolResults,
        Stage::CompactHistory,
        Stage::ReactiveCompact,
        Stage::AutoCompact,
    ];
}

/// Why a history was summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// The estimate after micro_compact was over the limit.
    OverLimit,
    /// The model called the `compact` tool, or the user asked for it.
    Requested,
    /// The API said the prompt was too long.
    PromptTooLong,
}

/// One thing a stage changed. Indices refer to the history the stage was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A tool result's content went to a file; the context keeps a marker.
    Persisted {
        message: usize,
        block: usize,
        tool_use_id: Option<String>,
        chars: usize,
        marker_chars: usize,
        path: String,
    },
    /// Messages `head_end..tail_start` were replaced by one marker message.
    Snipped {
        head_end: usize,
        tail_start: usize,
        removed: usize,
    },
    /// An older tool result became the placeholder.
    Placeholder {
        message: usize,
        block: usize,
        tool_use_id: Option<String>,
        chars: usize,
    },
    /// An older tool result was saved (or its saved copy found) and became a placeholder
    /// naming the file (s08-latest and guarded micro).
    Saved {
        message: usize,
        block: usize,
        tool_use_id: Option<String>,
        chars: usize,
        placeholder_chars: usize,
        path: String,
    },
    /// Messages `head_end..tail_start` went to a file and one marker naming it took their
    /// place (s08-latest: a transcript of the whole list; guarded: the archive).
    Archived {
        head_end: usize,
        tail_start: usize,
        removed: usize,
        path: String,
    },
    /// The history (or `..replaced` of it) became one summary message.
    Summarized {
        replaced: usize,
        kept_tail: usize,
        trigger: CompactTrigger,
        focus: Option<String>,
        transcript: String,
        summary_chars: usize,
        /// The summarizer stopped at its token limit: the summary may be incomplete.
        summary_cut: bool,
    },
}

impl Change {
    /// The messages of the history before the stage that this change touched: one for a
    /// changed result, the cut `head_end..tail_start` for a snip or an archive, the
    /// summarized `..replaced`.
    pub fn messages(&self) -> std::ops::Range<usize> {
        match self {
            Change::Persisted { message, .. }
            | Change::Placeholder { message, .. }
            | Change::Saved { message, .. } => *message..*message + 1,
            Change::Snipped {
                head_end,
                tail_start,
                ..
            }
            | Change::Archived {
                head_end,
                tail_start,
                ..
            } => *head_end..*tail_start,
            Change::Summarized { replaced, .. } => 0..*replaced,
        }
    }
}

/// A count in a stage's reason that is not the configured number the legend shows, and
/// why. Data, so that every front end explains it the same way without reading the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Adjustment {
    /// The kept tail starts `kept - configured` messages earlier than the setting says,
    /// so that it does not open with a tool_result whose tool_use would be cut away.
    TailKeepsToolPair { configured: usize, kept: usize },
    /// The kept head runs past the setting over the tool_result messages of the tool_use
    /// it ends with.
    HeadKeepsToolPair { configured: usize, kept: usize },
}

impl Adjustment {
    /// The adjustments of a cut that keeps `head` and `tail` messages where the settings
    /// say `head_cfg` and `tail_cfg` (none when both are as set).
    pub fn of_cut(
        (head, head_cfg): (usize, usize),
        (tail, tail_cfg): (usize, usize),
    ) -> Vec<Adjustment> {
        let mut out = Vec::new();
        if head > head_cfg {
            out.push(Adjustment::HeadKeepsToolPair {
                configured: head_cfg,
                kept: head,
            });
        }
        if tail > tail_cfg {
            out.push(Adjustment::TailKeepsToolPair {
                configured: tail_cfg,
                kept: tail,
            });
        }
        out
    }

    /// `kept the last 48, not 47: 1 more so a tool_use keeps its tool_result`.
    pub fn describe(&self) -> String {
        let more = |kept: usize, configured: usize| {
            let n = kept.saturating_sub(configured);
            format!("{n} more")
        };
        match *self {
            Adjustment::TailKeepsToolPair { configured, kept } => format!(
                "kept the last {kept}, not {configured}: {} so a tool_use keeps its tool_result",
                more(kept, configured)
            ),
            Adjustment::HeadKeepsToolPair { configured, kept } => format!(
                "kept the first {kept}, not {configured}: {} so a tool_use keeps its tool_result",
                more(kept, configured)
            ),
        }
    }
}

/// The result of one stage: before and after, and what changed in between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageReport {
    pub stage: Stage,
    pub changed: bool,
    pub size_before: usize,
    pub size_after: usize,
    pub messages_before: usize,
    pub messages_after: usize,
    pub changes: Vec<Change>,
    pub files_written: Vec<FileWritten>,
    /// Why the stage acted or did not, in numbers, e.g. `53 messages > 50 (head 3, kept
    /// 47)` or `4,465 <= 50,000`. Data, so every front end shows the same sentence.
    pub reason: String,
    /// False when the strategy's gate kept the stage from running at all (s08-latest runs
    /// micro and fit only over the limit); `reason` says why.
    #[serde(skip_serializing_if = "is_true")]
    pub ran: bool,
    /// The unit of `size_before` and `size_after`: the strategy's.
    #[serde(skip_serializing_if = "SizeUnit::is_chars")]
    pub unit: SizeUnit,
    /// Counts in `reason` that differ from the settings, and why (`why()` says them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adjusted: Vec<Adjustment>,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl StageReport {
    pub fn unchanged(stage: Stage, size: usize, messages: usize) -> StageReport {
        StageReport {
            stage,
            changed: false,
            size_before: size,
            size_after: size,
            messages_before: messages,
            messages_after: messages,
            changes: Vec::new(),
            files_written: Vec::new(),
            reason: String::new(),
            ran: true,
            unit: SizeUnit::Chars,
            adjusted: Vec::new(),
        }
    }

    /// The reason with every adjustment explained beside it: `53 messages > 50 (head 3,
    /// kept 48); kept the last 48, not 47: 1 more so a tool_use keeps its tool_result`.
    /// The reason itself stays as the stage wrote it.
    pub fn why(&self) -> String {
        let mut s = self.reason.clone();
        for a in &self.adjusted {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&a.describe());
        }
        s
    }

    /// The report of a stage the strategy did not run, with why.
    pub fn not_run(
        stage: Stage,
        size: usize,
        messages: usize,
        reason: String,
        unit: SizeUnit,
    ) -> StageReport {
        let mut report = StageReport::unchanged(stage, size, messages);
        report.ran = false;
        report.reason = reason;
        report.unit = unit;
        report
    }

    /// The report of compact_history when the history is within the limit.
    pub fn within_limit(size: usize, messages: usize, limit: usize) -> StageReport {
        let mut report = StageReport::unchanged(Stage::CompactHistory, size, messages);
        report.reason = limit_reason(size, limit);
        report
    }

    /// What the stage changed, in the strategy's unit, as data: the sizes and message
    /// counts before and after, and the changes in words. Front ends show these numbers
    /// themselves rather than cut them out of `summary()`.
    pub fn delta(&self) -> StageDelta {
        StageDelta {
            unit: self.unit,
            size_before: self.size_before,
            size_after: self.size_after,
            messages_before: self.messages_before,
            messages_after: self.messages_after,
            what: self.what_changed(),
        }
    }

    /// One line saying what happened, for logs, `ctxlab run` and the events pane:
    /// `micro_compact 9 -> 9 messages, 896 -> 861 tokens: 1 result -> placeholder`.
    pub fn summary(&self) -> String {
        format!("{} {}", self.stage.name(), self.delta())
    }

    /// The changes in words, `snipped 3 messages; 1 result -> placeholder`, or `no change`.
    fn what_changed(&self) -> String {
        let what: Vec<String> = self
            .changes
            .iter()
            .map(|c| match c {
                Change::Persisted {
                    tool_use_id,
                    chars,
                    path,
                    ..
                } => format!(
                    "persisted {} ({} chars) -> {path}",
                    tool_use_id.as_deref().unwrap_or("(no id)"),
                    group_digits(*chars)
                ),
                Change::Snipped { removed, .. } => format!("snipped {removed} messages"),
                Change::Archived { removed, path, .. } => {
                    format!("archived {removed} messages -> {path}")
                }
                Change::Placeholder { .. } | Change::Saved { .. } => String::new(),
                Change::Summarized {
                    replaced,
                    kept_tail,
                    trigger,
                    focus,
                    summary_cut,
                    ..
                } => {
                    let mut s = match trigger {
                        CompactTrigger::PromptTooLong => {
                            format!(
                                "reactive: {replaced} messages -> summary, kept last {kept_tail}"
                            )
                        }
                        _ if *kept_tail > 0 => format!(
                            "history ({replaced} messages) -> summary, kept the last {kept_tail} unseen"
                        ),
                        _ => format!("history ({replaced} messages) -> [Compacted] summary"),
                    };
                    if let Some(f) = focus {
                        s.push_str(&format!(", focus: {f}"));
                    }
                    if *summary_cut {
                        s.push_str(" (summary cut at its token limit)");
                    }
                    s
                }
            })
            .filter(|s| !s.is_empty())
            .collect();
        let placeholders = self
            .changes
            .iter()
            .filter(|c| matches!(c, Change::Placeholder { .. }))
            .count();
        let saved = self
            .changes
            .iter()
            .filter(|c| matches!(c, Change::Saved { .. }))
            .count();
        let mut parts = what;
        if placeholders > 0 {
            parts.push(format!(
                "{placeholders} result{} -> placeholder",
                if placeholders == 1 { "" } else { "s" }
            ));
        }
        if saved > 0 {
            parts.push(format!(
                "{saved} result{} saved -> placeholder with path",
                if saved == 1 { "" } else { "s" }
            ));
        }
        if parts.is_empty() {
            parts.push("no change".into());
        }
        parts.join("; ")
    }
}

/// What one stage changed, in its strategy's unit (`StageReport::delta`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageDelta {
    /// The unit of both sizes: the strategy's (tokens under s06).
    pub unit: SizeUnit,
    pub size_before: usize,
    pub size_after: usize,
    pub messages_before: usize,
    pub messages_after: usize,
    /// The changes in words: `snipped 3 messages; 1 result -> placeholder`, or `no change`.
    pub what: String,
}

impl StageDelta {
    /// `2,301 -> 2,236 tokens`: both sizes with their unit.
    pub fn sizes(&self) -> String {
        format!(
            "{} -> {} {}",
            group_digits(self.size_before),
            group_digits(self.size_after),
            self.unit.label()
        )
    }
}

impl std::fmt::Display for StageDelta {
    /// `9 -> 9 messages, 896 -> 861 tokens: 1 result -> placeholder`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} -> {} messages, {}: {}",
            self.messages_before,
            self.messages_after,
            self.sizes(),
            self.what
        )
    }
}

/// `96,266 > 50,000` or `4,465 <= 50,000`: the size against the limit.
pub fn limit_reason(size: usize, limit: usize) -> String {
    let op = if size > limit { ">" } else { "<=" };
    format!("{} {op} {}", group_digits(size), group_digits(limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snip_and_an_archive_touch_their_cut_a_result_its_message() {
        let snip = Change::Snipped {
            head_end: 3,
            tail_start: 9,
            removed: 6,
        };
        let archive = Change::Archived {
            head_end: 2,
            tail_start: 5,
            removed: 3,
            path: "a".into(),
        };
        let placeholder = Change::Placeholder {
            message: 4,
            block: 0,
            tool_use_id: None,
            chars: 1,
        };
        assert_eq!(snip.messages(), 3..9);
        assert_eq!(archive.messages(), 2..5);
        assert_eq!(placeholder.messages(), 4..5);
    }

    #[test]
    fn the_delta_carries_the_strategy_s_unit_and_the_words_apart() {
        let mut r = StageReport::unchanged(Stage::MicroCompact, 2_301, 23);
        r.unit = SizeUnit::Tokens;
        r.size_after = 2_236;
        r.changed = true;
        r.changes.push(Change::Placeholder {
            message: 2,
            block: 0,
            tool_use_id: Some("t1".into()),
            chars: 300,
        });
        let d = r.delta();
        assert_eq!(d.unit, SizeUnit::Tokens);
        assert_eq!((d.size_before, d.size_after), (2_301, 2_236));
        assert_eq!((d.messages_before, d.messages_after), (23, 23));
        assert_eq!(d.what, "1 result -> placeholder");
        assert_eq!(d.sizes(), "2,301 -> 2,236 tokens");
        assert_eq!(
            r.summary(),
            "micro_compact 23 -> 23 messages, 2,301 -> 2,236 tokens: 1 result -> placeholder"
        );
        let none = StageReport::unchanged(Stage::SnipCompact, 10, 1);
        assert_eq!(none.delta().what, "no change");
        assert_eq!(none.delta().sizes(), "10 -> 10 chars");
    }
}
