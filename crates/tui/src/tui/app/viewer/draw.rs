//! The text viewer overlay (persisted outputs, full messages, a request as JSON): line
//! numbers, long lines wrapped between words (or cut, with a sideways offset, when wrapping is off),
//! every search match highlighted and the current one marked, the search prompt. Draws
//! `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{TextMatch, Viewer};
use crate::tui::draw::{DrawCtx, clip, covering_frame};
use crate::tui::layout::centered;
use crate::tui::rows::wrap_words_at;
use crate::tui::theme::Theme;
use crate::util::display_width;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, v: &Viewer) {
    let r = centered(area, 90, 85);
    let theme = ctx.theme;
    let title = Line::from(vec![
        Span::styled(" View ", theme.title()),
        Span::raw(clip(v.title(), (r.width as usize).saturating_sub(12))),
        Span::raw(" "),
    ]);
    let inner = covering_frame(f, r, title, theme);
    let body_h = (inner.height as usize).saturating_sub(1);
    let num_w = v.lines().len().to_string().len().max(3);
    let width = (inner.width as usize).saturating_sub(num_w + 1).max(1);
    let mut lines: Vec<Line> = Vec::with_capacity(inner.height as usize);
    let mut i = v.top();
    while lines.len() < body_h && i < v.lines().len() {
        let text = &v.lines()[i];
        let here: Vec<(TextMatch, bool)> = v
            .matches()
            .iter()
            .enumerate()
            .filter(|(_, m)| m.line == i)
            .map(|(k, m)| (*m, k == v.current()))
            .collect();
        let pieces: Vec<(usize, String)> = if v.no_wrap() {
            vec![window(text, v.left(), width)]
        } else {
            // The same rows the viewer's scrolling counts (`Viewer::rows_of`).
            wrap_words_at(text, width, body_h + v.top_row() + 1).0
        };
        let skip = if i == v.top() && !v.no_wrap() {
            v.top_row()
        } else {
            0
        };
        for (k, (at, piece)) in pieces.into_iter().enumerate().skip(skip) {
            if lines.len() >= body_h {
                break;
            }
            let number = if k == 0 {
                format!("{:>num_w$} ", i + 1)
            } else {
                format!("{:>num_w$} ", "↪")
            };
            let mut spans = vec![Span::styled(number, theme.dim())];
            spans.extend(highlight(&piece, at, &here, theme));
            lines.push(Line::from(spans));
        }
        i += 1;
    }
    while lines.len() < body_h {
        lines.push(Line::from(""));
    }
    lines.push(footer(v, theme, inner.width as usize));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The part of `text` from column `left` that fits in `width` columns, with the char index
/// it starts at.
fn window(text: &str, left: usize, width: usize) -> (usize, String) {
    let mut col = 0;
    let mut start = None;
    let mut out = String::new();
    for (k, c) in text.chars().enumerate() {
        let w = display_width(c.encode_utf8(&mut [0; 4]));
        if col >= left {
            if start.is_none() {
                start = Some(k);
            }
            if display_width(&out) + w > width {
                break;
            }
            out.push(c);
        }
        col += w;
    }
    (start.unwrap_or(0), out)
}

/// `piece` (which starts at char `at` of its line) with the matches in it highlighted.
fn highlight<'a>(
    piece: &str,
    at: usize,
    matches: &[(TextMatch, bool)],
    theme: &Theme,
) -> Vec<Span<'a>> {
    let chars: Vec<char> = piece.chars().collect();
    let end = at + chars.len();
    let mut out = Vec::new();
    let mut pos = at;
    for (m, current) in matches {
        let (a, b) = (m.start.max(pos), (m.start + m.len).min(end));
        if a >= b {
            continue;
        }
        if a > pos {
            out.push(Span::raw(
                chars[pos - at..a - at].iter().collect::<String>(),
            ));
        }
        let style = if *current {
            theme.highlight().add_modifier(Modifier::REVERSED)
        } else {
            theme.highlight()
        };
        out.push(Span::styled(
            chars[a - at..b - at].iter().collect::<String>(),
            style,
        ));
        pos = b;
    }
    if pos < end {
        out.push(Span::styled(
            chars[pos - at..].iter().collect::<String>(),
            Style::new(),
        ));
    }
    out
}

/// The status and key line, in the first of its forms that fits `width` (at 80 columns a
/// match's status leaves no room for the long one, and a cut line would lose `Esc`).
fn footer<'a>(v: &Viewer, theme: &Theme, width: usize) -> Line<'a> {
    if v.typing() {
        return Line::from(vec![
            Span::styled("/", theme.key()),
            Span::raw(format!("{}▏", v.query())),
            Span::styled("  Enter search · Esc cancel", theme.dim()),
        ]);
    }
    let m = if v.matches().is_empty() {
        if v.query().is_empty() {
            String::new()
        } else {
            format!("no match for \"{}\" · ", v.query())
        }
    } else {
        format!(
            "match {}/{} for \"{}\" · ",
            v.current() + 1,
            v.matches().len(),
            v.query()
        )
    };
    let line = format!(
        "{m}line {}/{} · ",
        (v.top() + 1).min(v.lines().len()),
        v.lines().len()
    );
    let forms = if v.no_wrap() {
        let col = format!("col {} · ", v.left() + 1);
        [
            format!("{col}/ search · n N next/prev · h l scroll · w wrap · Esc close"),
            format!("{col}/ n N search · h l · w wrap · Esc"),
            format!("{col}/ n N · h l · w · Esc"),
        ]
    } else {
        [
            "/ search · n N next/prev · w no-wrap · Esc close".to_string(),
            "/ n N search · w no-wrap · Esc".to_string(),
            "/ n N · w · Esc".to_string(),
        ]
    };
    let text = forms
        .iter()
        .map(|keys| format!("{line}{keys}"))
        .find(|t| display_width(t) <= width)
        .unwrap_or_else(|| format!("{line}{}", forms[2]));
    Line::from(Span::styled(text, theme.dim()))
}
