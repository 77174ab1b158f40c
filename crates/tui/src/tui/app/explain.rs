//! "Explain this number" (`e`): a small covering view (a `Layer`, `layers.rs`) saying what
//! each number of the gauge, or of the `w` view's bars at the selected call, is: where it
//! comes from (which function, which call), its unit, and whether it is an estimate (`~`).
//! The text is built here from the same functions and fields the drawing reads
//! (`screen::gauge::text_lines`, `ContextView::call`), so the two never disagree. Its keys:
//! `j`/`k` scroll, Esc, `e` or `q` close. `draw.rs` draws it (`View::draw`).

mod draw;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Layer, Outcome, View};
use crate::breakdown::{CallBreakdown, Counting};
use crate::compact::SizeUnit;
use crate::tui::draw::DrawCtx;
use crate::tui::keys::{self, Action};
use crate::util::group_digits;

/// The explanation on screen: its title, its paragraphs, the first row shown.
#[derive(Debug, Clone)]
pub struct ExplainView {
    title: String,
    paragraphs: Vec<String>,
    top: usize,
}

impl ExplainView {
    pub fn new(title: impl Into<String>, paragraphs: Vec<String>) -> ExplainView {
        ExplainView {
            title: title.into(),
            paragraphs,
            top: 0,
        }
    }

    pub fn title(&self) -> &str {
        &self.title
    }

    /// The first row shown.
    pub fn top(&self) -> usize {
        self.top
    }

    /// The dialog's width on a screen `screen_w` wide: most of a narrow screen.
    fn width_on(screen_w: u16) -> u16 {
        screen_w * if screen_w < 100 { 94 } else { 72 } / 100
    }

    /// The rows at `width` columns: each paragraph wrapped, a blank row between them. The
    /// drawing shows them and the keys scroll them.
    pub fn rows(&self, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in self.paragraphs.iter().enumerate() {
            if i > 0 {
                out.push(String::new());
            }
            out.extend(crate::tui::pause::wrap_words(p, width.max(1)));
        }
        out
    }

    /// The last useful first row on a `w`x`h` screen (the text's end at the bottom).
    fn max_top(&self, (w, h): (u16, u16)) -> usize {
        let rows = self.rows(ExplainView::width_on(w).saturating_sub(2) as usize);
        rows.len().saturating_sub(h.saturating_sub(2) as usize)
    }
}

impl View for ExplainView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, app: &mut App) -> Outcome {
        if key.code == crossterm::event::KeyCode::Char('e') {
            return Outcome::Close(Vec::new());
        }
        match keys::action(&key) {
            Some(Action::Back | Action::Quit | Action::Enter) => Outcome::Close(Vec::new()),
            Some(Action::Help) => Outcome::Pass,
            Some(Action::Up) => {
                self.top = self.top.saturating_sub(1);
                Outcome::Consumed
            }
            Some(Action::Down) => {
                self.top = (self.top + 1).min(self.max_top(app.screen.size));
                Outcome::Consumed
            }
            Some(Action::Top) => {
                self.top = 0;
                Outcome::Consumed
            }
            _ => Outcome::Consumed,
        }
    }

    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        Some(&[("j/k", "scroll"), ("Esc/e", "close")])
    }
}

/// Each `w` letter: its category key, its letter, what it holds. The drawing
/// (`context_view/draw.rs`) colours the same letters.
pub const LETTERS: [(&str, char, &str); 14] = [
    ("system_prompt", 'S', "system prompt"),
    ("tool_definitions", 'D', "tool definitions"),
    ("reminders", 'E', "reminders"),
    ("developer_messages", 'V', "developer messages"),
    ("not_in_file", 'N', "not in the file"),
    ("summaries", 'M', "summaries and markers"),
    ("user_text", 'U', "user text"),
    ("assistant_text", 'A', "assistant text"),
    ("thinking", 'K', "thinking"),
    ("tool_calls", 'C', "tool calls"),
    ("tool_results", 'R', "tool results"),
    ("persisted_previews", 'P', "persisted previews"),
    ("claude_code_persisted_output", 'O', "persisted output"),
    ("images", 'I', "images"),
];

