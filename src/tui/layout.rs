//! Where each pane goes for a terminal size. A pure function shared by `render` and by
//! `App::update` (mouse hit-testing, page sizes), so the two can never disagree about
//! what is on screen. It draws nothing.

use ratatui::layout::{Constraint, Layout, Rect};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;
/// From this width on, gauge and events get a column beside the main pane.
const WIDE_FROM: u16 = 110;
const INPUT_MAX_LINES: u16 = 6;

/// The screen's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub status: Rect,
    /// Conversation, outputs or transcripts (whichever was focused last).
    pub main: Rect,
    pub gauge: Rect,
    pub events: Rect,
    pub input: Rect,
    pub hints: Rect,
}

/// None when the terminal is below 80x24.
pub fn areas(area: Rect, input_lines: usize) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    let input_h = (input_lines as u16).clamp(1, INPUT_MAX_LINES) + 2;
    let [status, middle, input, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(input_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let (main, gauge, events) = if area.width >= WIDE_FROM {
        let [main, side] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .areas(middle);
        let gauge_h = if side.height >= 30 { 9 } else { 7 };
        let [gauge, events] =
            Layout::vertical([Constraint::Length(gauge_h), Constraint::Min(3)]).areas(side);
        (main, gauge, events)
    } else {
        let bottom_h = (middle.height / 3).clamp(7, 12);
        let [main, bottom] =
            Layout::vertical([Constraint::Min(5), Constraint::Length(bottom_h)]).areas(middle);
        let [gauge, events] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(bottom);
        (main, gauge, events)
    };
    Some(Areas {
        status,
        main,
        gauge,
        events,
        input,
        hints,
    })
}

/// The whole screen of `size` (width, height).
pub fn full(size: (u16, u16)) -> Rect {
    Rect::new(0, 0, size.0, size.1)
}

/// The inside of a bordered box.
pub fn inner(r: Rect) -> Rect {
    Rect {
        x: r.x.saturating_add(1),
        y: r.y.saturating_add(1),
        width: r.width.saturating_sub(2),
        height: r.height.saturating_sub(2),
    }
}

/// `area` cut into its top `h` rows (at most all of it) and the rows below.
pub fn split_top(area: Rect, h: u16) -> (Rect, Rect) {
    let h = h.min(area.height);
    let top = Rect { height: h, ..area };
    let rest = Rect {
        y: area.y + h,
        height: area.height - h,
        ..area
    };
    (top, rest)
}

/// A centered overlay taking `pct_w` x `pct_h` percent of `area`.
pub fn centered(area: Rect, pct_w: u16, pct_h: u16) -> Rect {
    let w = area.width * pct_w / 100;
    let h = area.height * pct_h / 100;
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn contains(r: Rect, x: u16, y: u16) -> bool {
    x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height
}
