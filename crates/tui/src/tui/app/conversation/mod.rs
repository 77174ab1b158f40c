//! The conversation's state, owned here: the mirror of the agent's history (what the model
//! sees) and the full session as appended, which of the two the pane shows and each one's
//! selection, the text streaming in, the size and token totals, the API's usage figures
//! and the answers cut at their output limit. `App` routes the run's facts to these methods;
//! `mirror` grows and replaces the rows; `draw.rs` and `screen::gauge` draw it.

pub mod draw;
mod mirror;

use std::collections::HashMap;
use std::sync::Arc;

use super::{ConvView, ListState};
use crate::compact::Stage;
use crate::run::EntryId;
use crate::tui::rows::MessageInfo;

/// A row of the mirrored history.
#[derive(Debug, Clone)]
pub struct HistRow {
    info: Arc<MessageInfo>,
    /// Index into the full session's rows when this row is an appended message.
    session: Option<usize>,
    /// The last stage that touched this row.
    mark: Option<Stage>,
}

impl HistRow {
    pub fn info(&self) -> &Arc<MessageInfo> {
        &self.info
    }

    /// The last stage that touched this row.
    pub fn mark(&self) -> Option<Stage> {
        self.mark
    }
}

/// A message as it was appended (or a summary a compaction put in), and whether the
/// model still sees it.
#[derive(Debug, Clone)]
pub struct SessionRow {
    info: Arc<MessageInfo>,
    live: bool,
    /// The run's id of the appended message (its index in `Timeline::session`, where its
    /// fate is read); None for a summary, which is no entry of the run.
    entry: Option<EntryId>,
}

impl SessionRow {
    pub fn info(&self) -> &Arc<MessageInfo> {
        &self.info
    }

    /// Whether the model still sees it.
    pub fn live(&self) -> bool {
        self.live
    }

    /// Its index in `Timeline::session` (the run's `EntryId`); None for a summary.
    pub fn entry(&self) -> Option<usize> {
        self.entry.map(EntryId::index)
    }
}

#[derive(Debug, Clone)]
pub struct ConversationState {
    history: Vec<HistRow>,
    session: Vec<SessionRow>,
    view: ConvView,
    /// The model's view's selection and expansion.
    model_list: ListState,
    /// The full session's.
    session_list: ListState,
    /// Text streamed for the assistant message not yet appended.
    streaming: String,
    /// The history's size as the JSON list the pipeline measures (`[]` when empty).
    chars: usize,
    tokens: usize,
    /// Some rows are not counted yet (tokenizer not ready or still counting).
    tokens_pending: bool,
    api_input_tokens: Option<u64>,
    /// The part of `api_input_tokens` the server's prompt cache served.
    api_cached_tokens: Option<u64>,
    /// Request size (chars) at each non-summary `RequestSent`.
    request_sizes: Vec<u64>,
    /// Input tokens the API reported for the last summary call.
    summary_input_tokens: Option<u64>,
    /// Rows (`MessageInfo::uid`) whose answer stopped at `max_tokens`, with that limit.
    cut_answers: HashMap<u64, u32>,
    /// The limit the last turn's answer was cut at, until the next turn starts.
    last_turn_cut: Option<u32>,
}

impl Default for ConversationState {
    fn default() -> Self {
        ConversationState {
            history: Vec::new(),
            session: Vec::new(),
            view: ConvView::Model,
            model_list: ListState::default(),
            session_list: ListState::default(),
            streaming: String::new(),
            chars: 2,
            tokens: 0,
            tokens_pending: false,
            api_input_tokens: None,
            api_cached_tokens: None,
            request_sizes: Vec::new(),
            summary_input_tokens: None,
            cut_answers: HashMap::new(),
            last_turn_cut: None,
        }
    }
}

impl ConversationState {
    // ----- what the panes read -----

    /// The history the model sees now, one row per message.
    pub fn history(&self) -> &[HistRow] {
        &self.history
    }

    /// Every message appended (and every summary put in), oldest first.
    pub fn session(&self) -> &[SessionRow] {
        &self.session
    }

    /// Which list the pane shows.
    pub fn view(&self) -> ConvView {
        self.view
    }

    /// The selection of the list `view`.
    pub fn list(&self, view: ConvView) -> &ListState {
        match view {
            ConvView::Model => &self.model_list,
            ConvView::Session => &self.session_list,
        }
    }

    /// Text streamed for the assistant message not appended yet.
    pub fn streaming(&self) -> &str {
        &self.streaming
    }

