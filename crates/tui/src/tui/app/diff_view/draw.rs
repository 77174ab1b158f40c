//! The diff overlay: a stage's before/after, or one call's request against the previous
//! one. The title and note wrap (a persisted path is never cut); then the counts; then the
//! lines: removed (`-`), added (`+`), changed in place (`~`, old then new), unchanged, and
//! folded runs of unchanged rows with their count. The cursor's item is highlighted; a
//! column names the stage that made each line. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::message::Role;
use crate::timeline::Fold;
use crate::timeline::diff::DiffOp;
use crate::tui::app::DiffView;
use crate::tui::diff::DiffCell;
use crate::tui::draw::{DrawCtx, covering_frame, fit};
use crate::tui::layout::centered;
use crate::util::{display_width, group_digits};

/// The cause column's width with its space: at least `TAG_COL_MIN` (the short names fit),
/// at most `TAG_COL_MAX` (the label needs the rest).
const TAG_COL_MIN: usize = 9;
const TAG_COL_MAX: usize = 16;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, d: &DiffView) {
    let r = centered(area, 90, 85);
    let theme = ctx.theme;
    let inner = covering_frame(
        f,
        r,
        Line::from(Span::styled(" Diff ", theme.title())),
        theme,
    );
    let width = inner.width as usize;
    let header = d.header(width);
    let mut lines: Vec<Line> = Vec::with_capacity(inner.height as usize);
    let title_rows = header.len() - 1;
    for (k, h) in header.iter().take(title_rows).enumerate() {
        let style = if k == 0 { theme.title() } else { Style::new() };
        lines.push(Line::from(Span::styled(h.clone(), style)));
    }
    let (mut removed, mut added, mut changed) = (0, 0, 0);
    for l in &d.lines {
        match l.op {
            DiffOp::Removed => removed += 1,
            DiffOp::Added => added += 1,
            DiffOp::Changed => changed += 1,
            DiffOp::Same => {}
        }
    }
    let counts = vec![
        Span::styled(format!("- {removed} removed  "), theme.removed()),
        Span::styled(format!("+ {added} added  "), theme.added()),
        Span::styled(format!("~ {changed} changed  "), theme.changed()),
    ];
    let used: usize = counts.iter().map(|s| display_width(&s.content)).sum();
    let keys = "n/N change · Enter text/unfold · Esc";
    let mut counts = counts;
    counts.push(Span::styled(
        crate::tui::draw::clip(keys, width.saturating_sub(used)),
        theme.dim(),
    ));
    lines.push(Line::from(counts));
    // As wide as the longest cause (`compact_history` is 15), plus its space, so every
    // stage's row keeps its size column.
    let tag_w = d
        .lines
        .iter()
        .map(|l| display_width(l.tag))
        .max()
        .filter(|&w| w > 0)
        .map_or(0, |w| (w + 1).clamp(TAG_COL_MIN, TAG_COL_MAX));
    let body = (inner.height as usize).saturating_sub(lines.len());
    let mut k = d.top;
    let start = lines.len();
    while lines.len() - start < body && k < d.items.len() {
        let selected = k == d.selected;
        let mut item_lines = match d.items[k] {
            Fold::Folded { count, .. } => vec![Line::from(Span::styled(
                fit(
                    &format!("      ⋯ {count} unchanged rows (Enter shows them) ⋯"),
                    width,
                ),
                theme.dim(),
            ))],
            Fold::Line(i) => {
                let l = &d.lines[i];
                let line = |op: char, a: Option<usize>, b: Option<usize>, c: &DiffCell, st| {
                    row(op, a, b, c, (l.tag, tag_w), st, width)
                };
                match (l.op, &l.old, &l.new) {
                    (DiffOp::Same, Some(o), Some(n)) => {
                        vec![line(' ', o.index, n.index, n, Style::new())]
                    }
                    (DiffOp::Removed, Some(o), _) => {
                        vec![line('-', o.index, None, o, theme.removed())]
                    }
                    (DiffOp::Added, _, Some(n)) => {
                        vec![line('+', None, n.index, n, theme.added())]
                    }
                    (DiffOp::Changed, Some(o), Some(n)) => vec![
                        line('~', o.index, None, o, theme.removed()),
                        line('~', None, n.index, n, theme.changed()),
                    ],
                    _ => Vec::new(),
                }
            }
        };
        if selected {
            for l in &mut item_lines {
                *l = l.clone().patch_style(theme.selected());
            }
        }
        lines.extend(item_lines);
        k += 1;
    }
    lines.truncate(start + body);
    f.render_widget(Paragraph::new(lines), inner);
}

fn num(n: Option<usize>) -> String {
    n.map(|n| format!("{n:>4}"))
        .unwrap_or_else(|| "    ".into())
}

/// One diff row; `tag_w` is the cause column's width with its space (0: no column).
fn row<'a>(
    op: char,
    old: Option<usize>,
    new: Option<usize>,
    cell: &DiffCell,
    (tag, tag_w): (&str, usize),
    style: Style,
    width: usize,
) -> Line<'a> {
    let m = &cell.info;
    let role = if m.role_kind() == Role::Assistant {
        "asst"
    } else {
        "user"
    };
    let size = format!("{:>9}", group_digits(m.chars));
    let head = format!("{op} {} {} ", num(old), num(new));
    let head_role = format!("{role} ");
    let label_w = width
        .saturating_sub(display_width(&head) + display_width(&head_role) + size.len() + 1 + tag_w);
    let mut spans = vec![
        Span::styled(head, style),
        Span::styled(head_role, style),
        Span::styled(fit(&m.label, label_w), style),
        Span::raw(" "),
    ];
    if tag_w > 0 {
        let cause = crate::util::clip_chars(tag, tag_w - 1);
        let pad = (tag_w - 1).saturating_sub(display_width(&cause));
        spans.push(Span::styled(format!("{}{cause} ", " ".repeat(pad)), style));
    }
    spans.push(Span::styled(size, style));
    Line::from(spans)
}
