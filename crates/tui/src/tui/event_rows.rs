//! One row of the events pane as data (`EventRow`, `EventKind`) and as text (its line, its
//! full text for the viewer, short stage names). A leaf: the state (`app`), the drawing
//! (`app/events/draw.rs`), the pause card and the diff headers all use it, and it uses none
//! of them.

use std::time::Duration;

use crate::agent::events::ErrorKind;
use crate::compact::{PipelineConfig, Stage, StageReport};
use crate::timeline::StepId;
use crate::util::{group_digits, plural};

/// One row of the events pane.
#[derive(Debug, Clone)]
pub struct EventRow {
    pub seq: usize,
    /// `App::tick` when the event arrived.
    pub tick: u64,
    pub kind: EventKind,
}

/// A change's before/after lists in the events pane (`EventsState::diff`), named when
/// they were kept: rows refer to them by id, not by where they sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffId(usize);

impl DiffId {
    pub(in crate::tui) fn new(index: usize) -> DiffId {
        DiffId(index)
    }

    pub(in crate::tui) fn index(self) -> usize {
        self.0
    }
}

#[derive(Debug, Clone)]
pub enum EventKind {
    Stage {
        report: StageReport,
        /// The before/after lists kept when the stage changed the history.
        diff: Option<DiffId>,
        /// The timeline step this stage became, as the run named it (`run::Run::on_event`).
        step: Option<StepId>,
    },
    /// The history was replaced outside a stage (e.g. cancel repair).
    Replaced {
        size_before: usize,
        size_after: usize,
        /// Messages before and after: an empty history is "empty", never the 2 chars of `[]`.
        messages_before: usize,
        messages: usize,
        diff: DiffId,
    },
    Retry {
        attempt: u32,
        reason: String,
        wait: Duration,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    CompactRequested {
        focus: Option<String>,
    },
    /// The API refused a request as too long, in its words: reactive_compact follows.
    PromptTooLong {
        message: String,
    },
    /// A summary request went to the model; `input_tokens` is what the API reported for it
    /// (kept apart from the main calls' figure). `chars` is the request's size: history and
    /// instructions when `history_chars` (the history text, the number a stage's reason
    /// gives when it cuts the input) is known, else the estimate of its messages.
    SummaryCall {
        chars: usize,
        history_chars: Option<usize>,
        input_tokens: Option<u64>,
    },
    /// The API refused a summary request as too long, in its words: the next attempt is
    /// smaller, or the history is reduced without a model.
    SummaryRefused {
        message: String,
    },
    /// The user cancelled the turn.
    Cancelled,
    /// The model's answer stopped at its output limit: the message at `index` (in the
    /// history when it arrived) may be cut short.
    AnswerCut {
        max_tokens: u32,
        index: usize,
    },
    /// A start-up notice (why the scripted model runs, where the demo workspace is), kept
    /// in full: Enter opens it.
    Notice {
        text: String,
    },
    /// The agent applied new settings (a new strategy, new numbers) from model call `call`
    /// on (`/config`).
    Settings {
        from: PipelineConfig,
        to: PipelineConfig,
        call: usize,
    },
    /// This branch continues from call `call` of an earlier one, with `config`
    /// ("continue from call N" in the timeline).
    Continued {
        call: usize,
        config: PipelineConfig,
    },
}

impl EventKind {
    pub fn diff(&self) -> Option<DiffId> {
        match self {
            EventKind::Stage { diff, .. } => *diff,
            EventKind::Replaced { diff, .. } => Some(*diff),
            _ => None,
        }
    }
}

/// Columns before a row's text: the time (`00:05.8`), a space, `Δ` or a blank, a space.
pub const TEXT_COLUMN: usize = 10;

/// Whether a row shows its whole text (wrapped) rather than one cut line: the selected
/// row, whose reason is the lesson, and start-up notices, which are read there in full
/// (the hint line keeps the keys).
pub fn shown_whole(kind: &EventKind, selected: bool) -> bool {
    selected || matches!(kind, EventKind::Notice { .. })
}

/// The most lines one row may take in a pane `viewport` lines high: all of them (an
/// 80x24 screen's pane is 5 lines; a budget reason naming its file needs them).
pub fn max_row_lines(viewport: usize) -> usize {
    viewport.max(1)
}

/// Columns a row's later lines are indented by: less than the time column, so a wrapped
/// reason gets most of the pane's width (an 80-column screen's events pane is 42 wide).
pub const WRAP_INDENT: usize = 4;

/// A row's text in the lines the events pane draws it in, `width` the pane's inner width:
/// one line (cut with `…`) unless `whole`, then wrapped between words (the first line
/// after the time column, the others after `WRAP_INDENT`), at most `max_lines` lines (the
/// last cut with `…` when more was left). The pane and the scrolling both count rows with
/// it, so they agree on how tall a row is.
pub fn row_lines(kind: &EventKind, width: usize, whole: bool, max_lines: usize) -> Vec<String> {
    let text_w = width.saturating_sub(TEXT_COLUMN).max(1);
    let text = row_text(kind);
    if !whole || crate::util::display_width(&text) <= text_w || max_lines <= 1 {
        return vec![crate::util::fit_width(&text, text_w)];
    }
    let (first, _) = crate::tui::rows::wrap_words_at(&text, text_w, 1);
    let Some((_, head)) = first.into_iter().next() else {
        return vec![String::new()];
    };
    let rest: String = text.chars().skip(head.chars().count()).collect();
    let rest_w = width.saturating_sub(WRAP_INDENT).max(1);
    let (rows, more) = crate::tui::rows::wrap_words_at(rest.trim_start(), rest_w, max_lines - 1);
    let mut out = vec![crate::util::fit_width(&head, text_w)];
    let last = rows.len().saturating_sub(1);
    for (i, (_, line)) in rows.into_iter().enumerate() {
        out.push(if more && i == last {
            crate::util::clip_width(&format!("{line} …"), rest_w)
        } else {
            crate::util::fit_width(&line, rest_w)
        });
    }
    out
}

/// Lines a row takes (`row_lines`' count, without wrapping rows shown on one line).
pub fn row_height(kind: &EventKind, width: usize, selected: bool, viewport: usize) -> usize {
    if !shown_whole(kind, selected) {
        return 1;
    }
    row_lines(kind, width, true, max_row_lines(viewport)).len()
}

/// Short stage names for event rows (compact_history keeps its name: "compact" alone would
/// read as the compact tool).
pub fn short_name(stage: Stage) -> &'static str {
    match stage {
        Stage::ToolResultBudget => "budget",
        Stage::SnipCompact => "snip",
        Stage::MicroCompact => "micro",
        Stage::FitToolResults => "fit",
        Stage::CompactHistory => "compact_history",
        Stage::ReactiveCompact => "reactive",
        Stage::AutoCompact => "auto",
    }
}

