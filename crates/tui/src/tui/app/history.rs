//! `App`'s side of the mirror: it routes the run's appended and replaced histories to the
//! conversation (`conversation::mirror`), keeps each change's before/after lists in the
//! events pane for its diff, hands rows to the token counter and keeps lists on screen.

use super::tokens::Batch;
use super::{App, Effect, EventKind, StageDiff};
use crate::compact::StageReport;
use crate::message::Message;
use crate::run::EntryId;
use crate::tui::event_rows::DiffId;

impl App {
    /// Appends `message`, which the run named `entry` (the same id the timeline files it
    /// under, whichever took the fact first).
    pub(super) fn append(&mut self, message: Message, entry: EntryId) {
        self.conversation.append(message, entry, &mut self.tokens);
        self.fix_scroll();
    }

    /// Replaces the mirror (see `ConversationState::replace`); returns the id of the diff
    /// kept for the change.
    pub(super) fn replace_history(
        &mut self,
        new: &[Message],
        report: Option<&StageReport>,
        title: String,
    ) -> DiffId {
        let r = self.conversation.replace(new, report, &mut self.tokens);
        let diff = self.events.push_diff(StageDiff {
            title,
            before: r.before,
            after: r.after,
        });
        self.fix_scroll();
        diff
    }

    /// Hands the queued rows to a counting job (`Work::CountTokens`) when none is running:
    /// the tokenizer never runs on the UI task, however long a message is. The counts come
    /// back as `Done::TokensCounted` (`jobs.rs`).
    pub(super) fn count_tokens(&mut self) -> Vec<Effect> {
        match self.tokens.next_batch() {
            Batch::Idle => Vec::new(),
            Batch::Settled => {
                self.conversation.recompute_totals();
                Vec::new()
            }
            Batch::Count(work) => vec![Effect::Work(work)],
        }
    }

    pub(super) fn push_event(&mut self, kind: EventKind) {
        self.events.push(kind, self.screen.tick);
        self.fix_scroll();
    }

    pub(super) fn follow_streaming(&mut self) {
        if self.conversation.follows_newest() {
            self.fix_scroll();
        }
    }
}
