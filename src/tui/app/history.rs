//! The mirror of the agent's history: rows appended as messages arrive, a replaced history
//! reusing the rows of equal messages (so marks, session links, token counts and expansion
//! survive), the before/after lists kept for diffs, the size and token totals, and the
//! events pane's rows. The agent owns the history; this is a copy built from events.

use std::sync::Arc;

use super::{App, ConvView, EventKind, EventRow, HistRow, SessionRow, StageDiff};
use crate::compact::{Change, StageReport};
use crate::message::Message;
use crate::tui::rows::MessageInfo;

/// How many chars the tokenizer may chew per tick, so counting never stalls the UI.
const TOKEN_CHARS_PER_TICK: usize = 300_000;

impl App {
    /// A row for `m`, queued for the tokenizer.
    pub(super) fn new_info(&mut self, m: Message) -> Arc<MessageInfo> {
        let info = MessageInfo::new(m);
        self.token_queue.push_back(info.clone());
        self.tokens_pending = true;
        info
    }

    pub(super) fn append(&mut self, message: Message) {
        let follow_conv = self.conv.selected + 1 >= self.history.len();
        let follow_sess = self.sess.selected + 1 >= self.session.len();
        let info = self.new_info(message);
        self.session.push(SessionRow {
            info: info.clone(),
            live: true,
        });
        self.history.push(HistRow {
            info,
            session: Some(self.session.len() - 1),
            mark: None,
        });
        if follow_conv {
            self.conv.selected = self.history.len() - 1;
        }
        if follow_sess {
            self.sess.selected = self.session.len() - 1;
        }
        // Incremental, so a long session's appends stay O(1): `[a, b]` adds ", " per item.
        let n = self.history.len();
        if let Some(last) = self.history.last() {
            self.history_chars += last.info.chars + if n > 1 { 2 } else { 0 };
            match last.info.tokens() {
                Some(t) => self.history_tokens += t,
                None => self.tokens_pending = true,
            }
        }
        self.fix_scroll();
    }

    pub(super) fn mirror_equals(&self, history: &[Message]) -> bool {
        history.len() == self.history.len()
            && history
                .iter()
                .zip(&self.history)
                .all(|(m, r)| r.info.chars == m.estimate_size() && r.info.message == *m)
    }

    /// Replaces the mirror, reusing the rows of equal messages (in order) so their session
    /// links, marks, token counts and expansion survive; marks the rows `report` touched.
    /// Returns the index of the diff kept for the change.
    pub(super) fn replace_history(
        &mut self,
        new: &[Message],
        report: Option<&StageReport>,
        title: String,
    ) -> usize {
        let follow = self.conv.selected + 1 >= self.history.len();
        let old = std::mem::take(&mut self.history);
        let mut rows = Vec::with_capacity(new.len());
        let mut j = 0;
        for m in new {
            let size = m.estimate_size();
            let found =
                (j..old.len()).find(|&k| old[k].info.chars == size && old[k].info.message == *m);
            match found {
                Some(k) => {
                    rows.push(old[k].clone());
                    j = k + 1;
                }
                None => {
                    let info = self.new_info(m.clone());
                    rows.push(HistRow {
                        info,
                        session: None,
                        mark: None,
                    });
                }
            }
        }
        if let Some(report) = report {
            for c in &report.changes {
                let at = match c {
                    Change::Persisted { message, .. }
                    | Change::Placeholder { message, .. }
                    | Change::Saved { message, .. } => *message,
                    Change::Snipped { head_end, .. } | Change::Archived { head_end, .. } => {
                        *head_end
                    }
                    Change::Summarized { .. } => 0,
                };
                if let Some(r) = rows.get_mut(at) {
                    r.mark = Some(report.stage);
                }
            }
        }
        for r in &old {
            if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                s.live = false;
            }
        }
        for r in &rows {
            if let Some(s) = r.session.and_then(|s| self.session.get_mut(s)) {
                s.live = true;
            }
        }
        self.diffs.push(StageDiff {
            title,
            before: old.iter().map(|r| r.info.clone()).collect(),
            after: rows.iter().map(|r| r.info.clone()).collect(),
        });
        self.history = rows;
        if follow {
            self.conv.selected = self.history.len().saturating_sub(1);
        }
        self.recompute_totals();
        self.fix_scroll();
        self.diffs.len() - 1
    }

    pub(super) fn recompute_totals(&mut self) {
        let n = self.history.len();
        let items: usize = self.history.iter().map(|r| r.info.chars).sum();
        self.history_chars = 2 + items + 2 * n.saturating_sub(1);
        let mut total = 0;
        let mut pending = false;
        for r in &self.history {
            match r.info.tokens() {
                Some(t) => total += t,
                None => pending = true,
            }
        }
        self.history_tokens = total;
        self.tokens_pending = pending;
    }

    /// Counts queued rows' tokens, at most `TOKEN_CHARS_PER_TICK` chars per call. The live
    /// history grows a message at a time, so this stays small; a whole transcript is
    /// counted off the UI task instead (`Work::CountTokens`).
    pub(super) fn count_some_tokens(&mut self) {
        let Some(bpe) = self.tokenizer else {
            return;
        };
        let mut budget = TOKEN_CHARS_PER_TICK;
        let mut counted = false;
        while budget > 0 {
            let Some(info) = self.token_queue.pop_front() else {
                break;
            };
            // A row dropped from every list needs no count.
            if Arc::strong_count(&info) == 1 {
                continue;
            }
            info.count_tokens(|text| bpe.encode_ordinary(text).len());
            budget = budget.saturating_sub(info.chars);
            counted = true;
        }
        if counted {
            self.recompute_totals();
        }
    }

    pub(super) fn push_event(&mut self, kind: EventKind) {
        let visible_before = self.visible_events().len();
        let follow = self.events_list.selected + 1 >= visible_before;
        self.event_seq += 1;
        self.events.push(EventRow {
            seq: self.event_seq,
            tick: self.tick,
            kind,
        });
        if follow {
            self.events_list.selected = self.visible_events().len().saturating_sub(1);
        }
        self.fix_scroll();
    }

    pub(super) fn follow_streaming(&mut self) {
        if self.conv_view == ConvView::Model && self.conv.selected + 1 >= self.history.len() {
            self.fix_scroll();
        }
    }
}
