//! The text viewer as a view (`layers.rs`): its state, its keys (`Viewer::key`; its `View`
//! gives it the width and the page) and its drawing (`draw.rs`). Scrolling
//! by screen rows (long lines wrap), `w` to turn wrapping off and `h` / `l` to scroll
//! sideways, and search: `/` asks for a query, every occurrence is found
//! (case-insensitive), and the current one is brought into view, down to its wrapped row
//! or across to its column.

mod draw;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Outcome, View};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};
use crate::tui::rows::wrap_words_at;
use crate::util::display_width;

/// Columns `h` / `l` move.
const SIDE_STEP: usize = 8;

/// `c` folded for a case-insensitive match, one char for one char.
fn fold_char(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Every occurrence of `query` in `lines`, in chars, case-insensitive.
pub fn find_all(lines: &[String], query: &str) -> Vec<TextMatch> {
    let q: Vec<char> = query.chars().map(fold_char).collect();
    if q.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (line, text) in lines.iter().enumerate() {
        let folded: Vec<char> = text.chars().map(fold_char).collect();
        let mut at = 0;
        while at + q.len() <= folded.len() {
            if folded[at..at + q.len()] == q[..] {
                out.push(TextMatch {
                    line,
                    start: at,
                    len: q.len(),
                });
                at += q.len();
            } else {
                at += 1;
            }
        }
    }
    out
}

/// The scrollable text viewer's state, owned here (an overlay). Long lines wrap (`w` turns
/// wrapping off, then `h` / `l` scroll sideways); a search match is scrolled into view and
/// highlighted. `Viewer::key` is its update, `draw.rs` its drawing.
#[derive(Debug, Clone, Default)]
pub struct Viewer {
    title: String,
    lines: Vec<String>,
    /// The first line drawn, and (wrapping) its first wrapped row drawn.
    top: usize,
    top_row: usize,
    /// Lines are cut at the edge instead of wrapped; `left` is the first column shown.
    no_wrap: bool,
    left: usize,
    query: String,
    /// The search prompt is open.
    typing: bool,
    /// Every occurrence of the query.
    matches: Vec<TextMatch>,
    current: usize,
    /// The help section `?` opens at: the viewer's own unless the view shown in it has
    /// one (the forgot view).
    help: Option<&'static str>,
    /// The session file and compaction (1-based) the forgot view shown is of: `B` forks
    /// before it.
    fork_source: Option<(std::path::PathBuf, usize)>,
}

/// One occurrence of the search query: its line and its place in chars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextMatch {
    pub line: usize,
    pub start: usize,
    pub len: usize,
}

/// What a key did to the viewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewerKey {
    /// Handled (or ignored) inside the viewer.
    Stay,
    /// Esc or `q`: the viewer closes.
    Close,
}

impl Viewer {
    /// The viewer on `lines`, at the top, wrapping.
    pub fn new(title: String, lines: Vec<String>) -> Viewer {
        Viewer {
            title,
            lines,
            ..Viewer::default()
        }
    }

    pub fn title(&self) -> &str {
        &self.title
    }

    /// The heading of the help section `?` opens at.
    pub fn help_section(&self) -> &'static str {
        self.help.unwrap_or(crate::tui::keys::section::VIEWER)
    }

    /// Names the help section of the view the viewer shows.
    pub(super) fn set_help_section(&mut self, heading: &'static str) {
        self.help = Some(heading);
    }

    /// What `B` forks: the session file and the compaction (1-based) the forgot view is of.
    pub fn fork_source(&self) -> Option<&(std::path::PathBuf, usize)> {
        self.fork_source.as_ref()
    }

    pub(super) fn set_fork_source(&mut self, path: std::path::PathBuf, compaction: usize) {
        self.fork_source = Some((path, compaction));
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The first line drawn.
    pub fn top(&self) -> usize {
        self.top
    }

    /// The first wrapped row of `top()` drawn.
    pub fn top_row(&self) -> usize {
        self.top_row
    }

    /// Lines are cut at the edge instead of wrapped.
    pub fn no_wrap(&self) -> bool {
        self.no_wrap
    }

    /// The first column shown when not wrapping.
    pub fn left(&self) -> usize {
        self.left
    }

    /// The search query (typed or last run).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The search prompt is open.
    pub fn typing(&self) -> bool {
        self.typing
    }

    /// Every occurrence of the query.
    pub fn matches(&self) -> &[TextMatch] {
        &self.matches
    }

    /// The match shown, an index into `matches()`.
    pub fn current(&self) -> usize {
        self.current
    }

    /// The wrapped rows of line `i` at `width` columns, with each row's first char: the
    /// rows the renderer draws.
    fn rows_of(&self, i: usize, width: usize) -> Vec<(usize, String)> {
        let text = self.lines.get(i).map(String::as_str).unwrap_or("");
        wrap_words_at(text, width.max(1), usize::MAX).0
    }

    fn row_count(&self, i: usize, width: usize) -> usize {
        if self.no_wrap {
            1
        } else {
            self.rows_of(i, width).len().max(1)
        }
    }

    /// Scrolls by `delta` screen rows.
    fn scroll(&mut self, delta: isize, width: usize) {
        if self.lines.is_empty() {
            return;
        }
        let mut left = delta.unsigned_abs();
        if delta > 0 {
            while left > 0 {
                if self.top_row + 1 < self.row_count(self.top, width) {
                    self.top_row += 1;
                } else if self.top + 1 < self.lines.len() {
                    self.top += 1;
                    self.top_row = 0;
                } else {
                    break;
                }
                left -= 1;
            }
        } else {
            while left > 0 {
                if self.top_row > 0 {
                    self.top_row -= 1;
                } else if self.top > 0 {
                    self.top -= 1;
                    self.top_row = self.row_count(self.top, width).saturating_sub(1);
                } else {
                    break;
                }
                left -= 1;
            }
        }
    }

    /// Runs the query typed at the prompt and shows the first match at or after the view.
    pub fn search(&mut self, width: usize) {
        self.matches = find_all(&self.lines, &self.query);
        self.current = self
            .matches
            .iter()
            .position(|m| m.line >= self.top)
            .unwrap_or(0);
        self.show_current(width);
    }

    fn next_match(&mut self, forward: bool, width: usize) {
        let n = self.matches.len();
        if n == 0 {
            return;
        }
        self.current = if forward {
            (self.current + 1) % n
        } else {
            (self.current + n - 1) % n
        };
        self.show_current(width);
    }

    /// Brings the current match into view: its wrapped row at the top (wrapping), or its
    /// columns inside the window (not wrapping).
    fn show_current(&mut self, width: usize) {
        let Some(m) = self.matches.get(self.current).copied() else {
            return;
        };
        self.top = m.line;
        self.top_row = 0;
        if self.no_wrap {
            let text = &self.lines[m.line];
            let col = |chars: usize| display_width(&text.chars().take(chars).collect::<String>());
            let (start, end) = (col(m.start), col(m.start + m.len));
            if start < self.left || end > self.left + width {
                self.left = start.saturating_sub(width / 4);
            }
        } else {
            self.top_row = self
                .rows_of(m.line, width)
                .iter()
                .rposition(|(at, _)| *at <= m.start)
                .unwrap_or(0);
        }
    }
}

