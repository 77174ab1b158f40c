//! The diff overlay as a view (`layers.rs`): its state (`DiffView`: the lines, folded), its
//! keys and its drawing (`draw.rs`). The cursor moves over lines and folded runs, `n` / `N`
//! jump between changes, Enter unfolds a run or opens a row's text (before and after, for a
//! change) in the viewer, which returns to the diff when closed.

mod draw;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Layer, Outcome, View};
use crate::timeline::{DiffOp, Fold, fold_by};
use crate::tui::diff::DiffLine;
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action, section};
use crate::tui::rows::word_wrap;

/// A diff overlay: a stage's before/after or one call's request against the previous
/// one. Unchanged runs are folded; the cursor starts on the first change.
#[derive(Debug, Clone)]
pub struct DiffView {
    /// The header, wrapped when drawn, never cut (it may hold a persisted path).
    pub title: String,
    /// A second header line (e.g. what a snip's cut held).
    pub note: Option<String>,
    pub lines: Vec<DiffLine>,
    /// What is drawn: lines and folded runs of unchanged lines.
    pub items: Vec<Fold>,
    /// The cursor, an index into `items`.
    pub selected: usize,
    /// The first item drawn.
    pub top: usize,
}

impl DiffView {
    /// Lines folded, the cursor on the first change.
    pub fn new(title: String, note: Option<String>, lines: Vec<DiffLine>) -> DiffView {
        let items = fold_by(lines.len(), |i| lines[i].op == DiffOp::Same, DIFF_CONTEXT);
        let selected = items
            .iter()
            .position(|f| matches!(f, Fold::Line(i) if lines[*i].op != DiffOp::Same))
            .unwrap_or(0);
        DiffView {
            title,
            note,
            lines,
            items,
            selected,
            top: 0,
        }
    }

    /// Whether item `k` is a change (the stops of `n` / `N`).
    pub fn is_change(&self, k: usize) -> bool {
        matches!(self.items.get(k), Some(Fold::Line(i)) if self.lines[*i].op != DiffOp::Same)
    }

    /// Screen rows item `k` takes: a change in place shows its old and its new row.
    fn item_height(&self, k: usize) -> usize {
        match self.items.get(k) {
            Some(Fold::Line(i)) if self.lines[*i].op == DiffOp::Changed => 2,
            _ => 1,
        }
    }
}

/// Unchanged rows kept around a change before the rest of a run is folded.
pub const DIFF_CONTEXT: usize = 2;

impl DiffView {
    /// The header lines at `width` columns: the title and the note, wrapped (never cut).
    pub fn header(&self, width: usize) -> Vec<String> {
        let mut out = word_wrap(&self.title, width);
        if let Some(note) = &self.note {
            out.extend(word_wrap(note, width));
        }
        // The counts and keys line.
        out.push(String::new());
        out
    }

    fn move_to(&mut self, k: usize) {
        self.selected = k.min(self.items.len().saturating_sub(1));
    }

    /// Keeps the cursor's item inside `viewport` rows.
    pub fn ensure_visible(&mut self, viewport: usize) {
        let viewport = viewport.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        }
        while self.top < self.selected
            && (self.top..=self.selected)
                .map(|k| self.item_height(k))
                .sum::<usize>()
                > viewport
        {
            self.top += 1;
        }
    }

    /// The next (or previous) change from the cursor, wrapping around.
    fn next_change(&self, forward: bool) -> Option<usize> {
        let n = self.items.len();
        (1..=n)
            .map(|d| {
                if forward {
                    (self.selected + d) % n
                } else {
                    (self.selected + n - d % n) % n
                }
            })
            .find(|&k| self.is_change(k))
    }

    /// Replaces folded run `k` by its lines.
    fn unfold(&mut self, k: usize) {
        if let Some(Fold::Folded { start, count }) = self.items.get(k).copied() {
            self.items
                .splice(k..=k, (start..start + count).map(Fold::Line));
        }
    }
}

