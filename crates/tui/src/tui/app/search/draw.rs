//! The search prompt in the hint line (`f` in the conversation, events or timeline, `/`
//! in an opened recorded session) and the sessions browser's filter prompt (`/`).
//! Beside its state and keys (`Search`, `app/search.rs`); draws `App` state only.

use ratatui::text::{Line, Span};

use crate::tui::app::App;
use crate::tui::draw::clip;

/// The prompt while a query is typed; None otherwise.
pub fn hint_line(app: &App, width: usize) -> Option<Line<'static>> {
    let browser = app.sessions().view();
    let (query, rest) = if app.browsing() && app.sessions().open().is_none() && browser.typing() {
        (
            browser.query(),
            "  filters by project, first request, file name · Enter keep · Esc clear",
        )
    } else {
        let s = app.search().filter(|s| s.typing)?;
        let rest = if app.browsing() && app.sessions().open().is_some() {
            "  Enter search the session · Esc cancel"
        } else {
            "  Enter search the conversation, full session and events · Esc cancel"
        };
        (s.query.as_str(), rest)
    };
    let theme = app.theme();
    let query = clip(
        &format!("{}▏", crate::sanitize::sanitize_line(query)),
        width.saturating_sub(2),
    );
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
