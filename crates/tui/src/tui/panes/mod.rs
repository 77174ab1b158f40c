//! Drawing the panes: `render(&App, &mut Frame)` and one module per pane; then each
//! covering view draws itself (`View::draw`, in its own module under `app/`), bottom first.
//!
//! Everything here is a pure function of `App`: no I/O, no clock reads, no channel sends,
//! no mutation. Lists draw only their visible rows, so a 100,000-message history costs what
//! forty rows cost. Text helpers shared by panes live here; those the covering views share
//! too are `tui::draw`'s.
//!
//! The panes are not views like the layers, on purpose for now: they share the screen at
//! once and focus moves between them, so their keys are `App`'s (`navigation.rs`,
//! `pane_actions.rs`: a key in one pane opens a layer, moves the events selection to the
//! same step, or searches the conversation and the events together), and their drawing reads
//! several of `App`'s parts at once (the conversation pane draws the timeline's selected call
//! or the mirror, with the pause's rows; the status bar and the hint line read nearly every
//! part). A pane is its part of `App` (its state, `app/<pane>.rs`) and its file here.

pub mod conversation;
pub mod events;
pub mod gauge;
pub mod input;
pub mod msglist;
pub mod outputs;
pub mod search;
pub mod session_replay;
pub mod session_view;
pub mod sessions;
pub mod status;
pub mod timeline;
pub mod transcripts;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::app::{App, LoadKind, Pane, TICKS_PER_SECOND};
use super::layout::{self, MIN_HEIGHT, MIN_WIDTH};
use super::theme::Theme;

/// The drawing pieces the panes share with the covering views (`tui::draw`), by the names
/// the panes use.
pub use super::draw::{clip, fit, pane_block, plot, selected_line};

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
        Pane::Outputs => outputs::render(app, f, a.main),
        Pane::Transcripts => transcripts::render(app, f, a.main),
        _ => conversation::render(app, f, a.main),
    }
    if app.timeline_view().is_some() {
        timeline::render(app, f, layout::timeline_area(&a));
    } else if !app.browsing() {
        gauge::render(app, f, a.gauge);
        events::render(app, f, a.events);
    }
    input::render(app, f, a.input);
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

/// `mm:ss.d` from ticks.
pub fn fmt_ticks(ticks: u64) -> String {
    let tenths = ticks * 10 / TICKS_PER_SECOND;
    let secs = tenths / 10;
    format!("{:02}:{:02}.{}", secs / 60, secs % 60, tenths % 10)
}

/// Seconds, tenths: `3.2s`.
pub fn fmt_elapsed(ticks: u64) -> String {
    let tenths = ticks * 10 / TICKS_PER_SECOND;
    format!("{}.{}s", tenths / 10, tenths % 10)
}

pub fn human_bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.1} KB", f / K)
    } else {
        format!("{:.1} MB", f / K / K)
    }
}

pub fn human_age(secs: Option<u64>) -> String {
    match secs {
        None => "?".into(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3_600 => format!("{}m", s / 60),
        Some(s) if s < 86_400 => format!("{}h", s / 3_600),
        Some(s) => format!("{}d", s / 86_400),
    }
}

/// `1 file`, `2 files` (the one in `util`, for the panes that say `super::plural`).
pub use crate::util::plural;

/// A pane title's key hint, replaced by the loading line (spinner, file, size, elapsed)
/// while the screen waits for one of this pane's jobs (`ours`).
pub fn title_hint<'a>(app: &App, keys: &'a str, ours: fn(&LoadKind) -> bool) -> Span<'a> {
    match (app.loading(), status::loading_text(app)) {
        (Some(l), Some(text)) if ours(&l.what) => {
            Span::styled(format!("{text} "), app.theme().warn())
        }
        _ => Span::styled(keys, app.theme().dim()),
    }
}

/// What the strategy counts sizes in, for pane titles: `chars` (s08, guarded), `tokens`
/// (s06), `JSON chars` (s08-latest): the unit of the gauge, the limit and the stage events
/// (docs/strategies.md). Short, so a title keeps its key hints.
pub fn unit_tag(app: &App) -> &'static str {
    app.config().strategy.unit().label()
}

/// A label and the rest of the line in a second style, for single-line key hints.
pub fn key_hint<'a>(theme: &Theme, key: &'a str, what: &'a str) -> Vec<Span<'a>> {
    vec![
        Span::styled(key, theme.key()),
        Span::raw(" "),
        Span::raw(what),
        Span::raw("  "),
    ]
}
