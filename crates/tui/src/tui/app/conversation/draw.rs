//! The conversation pane: the live message list, either what the model sees (the mirror of
//! the history) or the full session with compacted-away messages dimmed, plus the reply
//! being streamed. Beside its state (`ConversationState`, `mod.rs`); draws `App` state only.

pub mod msglist;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use self::msglist::{MsgList, RowRef};
use crate::tui::app::pane_title::unit_tag;
use crate::tui::app::{App, ConvView, Pane};
use crate::tui::draw::{clip, pane_block};

const STREAM_TAIL_LINES: usize = 3;

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let focused = app.focus() == Pane::Conversation;
    let counts = format!(
        "· {} · {} ",
        crate::util::plural(app.conv_len(), "message"),
        unit_tag(app)
    );
    let title = match (app.timeline_view(), app.conversation().view()) {
        // Rewound, the way back comes right after the call: a title is cut from its end,
        // and a narrow pane beside the timeline must still say how to return.
        (Some(v), _) => Line::from(vec![
            Span::styled(" 1 Conversation ", app.theme().title()),
            Span::raw(format!("· call {} ", v.selected() + 1)),
            Span::styled("(rewound; Esc: live) ", app.theme().dim()),
            Span::raw(counts),
        ]),
        (None, view) => {
            let (what, keys) = match view {
                ConvView::Model => ("what the model sees", "(v toggles) "),
                ConvView::Session => ("full session", "(v toggles, d diff) "),
            };
            Line::from(vec![
                Span::styled(" 1 Conversation ", app.theme().title()),
                Span::raw(format!("· {what} {counts}")),
                Span::styled(keys, app.theme().dim()),
            ])
        }
    };
    let block = pane_block(title, focused, app.theme());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let row = |i: usize| -> Option<RowRef<'_>> { app.conv_row(i) };
    // While paused, the rows the next stage will change (the model's view only: indices
    // are the history's).
    let rows = app.rows_to_change();
    let upcoming = match (app.step_state().next_step(), app.conversation().view()) {
        (Some(next), ConvView::Model) => Some((crate::tui::pause::stage_of(next), &rows[..])),
        _ => None,
    };
    let mut trailer = Vec::new();
    if app.conversation().view() == ConvView::Model
        && app.timeline_view().is_none()
        && !app.conversation().streaming().is_empty()
    {
        let spinner = crate::tui::draw::spinner(app.tick());
        trailer.push(Line::from(vec![
            Span::raw(format!(" {spinner} ")),
            Span::styled("asst ", app.theme().role("assistant")),
            Span::styled("streaming…", app.theme().dim()),
        ]));
        let width = (inner.width as usize).saturating_sub(6).max(1);
        let lines: Vec<&str> = app.conversation().streaming().lines().collect();
        let start = lines.len().saturating_sub(STREAM_TAIL_LINES);
        for l in &lines[start..] {
            trailer.push(Line::from(format!("      {}", clip(l, width))));
        }
    }
    MsgList {
        len: app.conv_len(),
        row: &row,
        list: app.conv_list(),
        focused,
        theme: app.theme(),
        trailer,
        upcoming,
    }
    .render(f, inner);
}
