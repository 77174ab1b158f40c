//! Keys of the text viewer: scrolling by screen rows (long lines wrap), `w` to turn
//! wrapping off and `h` / `l` to scroll sideways, and search: `/` asks for a query, every
//! occurrence is found (case-insensitive), and the current one is brought into view, down
//! to its wrapped row or across to its column.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, TextMatch, Viewer};
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

impl Viewer {
    /// The wrapped rows of line `i` at `width` columns, with each row's first char: the
    /// rows the renderer draws.
    pub fn rows_of(&self, i: usize, width: usize) -> Vec<(usize, String)> {
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
    pub fn scroll(&mut self, delta: isize, width: usize) {
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

    pub fn next_match(&mut self, forward: bool, width: usize) {
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

impl App {
    /// Columns the viewer's text gets (the overlay minus the line numbers).
    pub(super) fn viewer_width(&self, v: &Viewer) -> usize {
        let num_w = v.lines.len().to_string().len().max(3);
        (self.overlay_inner().width as usize).saturating_sub(num_w + 1)
    }

    pub(super) fn viewer_key(&mut self, key: KeyEvent) {
        let page = self.overlay_viewport().max(1) as isize;
        let Some(super::Overlay::Viewer(v)) = &self.overlay else {
            return;
        };
        let width = self.viewer_width(v).max(1);
        let Some(super::Overlay::Viewer(v)) = &mut self.overlay else {
            return;
        };
        if v.typing {
            match key.code {
                KeyCode::Esc => v.typing = false,
                KeyCode::Enter => {
                    v.typing = false;
                    v.search(width);
                }
                KeyCode::Backspace => {
                    v.query.pop();
                }
                KeyCode::Char(c) => v.query.push(c),
                _ => {}
            }
            return;
        }
        match key.code {
            KeyCode::Char('w') => {
                v.no_wrap = !v.no_wrap;
                v.top_row = 0;
                v.left = 0;
                return;
            }
            KeyCode::Char('h') | KeyCode::Left if v.no_wrap => {
                v.left = v.left.saturating_sub(SIDE_STEP);
                return;
            }
            KeyCode::Char('l') | KeyCode::Right if v.no_wrap => {
                v.left += SIDE_STEP;
                return;
            }
            _ => {}
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit) => self.close_overlay(),
            Some(Action::Search) => {
                v.typing = true;
                v.query.clear();
            }
            Some(Action::SearchNext) => v.next_match(true, width),
            Some(Action::SearchPrev) => v.next_match(false, width),
            Some(Action::Up) => v.scroll(-1, width),
            Some(Action::Down) => v.scroll(1, width),
            Some(Action::PageUp) => v.scroll(-page, width),
            Some(Action::PageDown) => v.scroll(page, width),
            Some(Action::Top) => {
                v.top = 0;
                v.top_row = 0;
            }
            Some(Action::Bottom) => {
                // The last wrapped row at the bottom of the page, not the last line's first.
                v.top = v.lines.len().saturating_sub(1);
                v.top_row = v.row_count(v.top, width).saturating_sub(1);
                v.scroll(-(page - 1), width);
            }
            _ => {}
        }
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