    /// The history's size in chars, as the pipeline measures it.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// The history's tokens counted so far.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// Whether some rows are not counted yet.
    pub fn tokens_pending(&self) -> bool {
        self.tokens_pending
    }

    /// The input tokens the API reported for the last main call, and the cached part.
    pub fn api_tokens(&self) -> (Option<u64>, Option<u64>) {
        (self.api_input_tokens, self.api_cached_tokens)
    }

    /// The size (chars) of each main request sent, oldest first.
    pub fn request_sizes(&self) -> &[u64] {
        &self.request_sizes
    }

    /// Input tokens the API reported for the last summary call.
    pub fn summary_input_tokens(&self) -> Option<u64> {
        self.summary_input_tokens
    }

    /// The limit the last turn's answer was cut at; `None` once the next turn starts.
    pub fn last_turn_cut(&self) -> Option<u32> {
        self.last_turn_cut
    }

    /// A row's note with the cut said first when its answer was cut: the reader must
    /// know the text is incomplete before reading it.
    pub fn cut_note(&self, info: &MessageInfo, note: Option<String>) -> Option<String> {
        let Some(limit) = self.cut_answers.get(&info.uid) else {
            return note;
        };
        let cut = format!(
            "✂ cut at max_tokens {}",
            crate::util::group_digits(*limit as usize)
        );
        Some(match note {
            Some(n) => format!("{cut}; {n}"),
            None => cut,
        })
    }

    /// Whether the model's view is shown and follows its newest row.
    pub fn follows_newest(&self) -> bool {
        self.view == ConvView::Model && self.model_list.selected + 1 >= self.history.len()
    }

    // ----- the view's updates -----

    pub(in crate::tui::app) fn list_mut(&mut self, view: ConvView) -> &mut ListState {
        match view {
            ConvView::Model => &mut self.model_list,
            ConvView::Session => &mut self.session_list,
        }
    }

    /// Shows list `view` with row `i` selected.
    pub(in crate::tui::app) fn show(&mut self, view: ConvView, i: usize) {
        self.view = view;
        self.list_mut(view).selected = i;
    }

    pub(in crate::tui::app) fn toggle_view(&mut self) {
        self.view = match self.view {
            ConvView::Model => ConvView::Session,
            ConvView::Session => ConvView::Model,
        };
    }

    /// The model's view selects its newest row again.
    pub(in crate::tui::app) fn select_newest(&mut self) {
        self.model_list.selected = self.history.len().saturating_sub(1);
    }

    /// Keeps both lists' selections in range and on a `w` x `h` screen.
    pub(in crate::tui::app) fn fit(&mut self, w: usize, h: usize) {
        let history = &self.history;
        self.model_list
            .fit_rows(history.len(), |i| history.get(i).map(|r| &*r.info), w, h);
        let session = &self.session;
        self.session_list
            .fit_rows(session.len(), |i| session.get(i).map(|r| &*r.info), w, h);
    }

    // ----- the agent's events -----

    /// A turn starts: nothing streams yet, no answer of it was cut.
    pub(in crate::tui::app) fn turn_started(&mut self) {
        self.last_turn_cut = None;
        self.streaming.clear();
    }

    pub(in crate::tui::app) fn stream(&mut self, text: &str) {
        self.streaming.push_str(text);
    }

    pub(in crate::tui::app) fn clear_streaming(&mut self) {
        self.streaming.clear();
    }

    /// A request of `chars` went out; `summary`: it is a summary request (the run says
    /// which, `crate::run::CallRef`).
    pub(in crate::tui::app) fn request_sent(&mut self, summary: bool, chars: usize) {
        if !summary {
            self.request_sizes.push(chars as u64);
        }
    }

    /// The API's input tokens for a model call, and the cached part.
    pub(in crate::tui::app) fn call_usage(&mut self, tokens: u64, cached: Option<u64>) {
        self.api_input_tokens = Some(tokens);
        self.api_cached_tokens = cached;
    }

    /// The API's input tokens for a summary request, kept apart from the calls'.
    pub(in crate::tui::app) fn summary_usage(&mut self, tokens: u64) {
        self.summary_input_tokens = Some(tokens);
    }

    pub(in crate::tui::app) fn turn_done(&mut self) {
        self.streaming.clear();
    }

    /// Remembers that the history's message `index` stopped at `max_tokens`.
    pub(in crate::tui::app) fn answer_was_cut(&mut self, max_tokens: u32, index: usize) {
        self.last_turn_cut = Some(max_tokens);
        if let Some(row) = self.history.get(index) {
            self.cut_answers.insert(row.info.uid, max_tokens);
        }
    }
}