/// A stage row's text: `snip: 53 messages > 50 (head 3, kept 47) · 17,500 -> 17,163 chars
/// snipped 3 messages`; the reason first, so a narrow pane still shows why. The sizes are
/// `StageDelta::sizes`, in the strategy's unit, as step mode, `ctxlab run` and the export
/// give them.
pub fn stage_text(report: &StageReport) -> String {
    let delta = report.delta();
    let sizes = delta.sizes();
    let reason = if report.reason.is_empty() {
        "ran".to_string()
    } else {
        report.reason.clone()
    };
    if report.changed {
        let mut s = format!(
            "{}: {reason} · {sizes} {}",
            short_name(report.stage),
            delta.what
        );
        // After the sizes, so a narrow pane still shows them; the detail has it whole.
        for a in &report.adjusted {
            s.push_str(&format!(" · {}", a.describe()));
        }
        s
    } else {
        format!("{}: {reason} · no change", short_name(report.stage))
    }
}

/// A history's size for a row: its messages and `str()` chars, or "empty" (whose `str()`
/// is `[]`, 2 chars that are no content).
pub fn history_size(messages: usize, chars: usize) -> String {
    if messages == 0 {
        return "empty".to_string();
    }
    format!(
        "{} ({} chars)",
        plural(messages, "message"),
        group_digits(chars)
    )
}

