//! Answers cut at their output limit (`AgentEvent::AnswerCut`): which rows of the mirror
//! they are, so the conversation marks them for as long as they are shown, and whether the
//! last turn ended that way, so the status line says so instead of a plain `idle`.

use super::App;
use crate::tui::rows::MessageInfo;

impl App {
    /// Remembers that the history's message `index` stopped at `max_tokens`.
    pub(super) fn answer_was_cut(&mut self, max_tokens: u32, index: usize) {
        self.last_turn_cut = Some(max_tokens);
        if let Some(row) = self.history.get(index) {
            self.cut_answers.insert(row.info.uid, max_tokens);
        }
    }

    /// The limit the last turn's answer was cut at; `None` once the next turn starts.
    pub fn last_turn_cut(&self) -> Option<u32> {
        self.last_turn_cut
    }

    /// A row's note with the cut said first when its answer was cut: the reader must
    /// know the text is incomplete before reading it.
    pub(super) fn cut_note(&self, info: &MessageInfo, note: Option<String>) -> Option<String> {
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
}