impl App {
    /// The history's size in the strategy's unit (what `context_limit` is compared with):
    /// `str()` chars, JSON chars from each message's cached length, or `str()` chars // 4.
    /// The gauge and its explanation read it.
    pub fn history_size(&self) -> usize {
        let conv = self.conversation();
        match self.config().strategy.unit() {
            SizeUnit::Chars => conv.chars(),
            SizeUnit::Tokens => conv.chars() / 4,
            SizeUnit::JsonChars => {
                let n = conv.history().len();
                let items: usize = conv
                    .history()
                    .iter()
                    .map(|r| r.info().message.json_size())
                    .sum();
                2 + items + 2 * n.saturating_sub(1)
            }
        }
    }

    /// Whether the API's counts are the scripted model's own (its request's chars / 4),
    /// not a tokenizer's: the gauge and its explanation say so.
    pub fn api_is_synthetic(&self) -> bool {
        self.provider().contains("scripted")
    }

    /// `e` outside a view: what each of the gauge's numbers is, or with the timeline pane
    /// open (it covers the gauge), what its plot and list show.
    pub(super) fn explain_gauge(&mut self) {
        let view = match timeline_paragraphs(self) {
            Some(p) => ExplainView::new("What the timeline's plot and list are", p),
            None => ExplainView::new("What the gauge's numbers are", gauge_paragraphs(self)),
        };
        self.push_layer(Layer::Explain(view));
    }
}

/// The gauge's numbers, one paragraph each, from the values it shows now.
pub fn gauge_paragraphs(app: &App) -> Vec<String> {
    let config = app.config();
    let unit = config.strategy.unit();
    let limit = group_digits(config.context_limit);
    let conv = app.conversation();
    let size = if conv.history().is_empty() {
        "The history is empty (its str() is `[]`, 2 chars that are no content, so the gauge \
         says \"empty\")."
            .to_string()
    } else {
        format!(
            "{} {}: the size of the history the agent holds now, in {}'s unit, as \
             App::history_size measures it (the lesson's len(str(messages)); tokens \
             are its chars / 4 for s06). Exact, not an estimate.",
            group_digits(app.history_size()),
            unit.label(),
            config.strategy
        )
    };
    let mut out = vec![
        size,
        format!(
            "/ {limit} {}: context_limit (/config). compact_history runs on the next model \
             call when the size is over it. The bar's end is the limit; ┊ marks 70% (the \
             gauge turns yellow) and 90% (red) of it (gauge::WARN_AT, DANGER_AT).",
            unit.label()
        ),
        format!(
            "~{} tokens (est.): the history's messages counted with tiktoken cl100k (the \
             conversation pane's ~tok column, summed). An estimate (~): not the model's own \
             tokenizer, and without the system prompt and tool definitions.",
            group_digits(conv.tokens())
        ),
    ];
    let last_call = app
        .timeline()
        .calls
        .iter()
        .rev()
        .find(|c| c.input_tokens.is_some())
        .map(|c| c.number);
    let synthetic = app.api_is_synthetic();
    match conv.api_tokens() {
        (Some(t), cached) => {
            let at = last_call.map_or(String::new(), |n| format!(" (call {n})"));
            let cached = match cached {
                Some(c) if c > 0 => format!(
                    " {} of them were read from the cache.",
                    group_digits(c as usize)
                ),
                _ => String::new(),
            };
            let source = if synthetic {
                "It is SYNTHETIC: the scripted model has no tokenizer and reports its request's \
                 chars / 4 (provider::scripted)."
            } else {
                "The provider's own count, exact for that request."
            };
            out.push(format!(
                "API {}: the input tokens the provider reported for the last main model \
                 call{at}, the whole request (system prompt, tool definitions, history). \
                 {source}{cached}",
                group_digits(t as usize)
            ));
        }
        (None, _) => out.push("API: no model call has reported its input tokens yet.".to_string()),
    }
    if let Some(t) = conv.summary_input_tokens() {
        out.push(format!(
            "last summary call's input {}: the input tokens reported for the last summary \
             request (compact_history's or reactive_compact's call to the model, not a turn), \
             shown apart so the API figure above is always a main call's.{}",
            group_digits(t as usize),
            if synthetic {
                " Synthetic too (chars / 4)."
            } else {
                ""
            }
        ));
    }
    out.push(
        "Plot: each model call's history before the pipeline (░) and the request sent (█), \
         in str() chars, with the limit (┄); ↑ marks a call above the top."
            .to_string(),
    );
    out
}