impl Viewer {
    /// The viewer's update: one key, with the text's width and a page's rows.
    pub fn key(&mut self, key: KeyEvent, width: usize, page: isize) -> ViewerKey {
        if self.typing {
            match key.code {
                KeyCode::Esc => self.typing = false,
                KeyCode::Enter => {
                    self.typing = false;
                    self.search(width);
                }
                KeyCode::Backspace => {
                    self.query.pop();
                }
                KeyCode::Char(c) => self.query.push(c),
                _ => {}
            }
            return ViewerKey::Stay;
        }
        match key.code {
            KeyCode::Char('w') => {
                self.no_wrap = !self.no_wrap;
                self.top_row = 0;
                self.left = 0;
                return ViewerKey::Stay;
            }
            KeyCode::Char('h') | KeyCode::Left if self.no_wrap => {
                self.left = self.left.saturating_sub(SIDE_STEP);
                return ViewerKey::Stay;
            }
            KeyCode::Char('l') | KeyCode::Right if self.no_wrap => {
                self.left += SIDE_STEP;
                return ViewerKey::Stay;
            }
            _ => {}
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => return ViewerKey::Close,
            Some(Action::Search) => {
                self.typing = true;
                self.query.clear();
            }
            Some(Action::SearchNext) => self.next_match(true, width),
            Some(Action::SearchPrev) => self.next_match(false, width),
            Some(Action::Up) => self.scroll(-1, width),
            Some(Action::Down) => self.scroll(1, width),
            Some(Action::PageUp) => self.scroll(-page, width),
            Some(Action::PageDown) => self.scroll(page, width),
            Some(Action::Top) => {
                self.top = 0;
                self.top_row = 0;
            }
            Some(Action::Bottom) => {
                // The last wrapped row at the bottom of the page, not the last line's first.
                self.top = self.lines.len().saturating_sub(1);
                self.top_row = self.row_count(self.top, width).saturating_sub(1);
                self.scroll(-(page - 1), width);
            }
            _ => {}
        }
        ViewerKey::Stay
    }
}

impl App {
    /// Columns the viewer's text gets (the overlay minus the line numbers).
    pub(super) fn viewer_width(&self, v: &Viewer) -> usize {
        let num_w = v.lines().len().to_string().len().max(3);
        (self.overlay_inner().width as usize).saturating_sub(num_w + 1)
    }
}

/// The viewer's keys are its own (`Viewer::key`); `App` gives it the width and the page.
impl View for Viewer {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        // `?` outside its search prompt: the viewer's help.
        if key.code == KeyCode::Char('?') && !self.typing() {
            return Outcome::Pass;
        }
        // `B` in the forgot view of a session file's compaction: fork before it.
        if keys::action(&key) == Some(Action::Fork) && !self.typing() {
            let source = self.fork_source().cloned();
            return Outcome::Effects(app.fork_from_viewer(source));
        }
        let page = app.overlay_viewport().max(1) as isize;
        let width = app.viewer_width(self).max(1);
        match Viewer::key(self, key, width, page) {
            ViewerKey::Close => Outcome::Close(Vec::new()),
            _ => Outcome::Consumed,
        }
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(Viewer::help_section(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_found_by_char_in_any_case() {
        let lines = vec!["Ab ab".to_string(), "xÄb äB".to_string()];
        let m = find_all(&lines, "ab");
        assert_eq!(m.len(), 2);
        assert_eq!((m[1].line, m[1].start), (0, 3));
        let m = find_all(&lines, "äb");
        assert_eq!(
            m.iter().map(|m| (m.line, m.start)).collect::<Vec<_>>(),
            vec![(1, 1), (1, 4)]
        );
    }
}