/// The viewer's text for one diff line: the row before and the row after.
fn line_text(l: &DiffLine) -> (String, String) {
    let side = |name: &str, c: &Option<crate::tui::diff::DiffCell>| match c {
        Some(c) => {
            let at = c
                .index
                .map(|i| format!("#{i}"))
                .unwrap_or_else(|| "(appended after the previous call)".into());
            format!(
                "── {name} {at} · {} · {} chars ──\n{}",
                c.info.role(),
                crate::util::group_digits(c.info.chars),
                c.info.full_text()
            )
        }
        None => format!("── {name}: (no row) ──"),
    };
    let title = match (&l.old, &l.new) {
        (Some(o), Some(n)) if l.op == crate::timeline::DiffOp::Changed => format!(
            "row {} before / after{}",
            o.index.or(n.index).unwrap_or_default(),
            if l.cause.is_empty() {
                String::new()
            } else {
                format!(" ({})", l.cause)
            }
        ),
        (_, Some(n)) => format!("row {} · {}", n.index.unwrap_or_default(), l.cause),
        (Some(o), None) => match o.index {
            Some(i) => format!("row {i} (removed) · {}", l.cause),
            None => format!(
                "a row appended after the previous call (removed) · {}",
                l.cause
            ),
        },
        (None, None) => String::new(),
    };
    let text = match l.op {
        crate::timeline::DiffOp::Changed => {
            format!("{}\n\n{}", side("before", &l.old), side("after", &l.new))
        }
        crate::timeline::DiffOp::Removed => side("before", &l.old),
        _ => side("after", &l.new),
    };
    (title, text)
}

impl App {
    /// Opens `d`, scrolled so its first change shows with the rows above it.
    pub(super) fn show_diff(&mut self, mut d: DiffView) {
        let viewport = self.diff_viewport(&d).max(1);
        d.top = 0;
        d.ensure_visible(viewport);
        if d.top > 0 {
            // Not at the start: keep a little context (a fold, unchanged rows) above.
            d.top = d.selected.saturating_sub(DIFF_CONTEXT + 1);
            d.ensure_visible(viewport);
        }
        self.push_layer(Layer::Diff(d));
    }

    /// Lines of the diff overlay's body (the overlay minus its header).
    pub(super) fn diff_viewport(&self, d: &DiffView) -> usize {
        let inner = self.overlay_inner();
        let header = d.header(inner.width as usize).len();
        (inner.height as usize).saturating_sub(header)
    }
}

impl View for DiffView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        if key.code == KeyCode::Char('?') {
            return Outcome::Pass;
        }
        let Some(action) = keys::action(&key) else {
            return Outcome::Consumed;
        };
        let d = self;
        let viewport = app.diff_viewport(d).max(1);
        let page = viewport.saturating_sub(1).max(1);
        match action {
            Action::Back | Action::Quit => return Outcome::Close(Vec::new()),
            Action::Up => d.move_to(d.selected.saturating_sub(1)),
            Action::Down => d.move_to(d.selected + 1),
            Action::PageUp => d.move_to(d.selected.saturating_sub(page)),
            Action::PageDown => d.move_to(d.selected + page),
            Action::Top => d.move_to(0),
            Action::Bottom => d.move_to(usize::MAX),
            Action::SearchNext | Action::SearchPrev => {
                match d.next_change(action == Action::SearchNext) {
                    Some(k) => d.move_to(k),
                    None => {
                        app.notify("no change in this diff");
                        return Outcome::Consumed;
                    }
                }
            }
            Action::Enter => match d.items.get(d.selected).copied() {
                Some(Fold::Folded { .. }) => d.unfold(d.selected),
                Some(Fold::Line(i)) => {
                    // The viewer opens on top; Esc comes back to the diff.
                    let (title, text) = line_text(&d.lines[i]);
                    app.open_viewer(title, &text);
                    return Outcome::Consumed;
                }
                None => {}
            },
            _ => {}
        }
        d.ensure_visible(viewport);
        Outcome::Consumed
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(section::DIFF)
    }
}