/// One line for any event row (without the time), as the pane shows it.
pub fn row_text(kind: &EventKind) -> String {
    match kind {
        EventKind::Stage { report, .. } => stage_text(report),
        EventKind::Replaced {
            size_before,
            size_after,
            messages_before,
            messages,
            ..
        } => format!(
            "history replaced: {} -> {}",
            history_size(*messages_before, *size_before),
            history_size(*messages, *size_after)
        ),
        EventKind::Retry {
            attempt,
            reason,
            wait,
        } => format!(
            "retry: {}",
            crate::agent::retry_text(*attempt, *wait, reason)
        ),
        EventKind::Error { kind, message } => format!(
            "error {}: {message}",
            serde_json::to_string(kind)
                .unwrap_or_default()
                .trim_matches('"')
        ),
        EventKind::CompactRequested { focus } => match focus {
            Some(f) => format!("compact tool: focus {f}"),
            None => "compact tool: no focus".to_string(),
        },
        EventKind::PromptTooLong { message } => format!("API refused: {message}"),
        EventKind::SummaryRefused { message } => format!("summary call refused: {message}"),
        EventKind::SummaryCall {
            chars,
            history_chars,
            input_tokens,
        } => {
            let mut s = match history_chars {
                Some(h) => format!(
                    "summary call: {}",
                    crate::agent::SummarySizes {
                        history_chars: *h,
                        with_instructions: *chars,
                    }
                    .text()
                ),
                None => format!("summary call: {} chars", group_digits(*chars)),
            };
            if let Some(t) = input_tokens {
                s.push_str(&format!(" · API {} tokens in", group_digits(*t as usize)));
            }
            s
        }
        EventKind::Cancelled => "turn cancelled by the user".to_string(),
        EventKind::AnswerCut { max_tokens, index } => {
            crate::agent::answer_cut_text(*max_tokens, *index)
        }
        EventKind::Notice { text } => format!("notice: {text}"),
        EventKind::Settings { from, to, call } => settings_text(from, to, *call),
        EventKind::Continued { call, config } => format!(
            "continued from call {call} with {}, context_limit {}",
            config.strategy,
            group_digits(config.context_limit)
        ),
    }
}

/// `strategy s08 -> guarded, from call 12`, or the numbers that changed: `context_limit
/// 50,000 -> 30,000, from call 12`.
pub fn settings_text(from: &PipelineConfig, to: &PipelineConfig, call: usize) -> String {
    if from.strategy != to.strategy {
        return format!(
            "strategy {} -> {}, from call {call}",
            from.strategy, to.strategy
        );
    }
    let changed: Vec<String> = changed_numbers(from, to)
        .into_iter()
        .map(|(key, a, b)| format!("{key} {} -> {}", group_digits(a), group_digits(b)))
        .collect();
    if changed.is_empty() {
        format!("settings unchanged, from call {call}")
    } else {
        format!("{}, from call {call}", changed.join(", "))
    }
}

/// The settings whose number differs: (key, before, after).
fn changed_numbers(
    from: &PipelineConfig,
    to: &PipelineConfig,
) -> Vec<(&'static str, usize, usize)> {
    PipelineConfig::KEYS
        .iter()
        .filter_map(|k| match (from.get(k), to.get(k)) {
            (Some(a), Some(b)) if a != b => Some((*k, a, b)),
            _ => None,
        })
        .collect()
}

/// The full text of a row for the viewer (Enter on a row without a diff): every number
/// of a stage report, the whole message of an error or a notice.
pub fn detail(kind: &EventKind) -> (String, String) {
    match kind {
        EventKind::Stage { report, .. } => {
            let mut text = format!(
                "{}\nwhy: {}\nsize: {}\nmessages: {} -> {}\n{}",
                report.stage.name(),
                if report.reason.is_empty() {
                    "(no reason recorded)".to_string()
                } else {
                    report.why()
                },
                report.delta().sizes(),
                report.messages_before,
                report.messages_after,
                report.summary()
            );
            for f in &report.files_written {
                text.push_str(&format!("\nwrote {}", f.path));
            }
            (format!("{} · {}", report.stage.name(), report.reason), text)
        }
        EventKind::Notice { text } => ("notice".to_string(), text.clone()),
        EventKind::Settings { from, to, call } => {
            let mut text = format!(
                "{}\n\nThe agent applies new settings between model calls, never inside a \
                 call's pipeline: call {call} is the first to run under them.\n\nstrategy {}",
                settings_text(from, to, *call),
                to.strategy
            );
            for key in PipelineConfig::KEYS {
                let now = to.get(key).unwrap_or_default();
                let before = from.get(key).unwrap_or_default();
                text.push_str(&format!("\n{key} = {}", group_digits(now)));
                if before != now {
                    text.push_str(&format!(" (was {})", group_digits(before)));
                }
            }
            ("settings".to_string(), text)
        }
        other => ("event".to_string(), row_text(other)),
    }
}

/// The start-up notices among `rows`, in full and in order (the legend lists them).
pub fn notices(rows: &[EventRow]) -> Vec<&str> {
    rows.iter()
        .filter_map(|e| match &e.kind {
            EventKind::Notice { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
