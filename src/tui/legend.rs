//! The first-run legend's text: what the panes are, the five stages with their letters and
//! the thresholds in force (from the config, so the numbers are the ones that apply; under
//! another strategy than s08, which stages that one runs), the marks, the step keys, and the
//! start-up notices in full. A leaf: the overlay draws these lines (`panes::legend`) and its
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
        stage(
            Stage::ToolResultBudget,
            format!(
                "batch > {} chars: biggest results to files",
                group_digits(c.budget_chars)
            ),
        ),
        stage(
            Stage::SnipCompact,
            format!(
                "> {} messages: keep the first {}, last {}",
                c.snip_max_messages,
                c.snip_keep_head,
                c.snip_max_messages.saturating_sub(c.snip_keep_head)
            ),
        ),
        stage(
            Stage::MicroCompact,
            format!(
                "> {} results: older > {} chars -> placeholder",
                c.micro_keep_recent, c.micro_min_chars
            ),
        ),
        stage(
            Stage::CompactHistory,
            format!(
                "still > {} chars: one [Compacted] summary",
                group_digits(c.context_limit)
            ),
        ),
        stage(
            Stage::ReactiveCompact,
            format!(
                "API: prompt too long -> summary, keep {}, retry",
                c.reactive_keep_tail
            ),
        ),
    ];
    if c.strategy != Strategy::S08 {
        // The rows above are s08's: say which stages the chosen strategy runs instead.
        let pipeline = Pipeline::new(*c);
        let names: Vec<&str> = pipeline
            .stages()
            .iter()
            .chain([&pipeline.summarizing_stage()])
            .map(|s| s.name())
            .collect();
        let text = format!(
            "these are s08's; --strategy {} runs {} (docs/strategies.md)",
            c.strategy,
            names.join(", ")
        );
        for l in wrap_words(&text, width.saturating_sub(2)) {
            out.push(Line::from(Span::styled(format!("  {l}"), theme.warn())));
        }
    }
    out.extend([
        Line::from(vec![
            head("Marks"),
            Span::raw("Δ the event has a before/after diff (Enter)   ▸ Enter expands"),
        ]),
        Line::from(vec![
            head("Step"),
            Span::raw(format!("/step or --step: {STEP_KEYS}")),
        ]),
        Line::from("        the rows the next stage will change are highlighted"),
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
