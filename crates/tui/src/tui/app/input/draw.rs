//! The input box (ratatui-textarea): multi-line request editing. Draws the text area held
//! in `App`; keys reach it only through `App::update`. While step mode is paused (and the
//! user is not typing) the box shows the pause card instead: what happens next, why, and
//! the step keys. Beside its state and keys (`InputState`, `app/input.rs`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::{App, Pane};
use crate::tui::draw::{fit, pane_block};

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    if let Some((title, lines)) = app.pause_card() {
        render_card(app, f, area, &title, &lines);
        return;
    }
    let focused = app.focus() == Pane::Input;
    let mut spans = vec![Span::styled(" 5 Input ", app.theme().title())];
    if app.step_state().mode() {
        spans.push(Span::styled(" STEP MODE ", app.theme().paused()));
        spans.push(Span::raw(" "));
    }
    if !focused {
        spans.push(Span::styled("(i or 5 to type) ", app.theme().dim()));
    }
    let block = pane_block(Line::from(spans), focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    f.render_widget(app.input().area(), inner);
}

/// The pause card: the next step's title in the border, its lines, the keys last.
fn render_card(app: &App, f: &mut Frame, area: Rect, title: &str, lines: &[String]) {
    let theme = app.theme();
    let head = Line::from(vec![
        Span::styled(" PAUSED ", theme.paused()),
        Span::styled(format!(" {title} "), theme.title()),
    ]);
    let block = pane_block(head, true, theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    // One column of margin, as the input box's text has.
    let width = (inner.width as usize).saturating_sub(1);
    let last = lines.len().saturating_sub(1);
    let text: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let style = if i == last {
                theme.key()
            } else {
                ratatui::style::Style::new()
            };
            Line::from(vec![Span::raw(" "), Span::styled(fit(l, width), style)])
        })
        .collect();
    f.render_widget(Paragraph::new(text), inner);
}
