//! The before/after diff overlay of one stage: the message list unified, with removed rows
//! (`-`), added rows (`+`), rows changed in place (`~`, old then new) and unchanged rows.
//! Draws `App` state only; the lines were computed when the diff was opened.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{clip, fit, pane_block};
use crate::tui::app::{App, DiffView};
use crate::tui::diff::DiffOp;
use crate::tui::layout::centered;
use crate::tui::rows::MessageInfo;
use crate::util::{display_width, group_digits};

pub fn render(app: &App, f: &mut Frame, area: Rect, d: &DiffView) {
    let r = centered(area, 90, 85);
    f.render_widget(Clear, r);
    let title = Line::from(vec![
        Span::styled(" Diff ", app.theme.title()),
        Span::raw(clip(&d.title, (r.width as usize).saturating_sub(10))),
        Span::raw(" "),
    ]);
    let block = pane_block(title, true, &app.theme);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let width = inner.width as usize;
    let theme = &app.theme;
    let (mut removed, mut added, mut changed) = (0, 0, 0);
    for l in &d.lines {
        match l.op {
            DiffOp::Removed => removed += 1,
            DiffOp::Added => added += 1,
            DiffOp::Changed => changed += 1,
            DiffOp::Same => {}
        }
    }
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("- {removed} removed  "), theme.removed()),
        Span::styled(format!("+ {added} added  "), theme.added()),
        Span::styled(format!("~ {changed} changed  "), theme.changed()),
        Span::styled("(before # / after #; j/k scroll, Esc closes)", theme.dim()),
    ])];
    let body = (inner.height as usize).saturating_sub(1);
    for l in d.lines.iter().skip(d.top) {
        if lines.len() > body {
            break;
        }
        match l.op {
            DiffOp::Same => {
                if let (Some((i, m)), Some((j, _))) = (&l.old, &l.new) {
                    lines.push(row(' ', Some(*i), Some(*j), m, Style::new(), width));
                }
            }
            DiffOp::Removed => {
                if let Some((i, m)) = &l.old {
                    lines.push(row('-', Some(*i), None, m, theme.removed(), width));
                }
            }
            DiffOp::Added => {
                if let Some((j, m)) = &l.new {
                    lines.push(row('+', None, Some(*j), m, theme.added(), width));
                }
            }
            DiffOp::Changed => {
                if let Some((i, m)) = &l.old {
                    lines.push(row('~', Some(*i), None, m, theme.removed(), width));
                }
                if let Some((j, m)) = &l.new {
                    lines.push(row('~', None, Some(*j), m, theme.changed(), width));
                }
            }
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn row<'a>(
    op: char,
    old: Option<usize>,
    new: Option<usize>,
    m: &MessageInfo,
    style: Style,
    width: usize,
) -> Line<'a> {
    let num = |n: Option<usize>| {
        n.map(|n| format!("{n:>4}"))
            .unwrap_or_else(|| "    ".into())
    };
    let role = if m.role() == "assistant" {
        "asst"
    } else {
        "user"
    };
    let size = format!("{:>9}", group_digits(m.chars));
    let head = format!("{op} {} {} {role} ", num(old), num(new));
    let label_w = width.saturating_sub(display_width(&head) + size.len() + 1);
    Line::from(vec![
        Span::styled(head, style),
        Span::styled(fit(&m.label, label_w), style),
        Span::raw(" "),
        Span::styled(size, style),
    ])
}
