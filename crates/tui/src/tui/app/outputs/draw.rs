//! The persisted-outputs browser: `.task_outputs/tool-results/*.txt` with size and age, as
//! listed by the last refresh. Enter opens the viewer, `m` jumps to the conversation row
//! whose marker points at the file. Beside its state and keys (`OutputsState`,
//! `app/outputs.rs`); draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::store::TOOL_RESULTS_DIR;
use crate::tui::app::pane_title::title_hint;
use crate::tui::app::{App, LoadKind, Pane};
use crate::tui::draw::text::{human_age, human_bytes};
use crate::tui::draw::{fit, pane_block, selected_line};

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus() == Pane::Outputs;
    let title = Line::from(vec![
        Span::styled(" 3 Outputs ", app.theme().title()),
        Span::raw(format!(
            "· {TOOL_RESULTS_DIR}/ · {} ",
            crate::util::plural(app.outputs().files().len(), "file")
        )),
        title_hint(app, "(Enter view, m jump, R refresh) ", |w| {
            matches!(w, LoadKind::Output { .. })
        }),
    ]);
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = vec![Line::from(Span::styled(
        fit(&format!("{:>10}  {:>5}  file", "size", "age"), width),
        app.theme().title(),
    ))];
    if app.outputs().files().is_empty() {
        lines.push(Line::from(Span::styled(
            "no persisted outputs yet (a tool result over the budget goes here)",
            app.theme().dim(),
        )));
    }
    let rows = (inner.height as usize).saturating_sub(1);
    let state = app.outputs();
    for (i, file) in state
        .files()
        .iter()
        .enumerate()
        .skip(state.list().top)
        .take(rows)
    {
        let name = file
            .relative
            .strip_prefix(TOOL_RESULTS_DIR)
            .map(|n| n.trim_start_matches('/'))
            .unwrap_or(&file.relative);
        let text = format!(
            "{:>10}  {:>5}  {name}",
            human_bytes(file.bytes),
            human_age(file.age_secs)
        );
        let mut line = Line::from(fit(&text, width));
        if i == state.list().selected {
            line = selected_line(line, app.theme());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), inner);
}
