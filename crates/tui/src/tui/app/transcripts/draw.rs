//! The transcripts browser: `.transcripts/*.jsonl` with time, message count (`…` until a
//! background job has counted it) and size; an open transcript as a message list; and a
//! replay of it through the pipeline with the current thresholds (stage rows, gauge and
//! sparkline). While a transcript loads or replays, the title says so with the spinner.
//! Beside its state and keys (`TranscriptsState`, `app/transcripts.rs`); draws `App` state
//! only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::compact::StageReport;
use crate::message::Role;
use crate::store::TRANSCRIPTS_DIR;
use crate::tui::app::conversation::draw::msglist::{MsgList, RowRef};
use crate::tui::app::pane_title::title_hint;
use crate::tui::app::{App, LoadKind, Pane, TranscriptView, layout_transcript};
use crate::tui::draw::meter::{bar_line, render_sparkline};
use crate::tui::draw::text::{human_age, human_bytes};
use crate::tui::draw::{fit, pane_block, selected_line};
use crate::tui::replay::Replay;
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// Transcript loads and replays are this pane's jobs.
fn ours(what: &LoadKind) -> bool {
    !matches!(what, LoadKind::Output { .. })
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    if app.sessions().active() {
        crate::tui::app::sessions::draw::render(app, f, area);
        return;
    }
    match app.transcripts().open() {
        Some(t) => render_open(app, f, area, t),
        None => render_list(app, f, area),
    }
}

