//! Drawing the screen: `render(&App, &mut Frame)` places the panes, the status bar, the
//! gauge, the input box and the hint line, then each covering view draws itself
//! (`View::draw`), bottom first; and the "terminal too small" line.
//!
//! Each pane draws itself in its own module beside its state, under `app/` (`app/<pane>.rs`
//! with `app/<pane>/draw.rs`), as each covering view does (docs/architecture.md, "What may
//! import what"): this module only decides where each goes. What stays here is the
//! screen's, not one pane's: the status bar and the hint line (`status`) read nearly every
//! part of `App`, and the gauge (`gauge`) reads the conversation's totals, the timeline's
//! calls and the settings at once.
//!
//! Everything here is a pure function of `App`: no I/O, no clock reads, no channel sends,
//! no mutation.

pub mod gauge;
pub mod status;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::app::{App, Pane, conversation, events, input, outputs, timeline, transcripts};
use super::layout::{self, MIN_HEIGHT, MIN_WIDTH};

/// Draws the whole screen.
pub fn render(app: &App, f: &mut Frame) {
    let area = f.area();
    let Some(a) = layout::areas_of(
        area,
        app.input_rows(),
        app.timeline_view().is_some(),
        app.browsing(),
    ) else {
        too_small(app, f, area);
        return;
    };
    status::render(app, f, a.status);
    match app.main() {
        Pane::Outputs => outputs::draw::render(app, f, a.main),
        Pane::Transcripts => transcripts::draw::render(app, f, a.main),
        _ => conversation::draw::render(app, f, a.main),
    }
    if app.timeline_view().is_some() {
        timeline::draw::render(app, f, layout::timeline_area(&a));
    } else if !app.browsing() {
        gauge::render(app, f, a.gauge);
        events::draw::render(app, f, a.events);
    }
    input::draw::render(app, f, a.input);
    status::render_hints(app, f, a.hints);
    // The covering views, each drawn by its own module, bottom first: the one with the keys
    // is drawn last (the hint line is not theirs).
    let ctx = app.draw_ctx();
    for layer in app.layers() {
        layer.draw(f, area, &ctx);
    }
}

fn too_small(app: &App, f: &mut Frame, area: Rect) {
    let text = format!(
        "terminal too small (need {MIN_WIDTH}x{MIN_HEIGHT}, have {}x{})",
        area.width, area.height
    );
    let y = area.height / 2;
    let p = Paragraph::new(Line::from(Span::styled(text, app.theme().warn())))
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: true });
    f.render_widget(
        p,
        Rect {
            y: area.y + y.saturating_sub(1),
            height: area.height - y.saturating_sub(1),
            ..area
        },
    );
}
