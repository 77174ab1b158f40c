//! The mirror of the agent's history: rows appended as messages arrive, a replaced history
//! reusing the rows a stage's report says it kept (so marks, session links, token counts
//! and expansion survive), the before/after lists kept for diffs, the size and token totals, and the
//! events pane's rows. The agent owns the history; this is a copy built from events.

use std::sync::Arc;

use super::{App, ConvView, Effect, EventKind, HistRow, SessionRow, StageDiff};
use crate::compact::{Change, StageReport};
use crate::message::Message;
use crate::timeline::lineage::{RowFrom, row_map};
use crate::tui::rows::MessageInfo;
use crate::tui::work::{Tokenizer, Work};

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
        // The timeline took the event first: this message is its newest session entry.
        let entry = self.timeline.session.len().checked_sub(1);
        self.session.push(SessionRow::appended(info.clone(), entry));
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
        // The report says which rows it kept; text matching is only for a replacement no
        // report describes (a second snip's marker has the first one's text, and matching
        // by text took one for the other).
        let kept: Vec<Option<usize>> = match report.and_then(row_map).filter(|m| {
            m.len() == new.len() && report.is_some_and(|r| r.messages_before == old.len())
        }) {
            Some(map) => map
                .iter()
                .map(|f| match f {
                    RowFrom::Kept(i) => Some(*i),
                    _ => None,
                })
                .collect(),
            None => {
                let mut j = 0;
                new.iter()
                    .map(|m| {
                        let size = m.estimate_size();
                        let found = (j..old.len())
                            .find(|&k| old[k].info.chars == size && old[k].info.message == *m);
                        if let Some(k) = found {
                            j = k + 1;
                        }
                        found
                    })
                    .collect()
            }
        };
        // A summary is a message of the session from now on: the full session shows what
        // the model sees, after the messages it replaced.
        let summaries: Vec<bool> = match report {
            Some(r)
                if r.changes
                    .iter()
                    .any(|c| matches!(c, Change::Summarized { .. })) =>
            {
                row_map(r)
                    .filter(|m| m.len() == new.len())
                    .map(|m| m.iter().map(|f| *f == RowFrom::New).collect())
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let mut rows = Vec::with_capacity(new.len());
        for (j, (m, k)) in new.iter().zip(kept).enumerate() {
            match k.and_then(|k| old.get(k)) {
                Some(row) => rows.push(row.clone()),
                None => {
                    let info = self.new_info(m.clone());
                    let session = summaries.get(j).copied().unwrap_or(false).then(|| {
                        self.session.push(SessionRow::summary(info.clone()));
                        self.session.len() - 1
                    });
                    rows.push(HistRow {
                        info,
                        session,
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
        let diff = self.events.push_diff(StageDiff {
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
        diff
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

    /// Hands the queued rows to a counting job (`Work::CountTokens`) when none is running:
    /// the tokenizer never runs on the UI task, however long a message is. The counts come
    /// back as `Done::TokensCounted` (`jobs.rs`).
    pub(super) fn count_tokens(&mut self) -> Vec<Effect> {
        let Some(bpe) = self.tokenizer else {
            return Vec::new();
        };
        if self.live_count.is_some() || self.token_queue.is_empty() {
            return Vec::new();
        }
        // A row dropped from every list needs no count, nor one counted already.
        let rows: Vec<Arc<MessageInfo>> = self
            .token_queue
            .drain(..)
            .filter(|info| Arc::strong_count(info) > 1 && info.tokens().is_none())
            .collect();
        if rows.is_empty() {
            self.recompute_totals();
            return Vec::new();
        }
        let rows = Arc::new(rows);
        self.live_count = Some(rows.clone());
        vec![Effect::Work(Work::CountTokens {
            rows,
            from: 0,
            tokenizer: Tokenizer(bpe),
        })]
    }

    pub(super) fn push_event(&mut self, kind: EventKind) {
        self.events.push(kind, self.tick);
        self.fix_scroll();
    }

    pub(super) fn follow_streaming(&mut self) {
        if self.conv_view == ConvView::Model && self.conv.selected + 1 >= self.history.len() {
            self.fix_scroll();
        }
    }
}
