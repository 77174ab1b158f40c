//! The first-run legend's text: what the panes are, the stages of the strategy in force with
//! their letters and thresholds (from the config, so the numbers are the ones that apply, in
//! the strategy's unit), why a kept count can be one more, the marks, the views (`t`, `C`),
//! the step keys, and the start-up notices in full. A leaf: the overlay draws these lines (`app/legend/draw.rs`) and its
//! scrolling counts them (`app`).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::compact::{Pipeline, PipelineConfig, Stage, Strategy};
use crate::tui::pause::{STEP_KEYS, wrap_words};
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// Widest the legend box gets: its lines are written for this (72 columns of text).
const MAX_WIDTH: u16 = 76;

/// Where the legend goes on `area`: centered, as tall as its text (or the screen).
pub fn rect(area: Rect, lines: usize) -> Rect {
    let w = MAX_WIDTH.min(area.width.saturating_sub(2));
    let h = (lines as u16 + 2).min(area.height.saturating_sub(2));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn text_width(size: (u16, u16)) -> usize {
    let area = crate::tui::layout::full(size);
    (MAX_WIDTH.min(area.width.saturating_sub(2)) as usize).saturating_sub(2)
}

/// What the strategy counts sizes in, as the gauge, the limit and the events show them.
fn sizes_line(strategy: Strategy) -> String {
    match strategy.unit() {
        crate::compact::SizeUnit::Tokens => {
            format!("{strategy} counts tokens (str() chars / 4); the timeline plots chars")
        }
        crate::compact::SizeUnit::JsonChars => {
            format!("{strategy} counts JSON chars (json.dumps); the timeline plots str() chars")
        }
        crate::compact::SizeUnit::Chars => {
            format!("{strategy} counts chars of Python str() of the history")
        }
    }
}

/// What a stage does, with the numbers in force, in the strategy's unit.
fn stage_what(stage: Stage, c: &PipelineConfig) -> String {
    let unit = c.strategy.unit().label();
    let tail = c.snip_max_messages.saturating_sub(c.snip_keep_head);
    match (stage, c.strategy) {
        (Stage::ToolResultBudget, _) => format!(
            "batch > {} chars: biggest results to files",
            group_digits(c.budget_chars)
        ),
        (Stage::SnipCompact, Strategy::S08) => format!(
            "> {} messages: keep the first {}, last {tail}",
            c.snip_max_messages, c.snip_keep_head
        ),
        (Stage::SnipCompact, Strategy::S08Latest) => format!(
            "> {} messages: first {}, last {}, rest archived",
            c.snip_max_messages,
            c.snip_keep_head,
            tail.saturating_sub(1)
        ),
        (Stage::SnipCompact, _) => format!(
            "> {} messages: first {}, last {tail}, cut archived",
            c.snip_max_messages, c.snip_keep_head
        ),
        (Stage::MicroCompact, Strategy::S06) => format!(
            "> {} results: older > {} chars -> [Previous: …]",
            c.micro_keep_recent, c.micro_min_chars
        ),
        (Stage::MicroCompact, Strategy::S08) => format!(
            "> {} results: older > {} chars -> placeholder",
            c.micro_keep_recent, c.micro_min_chars
        ),
        (Stage::MicroCompact, _) => format!(
            "> {} results: older > {} chars -> saved, path",
            c.micro_keep_recent, c.micro_min_chars
        ),
        (Stage::FitToolResults, _) => {
            format!(
                "> {} {unit}: largest results -> previews",
                group_digits(c.context_limit)
            )
        }
        // A row has 48 columns for this: "one" goes when the unit is longer.
        (Stage::CompactHistory, _) => format!(
            "still > {} {unit}: {}[Compacted] summary",
            group_digits(c.context_limit),
            if unit == "chars" { "one " } else { "" }
        ),
        (Stage::AutoCompact, _) => format!(
            "> {} {unit}: summary replaces the history",
            group_digits(c.context_limit)
        ),
        (Stage::ReactiveCompact, _) => format!(
            "API: prompt too long -> summary, keep {}, retry",
            c.reactive_keep_tail
        ),
    }
}

/// The legend's lines, at the width the box will have.
pub fn lines(
    theme: &Theme,
    c: &PipelineConfig,
    notices: &[&str],
    size: (u16, u16),
) -> Vec<Line<'static>> {
    let width = text_width(size);
    let head = |s: &str| Span::styled(format!("{s:<8}"), theme.title());
    let stage = |stage: Stage, what: String| {
        Line::from(vec![
            Span::raw("  "),
            Span::styled(Theme::stage_tag(stage), theme.stage(stage)),
            Span::raw("  "),
            Span::styled(format!("{:<19}", stage.name()), theme.stage(stage)),
            Span::raw(what),
        ])
    };
    let mut out = vec![
        Line::from(Span::styled(
            "A coding agent runs; its context is compacted in front of you.",
            theme.title(),
        )),
        Line::from(""),
        Line::from(vec![
            head("Panes"),
            Span::raw("1 Conversation  what the model sees (v: whole session)"),
        ]),
        Line::from("        2 Events        every stage: why it ran, what it changed"),
        Line::from("        3 Outputs       results saved to files    4 Transcripts"),
        Line::from("        5 Input         i types, Esc leaves;  Context: size vs limit"),
        Line::from(vec![head("Sizes"), Span::raw(sizes_line(c.strategy))]),
        Line::from(vec![
            head("Stages"),
            Span::raw("before every model call, cheapest first; letter = row tag"),
        ]),
    ];
    // The strategy's own stages, in its order, then its summary on a refusal if it has one.
    let pipeline = Pipeline::new(*c);
    let mut stages: Vec<Stage> = pipeline.stages().to_vec();
    stages.push(pipeline.summarizing_stage());
    if c.strategy.reactive_attempts() > 0 {
        stages.push(Stage::ReactiveCompact);
    }
    out.extend(stages.iter().map(|&s| stage(s, stage_what(s, c))));
    if c.strategy != Strategy::S08 {
        let names: Vec<&str> = stages.iter().map(|s| s.name()).collect();
        let text = format!(
            "--strategy {} runs {} (docs/strategies.md)",
            c.strategy,
            names.join(", ")
        );
        for l in wrap_words(&text, width.saturating_sub(2)) {
            out.push(Line::from(Span::styled(format!("  {l}"), theme.warn())));
        }
    }
    let why = "a kept count can be one more than above: a tool call is kept with its result";
    for l in wrap_words(why, width.saturating_sub(2)) {
        out.push(Line::from(Span::styled(format!("  {l}"), theme.dim())));
    }
    out.extend([
        Line::from(vec![
            head("Marks"),
            Span::raw("Δ the event has a before/after diff (Enter)   ▸ Enter expands"),
        ]),
        Line::from(vec![
            head("Views"),
            Span::raw("t timeline of every call   C compare strategies   ? help here"),
        ]),
        Line::from(vec![head("Step"), Span::raw(STEP_KEYS)]),
        Line::from("        /step or --step; highlight: the rows the next stage will change"),
    ]);
    if !notices.is_empty() {
        out.push(Line::from(head("Notices")));
        for n in notices {
            for l in wrap_words(n, width.saturating_sub(2)) {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.warn())));
            }
        }
    }
    out.push(Line::from(Span::styled(
        "Enter closes (l brings it back)   ? every key   q quit",
        theme.dim(),
    )));
    out
}