/// The timeline pane's plot and list, at its selected call; None when the pane is closed.
pub fn timeline_paragraphs(app: &App) -> Option<Vec<String>> {
    let v = app.timeline_view()?;
    let t = app.timeline();
    let mut out = Vec::new();
    if let Some(c) = t.calls.get(v.selected()) {
        let api = c
            .input_tokens
            .map_or("no input tokens reported".to_string(), |n| {
                format!(
                    "{} input tokens reported by the API{}",
                    group_digits(n as usize),
                    if app.api_is_synthetic() {
                        " (synthetic: the scripted model's chars / 4)"
                    } else {
                        ""
                    }
                )
            });
        out.push(format!(
            "Call {} (selected, ▲ under the plot): the history was {} str() chars before the \
             pipeline and {} chars were sent; {api}.",
            c.number,
            group_digits(c.size_before),
            group_digits(c.size_after)
        ));
    }
    let limit = t.limit_of(v.selected() + 1).map_or_else(
        || t.limit_text(),
        |l| {
            format!(
                "{}, the limit call {} ran under",
                l.limit_text(),
                v.selected() + 1
            )
        },
    );
    out.extend([
        "Unit: the plot and the list are in str() chars (the lesson's len(str(messages))) \
         whatever the strategy counts; a limit in tokens is converted (x4)."
            .to_string(),
        "Plot: one column per main model call. ░ reaches the history's size before the \
         pipeline ran, █ the request sent (in eighths of a row); a red bar is a call refused \
         as too long. The scale fits the requests sent and the limit; ↑ marks a call above \
         the top. Labels on the left: 0, the limit and the top (4.5k = 4,500 chars)."
            .to_string(),
        format!(
            "┄ is the per-call limit: {limit}. After a continue each call is drawn against \
             the limit it ran under (Timeline::limit_of)."
        ),
        "List: call number; before and sent, in chars (k = thousands when narrow); the \
         letters of the stages that changed something before the call (l: the legend); the \
         input tokens the API reported for it (– when none); ✗ refused."
            .to_string(),
    ]);
    Some(out)
}

/// The `w` view's numbers at one call.
pub fn call_paragraphs(call: &CallBreakdown, counting: &Counting, synthetic: bool) -> Vec<String> {
    let how = match counting {
        Counting::Exact(_) => "Exact: counted with the model family's own tokenizer.".to_string(),
        _ => format!(
            "{}: every figure with ~ is an estimate.",
            counting.describe()
        ),
    };
    let synthetic_note = if synthetic {
        " (synthetic: the scripted model reports its request's chars / 4, the tool \
         definitions left out)"
    } else {
        ""
    };
    let api = match call.recorded_tokens {
        Some(t) if call.total_tokens > t => format!(
            "The API reported {} input tokens for this call{synthetic_note}. The system \
             prompt (S) and tool definitions (D) alone are estimated above that, so nothing \
             is scaled: the estimate stands beside the API's count. S and D are the same \
             text at every call and keep one size.",
            group_digits(t as usize)
        ),
        Some(t) => format!(
            "The API reported {} input tokens for this call{synthetic_note}. The history's \
             categories are scaled so the call sums to it; the system prompt (S) and tool \
             definitions (D) are the same text at every call and keep one size.",
            group_digits(t as usize)
        ),
        None => "No usage was reported for this call: the total is the estimate.".to_string(),
    };
    let letters: Vec<String> = LETTERS
        .iter()
        .map(|(_, l, name)| format!("{l} {name}"))
        .collect();
    vec![
        format!(
            "call {}: {} tokens, the request model call {} sent (system prompt, tool \
             definitions, history), split by category (timeline::breakdown::of_timeline, or \
             breakdown::session for an opened session).",
            call.call,
            call.total_text(),
            call.call
        ),
        how,
        api,
        "Top bar: this call's request, one letter per category, each as wide as its share."
            .to_string(),
        "Columns: every call's request stacked by category, a column per call, as high as its \
         tokens (the tallest call fills the height); ^ marks the selected call."
            .to_string(),
        format!("Letters: {}.", letters.join(", ")),
    ]
}
