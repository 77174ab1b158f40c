//! The search prompt in the hint line (`f` in the conversation, events or timeline).
//! Draws `App` state only.

use ratatui::text::{Line, Span};

use super::clip;
use crate::tui::app::App;

/// The prompt while a query is typed; None otherwise.
pub fn hint_line(app: &App, width: usize) -> Option<Line<'static>> {
    let s = app.search().filter(|s| s.typing)?;
    let theme = app.theme();
    let rest = "  Enter search the conversation, full session and events · Esc cancel";
    let query = clip(&format!("{}▏", s.query), width.saturating_sub(2));
    Some(Line::from(vec![
        Span::styled("/", theme.key()),
        Span::raw(query.clone()),
        Span::styled(
            clip(
                rest,
                width.saturating_sub(1 + crate::util::display_width(&query)),
            ),
            theme.dim(),
        ),
    ]))
}
