//! The drawing pieces the panes, the screen's bars and the covering views share, reading
//! nothing of `App`: the frames (a pane's, a covering view's), the selection bar, text fitted
//! to columns, the spinner, the area between the status bar and the hint line, the plots
//! (`plot`), the size bar and sparkline (`meter`), sizes and ages as words (`text`); and
//! `DrawCtx`, what a covering view's drawing reads besides its own state. A leaf under
//! `app/` and `screen/`: each pane and each covering view draws itself in its own module
//! under `app/`, the screen composes them in `screen/`, and none reaches into another for
//! these.

pub mod meter;
pub mod plot;
pub mod text;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::event_rows::{self, EventRow};
use super::layout::Areas;
use super::theme::Theme;
use crate::compact::PipelineConfig;

/// What a covering view's drawing reads besides its own state: the screen's facts, taken
/// from `App` once a frame (`App::draw_ctx`), so a view draws without the rest of `App`.
pub struct DrawCtx<'a> {
    pub theme: &'a Theme,
    /// The settings in force (the help's title, the config panel, the legend).
    pub config: &'a PipelineConfig,
    /// The panes' areas on this screen (None when it is too small).
    pub areas: Option<Areas>,
    /// The terminal's size (columns, rows).
    pub size: (u16, u16),
    /// Ticks since the start (a spinner's clock).
    pub tick: u64,
    /// The events pane's rows, where the start-up notices are (`notices`).
    pub events: &'a [EventRow],
}

impl<'a> DrawCtx<'a> {
    /// The start-up notices, in full (the legend lists them), as `App::notices` says them.
    pub fn notices(&self) -> Vec<&'a str> {
        event_rows::notices(self.events)
    }
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// `line` as the selection bar: every span gets the selection's style (reverse video in
/// the terminal's own colours), so no span keeps a colour of its own on the bar.
pub fn selected_line<'a>(mut line: Line<'a>, theme: &Theme) -> Line<'a> {
    let sel = theme.selected();
    line.style = line.style.patch(sel);
    for s in &mut line.spans {
        s.style = s.style.patch(sel);
    }
    line
}

/// A pane's frame: thick border and bold title when focused.
pub fn pane_block<'a>(title: Line<'a>, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(theme.border(focused))
        .title(title)
}

/// A covering view's frame on `r`: what is beneath cleared, the focused border and
/// `title`. Returns the inside.
pub fn covering_frame(f: &mut Frame, r: Rect, title: Line<'_>, theme: &Theme) -> Rect {
    f.render_widget(Clear, r);
    let block = pane_block(title, true, theme);
    let inner = block.inner(r);
    f.render_widget(block, r);
    inner
}

/// At most `width` terminal columns, with `…` when cut. Columns, not chars: a CJK
/// character or an emoji takes two, and counting it as one would push a row's later
/// columns out of line.
pub fn clip(s: &str, width: usize) -> String {
    crate::util::clip_width(s, width)
}

/// `s` padded or clipped to exactly `width` terminal columns.
pub fn fit(s: &str, width: usize) -> String {
    crate::util::fit_width(s, width)
}

/// The spinner's frame at `tick`.
pub fn spinner(tick: u64) -> &'static str {
    SPINNER[(tick % SPINNER.len() as u64) as usize]
}

/// Where a view between the status bar and the hint line goes (compare, the context and the
/// requests views): the full width of `full`, the rows `areas` leaves between the two bars.
pub fn between_bars(areas: Option<Areas>, full: Rect) -> Option<Rect> {
    let a = areas?;
    let top = a.status.bottom();
    Some(Rect {
        x: full.x,
        y: top,
        width: full.width,
        height: a.hints.y.saturating_sub(top),
    })
}

/// A view between the bars (`between_bars`; nothing when the screen is too small): its
/// frame titled `title`, and `body`'s lines for the inside's width and height.
pub fn render_between_bars(
    f: &mut Frame,
    area: Option<Rect>,
    title: Line<'_>,
    theme: &Theme,
    body: impl FnOnce(usize, usize) -> Vec<Line<'static>>,
) {
    let Some(r) = area else {
        return;
    };
    let inner = covering_frame(f, r, title, theme);
    let lines = body(inner.width as usize, inner.height as usize);
    f.render_widget(Paragraph::new(lines), inner);
}
