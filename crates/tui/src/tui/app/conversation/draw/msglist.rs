//! The message list drawn by the conversation pane and the transcript view: one collapsed
//! row per message (stage tag, index, role, kind and preview, chars, ~tokens), expanded rows
//! with their wrapped text, and, while step mode is paused, the rows the next stage will
//! change marked with that stage's letter. Virtualized: it walks rows from
//! `ListState::top` and stops when the area is full, so its cost does not depend on the
//! list's length.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::compact::Stage;
use crate::tui::app::{ConvRow, EXPANDED_INDENT, ListState, expanded_lines, row_height};
use crate::tui::draw::{clip, fit};
use crate::tui::rows::MessageInfo;
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// What one row needs: the message, the stage that touched it, whether it is dimmed, and
/// a note on where it went.
pub type RowRef<'a> = ConvRow<'a>;

/// Width of the size column: `123,456 ch ~12,345 tok`.
const SIZE_COL: usize = 22;

pub struct MsgList<'a> {
    pub len: usize,
    pub row: &'a dyn Fn(usize) -> Option<RowRef<'a>>,
    pub list: &'a ListState,
    pub focused: bool,
    pub theme: &'a Theme,
    /// Lines drawn after the last row when there is room (the streaming reply).
    pub trailer: Vec<Line<'a>>,
    /// The rows a paused stage is about to change, and that stage (None: no pause).
    pub upcoming: Option<(Option<Stage>, &'a [Range<usize>])>,
}

impl MsgList<'_> {
    pub fn render(&self, f: &mut Frame, area: Rect) {
        let width = area.width as usize;
        let height = area.height as usize;
        let index_w = self.len.saturating_sub(1).to_string().len().max(2);
        let mut lines: Vec<Line> = Vec::with_capacity(height);
        let mut i = self.start_row(width, height);
        while lines.len() < height && i < self.len {
            let Some(ConvRow {
                info,
                mark,
                dimmed,
                note,
            }) = (self.row)(i)
            else {
                break;
            };
            let selected = i == self.list.selected;
            let expanded = self.list.expanded.contains(&info.uid);
            let upcoming = match self.upcoming {
                Some((stage, rows)) if crate::tui::pause::covers(rows, i) => Some(stage),
                _ => None,
            };
            lines.push(self.row_line(
                i,
                info,
                mark,
                dimmed,
                note.as_deref(),
                selected,
                expanded,
                upcoming,
                index_w,
                width,
            ));
            if expanded {
                let (text, more) = expanded_lines(info, width, height);
                let indent = " ".repeat(EXPANDED_INDENT);
                let style = if dimmed {
                    self.theme.dim()
                } else {
                    Style::new()
                };
                for l in text {
                    if lines.len() >= height {
                        break;
                    }
                    lines.push(Line::from(vec![
                        Span::raw(indent.clone()),
                        Span::styled(l, style),
                    ]));
                }
                if more && lines.len() < height {
                    lines.push(Line::from(vec![
                        Span::raw(indent.clone()),
                        Span::styled("… more (o opens the full text)", self.theme.dim()),
                    ]));
                }
            }
            i += 1;
        }
        if i >= self.len {
            for l in &self.trailer {
                if lines.len() >= height {
                    break;
                }
                lines.push(l.clone());
            }
        }
        if self.len == 0 && self.trailer.is_empty() && height > 0 {
            lines.push(Line::from(Span::styled(
                "no messages yet: type a request below",
                self.theme.dim(),
            )));
        }
        f.render_widget(Paragraph::new(lines), area);
    }

    /// `top`, moved down when the list follows its end and the trailer (streamed text)
    /// needs the room: the newest text must be on screen while it arrives.
    fn start_row(&self, width: usize, height: usize) -> usize {
        let mut start = self.list.top;
        if self.trailer.is_empty() || self.len == 0 || self.list.selected + 1 < self.len {
            return start;
        }
        let h = |i: usize| {
            (self.row)(i)
                .map(|r| row_height(r.info, &self.list.expanded, width, height))
                .unwrap_or(1)
        };
        let mut used: usize = (start..self.len).map(h).sum();
        while used + self.trailer.len() > height && start + 1 < self.len {
            used -= h(start);
            start += 1;
        }
        start
    }

    #[allow(clippy::too_many_arguments)]
    fn row_line<'b>(
        &self,
        i: usize,
        info: &MessageInfo,
        mark: Option<Stage>,
        dimmed: bool,
        note: Option<&str>,
        selected: bool,
        expanded: bool,
        upcoming: Option<Option<Stage>>,
        index_w: usize,
        width: usize,
    ) -> Line<'b> {
        let theme = self.theme;
        let (tag, tag_style) = match (upcoming, mark) {
            // About to change: the letter of the stage that will, marked.
            (Some(Some(s)), _) => (Theme::stage_tag(s), theme.upcoming()),
            (Some(None), _) => ("•", theme.upcoming()),
            (None, Some(s)) => (Theme::stage_tag(s), theme.stage(s)),
            (None, None) => (" ", Style::new()),
        };
        let arrow = match (upcoming.is_some(), expanded) {
            (true, _) => "▶",
            (false, true) => "▾",
            (false, false) => "▸",
        };
        let role = match info.role() {
            "assistant" => "asst",
            "user" => "user",
            other => other,
        };
        let tokens = match info.tokens() {
            Some(t) => format!("~{} tok", group_digits(t)),
            None => "~… tok".to_string(),
        };
        let size = format!("{} ch {tokens}", group_digits(info.chars));
        let fixed = 2 + index_w + 1 + 5 + 1 + SIZE_COL;
        let label_w = width.saturating_sub(fixed);
        let label_style = match (dimmed, upcoming, mark) {
            (true, _, _) => theme.dim(),
            (false, Some(_), _) => theme.upcoming_label(),
            (false, None, Some(s)) => theme.label(s),
            (false, None, None) => Style::new(),
        };
        let role_style = if dimmed {
            theme.dim()
        } else {
            theme.role(info.role())
        };
        let mut spans = vec![
            Span::styled(tag, tag_style),
            Span::raw(arrow),
            Span::styled(format!("{i:>index_w$} "), theme.dim()),
            Span::styled(fit(role, 5), role_style),
            Span::raw(" "),
        ];
        match note {
            // Where the message went comes first: it is why the row is dimmed.
            Some(note) => {
                // At most three quarters of the room: the row must still say what it was.
                let room = (label_w * 3 / 4).max(12);
                let note = format!("{} · ", clip(note, room.saturating_sub(3)));
                let rest = label_w.saturating_sub(crate::util::display_width(&note));
                spans.push(Span::styled(note, theme.warn()));
                spans.push(Span::styled(fit(&info.label, rest), label_style));
            }
            None => spans.push(Span::styled(fit(&info.label, label_w), label_style)),
        }
        spans.push(Span::styled(
            format!("{:>SIZE_COL$}", clip(&size, SIZE_COL)),
            theme.dim(),
        ));
        if selected {
            let sel = theme.selected();
            for s in &mut spans {
                s.style = s.style.patch(sel);
            }
        }
        Line::from(spans)
    }
}
