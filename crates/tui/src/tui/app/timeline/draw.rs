//! The timeline pane (6 or `t`), in the place of the gauge and the events: the plot of
//! every call's size before the pipeline and sent, with the limit and the selected call;
//! and the list of calls (sizes, the letters of the stages that changed something before
//! it, the API's input tokens, a refused call marked). Beside its state and keys
//! (`TimelineView`, `app/timeline.rs`); draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::timeline::CallOutcome;
use crate::tui::app::pane_title::unit_tag;
use crate::tui::app::{App, Pane};
use crate::tui::draw::plot::{self, compact_number};
use crate::tui::draw::{fit, pane_block};
use crate::tui::layout;
use crate::util::group_digits;

/// "continue from call N?" over the timeline pane while it waits for `y` (any other key
/// cancels): the question is on screen, not only in the hint line. Two rows at most, at
/// the pane's top or, when the selected call's row is up there, its bottom, so the call it
/// names stays in sight (issue 38: at 80x24 a box hid most of the list).
fn render_continue_prompt(app: &App, f: &mut Frame, area: Rect) {
    let Some(question) = app.continue_prompt() else {
        return;
    };
    let inner = layout::inner(area);
    let width = inner.width as usize;
    let mut text = crate::tui::pause::wrap_words(&question, width);
    if text.len() > 2 {
        let short = app.continue_prompt_short().unwrap_or_default();
        text = crate::tui::pause::wrap_words(&short, width);
    }
    text.truncate(2);
    let height = (text.len() as u16).min(inner.height);
    // The selected call's row on screen (the list's header is its first row).
    let (_, list) = layout::timeline_parts(area);
    let selected_y = app
        .timeline_view()
        .map(|v| list.y + 1 + v.selected().saturating_sub(v.top()) as u16);
    let at_top = selected_y.is_none_or(|y| y >= inner.y + height);
    let r = Rect {
        x: inner.x,
        y: if at_top {
            inner.y
        } else {
            inner.y + inner.height - height
        },
        width: inner.width,
        height,
    };
    f.render_widget(ratatui::widgets::Clear, r);
    let lines: Vec<Line> = text
        .into_iter()
        .map(|l| Line::from(Span::styled(fit(&l, width), app.theme().key())))
        .collect();
    f.render_widget(
        Paragraph::new(lines).style(
            ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        r,
    );
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    render_inner(app, f, area);
    render_continue_prompt(app, f, area);
}

fn render_inner(app: &App, f: &mut Frame, area: Rect) {
    let Some(v) = app.timeline_view() else {
        return;
    };
    let theme = app.theme();
    let calls = &app.timeline().calls;
    let focused = app.focus() == Pane::Timeline;
    let which = if calls.is_empty() {
        "no call yet".to_string()
    } else {
        format!("call {} of {}", v.selected() + 1, calls.len())
    };
    let title = Line::from(vec![
        Span::styled(" 6 Timeline ", theme.title()),
        // The strategy's unit; the plot and the list are in `str()` chars whatever it
        // counts, with the limit converted (the plot's legend gives it in chars).
        Span::raw(format!("· {which} · {} ", unit_tag(app))),
        Span::styled(branch_tag(app), theme.key()),
        Span::styled("(Enter diff, o request, Esc live) ", theme.dim()),
    ]);
    f.render_widget(pane_block(title, focused, theme), area);
    let (plot_area, list_area) = layout::timeline_parts(area);
    plot::render(
        f,
        plot_area,
        &plot::calls_of(app.timeline()),
        // In chars, like the calls (s06's limit is in tokens); the selected call's own
        // limit: after a continue, calls before the branch point ran under another one, and
        // a `/config` after the last call does not relabel the calls that ran.
        app.timeline()
            .limit_of(v.selected() + 1)
            .map_or(app.timeline().limit_chars(), |l| l.limit_chars()),
        (!calls.is_empty()).then_some(v.selected()),
        theme,
    );
    let width = list_area.width as usize;
    let wide = width >= 44;
    let mut lines = Vec::with_capacity(list_area.height as usize);
    let header = if wide {
        format!(
            "{:>4} {:>8}   {:>7} {:<5} {:>7}",
            "call", "before", "sent", "stage", "API in"
        )
    } else {
        format!("{:>4} {:>6}  {:>6} {:<5}", "call", "before", "sent", "stg")
    };
    lines.push(Line::from(Span::styled(fit(&header, width), theme.dim())));
    for (k, c) in calls
        .iter()
        .enumerate()
        .skip(v.top())
        .take((list_area.height as usize).saturating_sub(1))
    {
        let letters = c.letters(&app.timeline().steps);
        let refused = if c.outcome == CallOutcome::PromptTooLong {
            " ✗ refused"
        } else {
            ""
        };
        let text = if wide {
            let tokens = c
                .input_tokens
                .map(|t| group_digits(t as usize))
                .unwrap_or_else(|| "–".into());
            format!(
                "{:>4} {:>8} → {:>7} {:<5} {:>7}{refused}",
                c.number,
                group_digits(c.size_before),
                group_digits(c.size_after),
                letters,
                tokens
            )
        } else {
            format!(
                "{:>4} {:>6} → {:>6} {:<5}{}",
                c.number,
                compact_number(c.size_before),
                compact_number(c.size_after),
                letters,
                if refused.is_empty() { "" } else { " ✗" }
            )
        };
        let style = if c.outcome == CallOutcome::PromptTooLong {
            theme.error()
        } else {
            ratatui::style::Style::new()
        };
        let mut line = Line::from(Span::styled(fit(&text, width), style));
        if k == v.selected() {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), list_area);
}

/// Which branch is shown, once a continue made two: `earlier branch` or `continued from 10`.
fn branch_tag(app: &App) -> String {
    match app.continued_from() {
        Some(_) if app.showing_other_branch() => "earlier branch (B: live) ".to_string(),
        Some(n) => format!("continued from {n} (B: earlier) "),
        None => String::new(),
    }
}
