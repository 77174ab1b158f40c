//! The input box (ratatui-textarea): multi-line request editing. Draws the text area held
//! in `App`; keys reach it only through `App::update`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::pane_block;
use crate::tui::app::{App, Pane};

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus == Pane::Input;
    let mut spans = vec![Span::styled(" 5 Input ", app.theme.title())];
    if app.step_mode {
        spans.push(Span::styled(" STEP MODE ", app.theme.paused()));
        spans.push(Span::raw(" "));
    }
    if !focused {
        spans.push(Span::styled("(i or 5 to type) ", app.theme.dim()));
    }
    let block = pane_block(Line::from(spans), focused, &app.theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    f.render_widget(&app.input, inner);
}