fn render_list(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus() == Pane::Transcripts;
    let title = Line::from(vec![
        Span::styled(" 4 Transcripts ", app.theme().title()),
        Span::raw(format!(
            "· {TRANSCRIPTS_DIR}/ · {} ",
            crate::util::plural(app.transcripts().files().len(), "file")
        )),
        title_hint(app, "(Enter open, r replay) ", ours),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = vec![Line::from(Span::styled(
        fit(
            &format!("{:>5}  {:>8}  {:>10}  file", "age", "messages", "size"),
            width,
        ),
        app.theme().title(),
    ))];
    if app.transcripts().files().is_empty() {
        lines.push(Line::from(Span::styled(
            "no transcripts yet (written before every summary)",
            app.theme().dim(),
        )));
    }
    let rows = (inner.height as usize).saturating_sub(1);
    for (i, file) in app
        .transcripts()
        .files()
        .iter()
        .enumerate()
        .skip(app.transcripts().list().top)
        .take(rows)
    {
        let name = file
            .relative
            .strip_prefix(TRANSCRIPTS_DIR)
            .map(|n| n.trim_start_matches('/'))
            .unwrap_or(&file.relative);
        let text = format!(
            "{:>5}  {:>8}  {:>10}  {name}",
            human_age(file.age_secs),
            file.messages
                .map(group_digits)
                .unwrap_or_else(|| "…".into()),
            human_bytes(file.bytes)
        );
        let mut line = Line::from(fit(&text, width));
        if i == app.transcripts().list().selected {
            line = selected_line(line, app.theme());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn render_open(app: &App, f: &mut Frame, area: Rect, t: &TranscriptView) {
    let focused = app.focus() == Pane::Transcripts;
    let (list_area, replay_area) = layout_transcript(area, t.replay().is_some());
    let bad = if t.bad_lines() > 0 {
        format!(" · {} unreadable lines", t.bad_lines())
    } else {
        String::new()
    };
    let title = Line::from(vec![
        Span::styled(" 4 Transcript ", app.theme().title()),
        Span::raw(format!(
            "{} · {} messages{bad} ",
            t.relative(),
            t.rows().len()
        )),
        title_hint(app, "(r replay, Esc back) ", ours),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(list_area);
    f.render_widget(block, list_area);
    let row = |i: usize| -> Option<RowRef<'_>> {
        t.rows().get(i).map(|info| RowRef {
            info,
            mark: None,
            dimmed: false,
            note: None,
        })
    };
    MsgList {
        len: t.rows().len(),
        row: &row,
        list: t.list(),
        focused,
        theme: app.theme(),
        trailer: Vec::new(),
        upcoming: None,
    }
    .render(f, inner);
    if let (Some(r), Some(a)) = (&t.replay(), replay_area) {
        // The stage rows follow the list: they start at the selected message's turn.
        let end = (t.list().selected + 1).min(t.rows().len());
        let turn = t.rows()[..end]
            .iter()
            .filter(|m| m.role_kind() == Role::Assistant)
            .count()
            .max(1);
        render_replay(f, a, r, turn, app.theme());
    }
}

fn render_replay(f: &mut Frame, area: Rect, r: &Replay, from_turn: usize, theme: &Theme) {
    let title = Line::from(vec![
        Span::styled(" Replay ", theme.title()),
        Span::raw(format!(
            "· limit {} · dry run · from turn {from_turn} ",
            group_digits(r.context_limit)
        )),
    ]);
    let block = pane_block(title, false, theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let width = inner.width as usize;
    let peak = r.request_sizes.iter().copied().max().unwrap_or(0) as usize;
    let mut head = vec![
        bar_line(r.final_chars, r.context_limit, width, theme),
        Line::from(fit(
            &format!(
                "{} turns · {} stage rows · final {} chars / {} messages · peak request {}",
                r.turns,
                r.stages.len(),
                group_digits(r.final_chars),
                r.final_messages,
                group_digits(peak)
            ),
            width,
        )),
    ];
    if let Some(e) = &r.error {
        head.push(Line::from(Span::styled(
            fit(&format!("stopped: {e}"), width),
            theme.error(),
        )));
    }
    let (head_area, rest) = crate::tui::layout::split_top(inner, head.len() as u16);
    f.render_widget(Paragraph::new(head), head_area);
    let spark_h = if rest.height >= 6 {
        2
    } else {
        rest.height.min(1)
    };
    let (spark_area, rows_area) = crate::tui::layout::split_top(rest, spark_h);
    render_sparkline(f, spark_area, &r.request_sizes, r.context_limit, theme);
    let mut lines = Vec::new();
    // The call the transcript ends before comes first: it is what the teacher asks about.
    let next: &[StageReport] = r.next_call.as_deref().unwrap_or_default();
    let cap = (rows_area.height as usize).saturating_sub(next.len());
    for report in next.iter().take(rows_area.height as usize) {
        lines.push(Line::from(vec![
            Span::styled("next call ", theme.warn()),
            Span::styled(fit(report.stage.name(), 18), theme.stage(report.stage)),
            Span::raw(fit(
                &format!(" {} · {}", report.reason, report.delta().sizes(),),
                width.saturating_sub(28),
            )),
        ]));
    }
    let shown: Vec<&(usize, StageReport)> =
        r.stages.iter().filter(|(t, _)| *t >= from_turn).collect();
    for (turn, report) in shown.iter().take(cap) {
        lines.push(stage_line(
            &format!("turn {turn:>3} "),
            report,
            width,
            theme,
        ));
    }
    if shown.len() > cap && cap > 0 && lines.len() > next.len() {
        lines.pop();
        lines.push(Line::from(Span::styled(
            format!(
                "… {} more stage rows (move in the list to scroll)",
                shown.len() - cap + 1
            ),
            theme.dim(),
        )));
    }
    if shown.is_empty() && next.is_empty() && cap > 0 {
        let text = if r.next_call.is_some() {
            "no stage would change this session with these thresholds, nor the call after it"
        } else {
            "no stage would change this session with these thresholds"
        };
        lines.push(Line::from(Span::styled(text, theme.dim())));
    }
    f.render_widget(Paragraph::new(lines), rows_area);
}

/// One replayed stage: `turn  4 micro_compact      2,883 -> 2,225 chars 1 result ->
/// placeholder` (the sizes as every stage line gives them, `StageDelta::sizes`).
fn stage_line<'a>(label: &str, report: &StageReport, width: usize, theme: &Theme) -> Line<'a> {
    let delta = report.delta();
    Line::from(vec![
        Span::styled(label.to_string(), theme.dim()),
        Span::styled(fit(report.stage.name(), 18), theme.stage(report.stage)),
        Span::raw(fit(
            &format!(" {} {}", delta.sizes(), delta.what),
            width.saturating_sub(27),
        )),
    ])
}
