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
    areas_for(area, input_lines, false)
}

/// `areas`, with the bottom strip of a narrow screen taller while the timeline is open
/// (it takes the gauge's and the events' place and needs room for its plot and list).
pub fn areas_for(area: Rect, input_lines: usize, timeline: bool) -> Option<Areas> {
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
        // The events pane reads its selected row whole (wrapped), so the conversation keeps
        // the width its titles and row marks need ("· JSON chars", "cut at max_tokens").
        let [main, side] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
                .areas(middle);
        let gauge_h = if side.height >= 30 { 9 } else { 7 };
        let [gauge, events] =
            Layout::vertical([Constraint::Length(gauge_h), Constraint::Min(3)]).areas(side);
        (main, gauge, events)
    } else {
        let bottom_h = if timeline {
            (middle.height / 2).clamp(9, 16)
        } else {
            (middle.height / 3).clamp(7, 12)
        };
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

/// `areas_for`, or, while the sessions browser or an opened session has focus
/// (`browsing`), the main pane across the whole middle: the gauge and the events belong
/// to the live run, not to the session being read, so they get no room (empty rects at
/// the middle's bottom edge, which nothing draws into and no click lands on).
pub fn areas_of(area: Rect, input_lines: usize, timeline: bool, browsing: bool) -> Option<Areas> {
    let mut a = areas_for(area, input_lines, timeline)?;
    if browsing && !timeline {
        let middle = a.main.union(a.gauge).union(a.events);
        let edge = Rect {
            y: middle.y + middle.height,
            height: 0,
            ..middle
        };
        a.main = middle;
        a.gauge = Rect { width: 0, ..edge };
        a.events = Rect { width: 0, ..edge };
    }
    Some(a)
}

/// From this terminal width on, an opened session's replay stands beside the recording;
/// below it, under it.
pub const SESSION_SIDE_BY_SIDE_FROM: u16 = 120;

/// The timeline pane: where the gauge and the events are.
pub fn timeline_area(a: &Areas) -> Rect {
    a.gauge.union(a.events)
}

/// The timeline pane's inside cut into the plot and the call list: side by side in a low
/// strip, the plot above the list in a column.
pub fn timeline_parts(area: Rect) -> (Rect, Rect) {
    let inner = inner(area);
    if inner.height < 14 && inner.width >= 60 {
        let [plot, list] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(inner);
        (plot, list)
    } else {
        split_top(inner, (inner.height / 3).clamp(4, 12))
    }
}

/// Call rows the timeline's list shows (its header line excluded).
pub fn timeline_list_rows(a: Areas) -> usize {
    let (_, list) = timeline_parts(timeline_area(&a));
    (list.height as usize).saturating_sub(1)
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

/// Lines an opened session's usage panel takes in a pane `inner` lines high.
pub fn usage_height(inner: usize) -> usize {
    match inner {
        h if h >= 30 => 10,
        h if h >= 16 => 7,
        h if h >= 8 => 4,
        _ => 1,
    }
}

/// Rows the list shows in a pane `inner` lines high (scrolling keeps to it).
pub fn session_list_rows(inner: usize, _replay: bool) -> usize {
    inner.saturating_sub(usage_height(inner)).max(1)
}
