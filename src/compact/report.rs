//! What a stage did, as data: the UI draws these and never recomputes them.

use serde::Serialize;

use crate::store::FileWritten;
use crate::util::group_digits;

/// The stages of the pipeline, in the order they run before a model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    ToolResultBudget,
    SnipCompact,
    MicroCompact,
    CompactHistory,
    ReactiveCompact,
}

impl Stage {
    /// The stage's name, as the lesson spells it (docs/pipeline.md).
    pub fn name(self) -> &'static str {
        match self {
            Stage::ToolResultBudget => "tool_result_budget",
            Stage::SnipCompact => "snip_compact",
            Stage::MicroCompact => "micro_compact",
            Stage::CompactHistory => "compact_history",
            Stage::ReactiveCompact => "reactive_compact",
        }
    }

    pub const ALL: [Stage; 5] = [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
        Stage::CompactHistory,
        Stage::ReactiveCompact,
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
}

impl StageReport {
    pub(crate) fn unchanged(stage: Stage, size: usize, messages: usize) -> StageReport {
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
        }
    }

    /// The report of compact_history when the history is within the limit.
    pub fn within_limit(size: usize, messages: usize, limit: usize) -> StageReport {
        let mut report = StageReport::unchanged(Stage::CompactHistory, size, messages);
        report.reason = limit_reason(size, limit);
        report
    }

    /// One line saying what happened, for logs, `ctxlab run` and the events pane.
    pub fn summary(&self) -> String {
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
                Change::Placeholder { .. } => String::new(),
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
        let mut parts = what;
        if placeholders > 0 {
            parts.push(format!(
                "{placeholders} result{} -> placeholder",
                if placeholders == 1 { "" } else { "s" }
            ));
        }
        if parts.is_empty() {
            parts.push("no change".into());
        }
        format!(
            "{} {} -> {} messages, {} -> {} chars: {}",
            self.stage.name(),
            self.messages_before,
            self.messages_after,
            group_digits(self.size_before),
            group_digits(self.size_after),
            parts.join("; ")
        )
    }
}

/// `96,266 > 50,000` or `4,465 <= 50,000`: the size against the limit.
pub fn limit_reason(size: usize, limit: usize) -> String {
    let op = if size > limit { ">" } else { "<=" };
    format!("{} {op} {}", group_digits(size), group_digits(limit))
}
