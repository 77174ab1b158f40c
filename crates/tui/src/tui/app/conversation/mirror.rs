//! The mirror of the agent's history: rows appended as messages arrive, a replaced history
//! reusing the rows a stage's report says it kept (so marks, session links, token counts
//! and expansion survive), and the size and token totals. The agent owns the history;
//! this is a copy built from events.

use std::sync::Arc;

use super::{ConversationState, HistRow, SessionRow};
use crate::compact::{Change, StageReport};
use crate::message::Message;
use crate::run::EntryId;
use crate::timeline::lineage::{RowFrom, rows_through, same_history};
use crate::tui::app::tokens::TokenCounter;
use crate::tui::rows::MessageInfo;

/// The message lists before and after a replacement, for its diff.
pub(in crate::tui::app) struct Replaced {
    pub(in crate::tui::app) before: Vec<Arc<MessageInfo>>,
    pub(in crate::tui::app) after: Vec<Arc<MessageInfo>>,
}

impl ConversationState {
    /// A row for `m`, queued for a token count.
    fn new_info(&mut self, m: Message, counter: &mut TokenCounter) -> Arc<MessageInfo> {
        let info = MessageInfo::new(m);
        counter.queue(info.clone());
        self.tokens_pending = true;
        info
    }

    /// Appends `message`, the run's entry `entry`.
    pub(in crate::tui::app) fn append(
        &mut self,
        message: Message,
        entry: EntryId,
        counter: &mut TokenCounter,
    ) {
        let follow_conv = self.model_list.selected + 1 >= self.history.len();
        let follow_sess = self.session_list.selected + 1 >= self.session.len();
        let info = self.new_info(message, counter);
        self.session.push(SessionRow {
            info: info.clone(),
            live: true,
            entry: Some(entry),
        });
        self.history.push(HistRow {
            info,
            session: Some(self.session.len() - 1),
            mark: None,
        });
        if follow_conv {
            self.model_list.selected = self.history.len() - 1;
        }
        if follow_sess {
            self.session_list.selected = self.session.len() - 1;
        }
        // Incremental, so a long session's appends stay O(1): `[a, b]` adds ", " per item.
        let n = self.history.len();
        if let Some(last) = self.history.last() {
            self.chars += last.info.chars + if n > 1 { 2 } else { 0 };
            match last.info.tokens() {
                Some(t) => self.tokens += t,
                None => self.tokens_pending = true,
            }
        }
    }

    pub(in crate::tui::app) fn mirror_equals(&self, history: &[Message]) -> bool {
        same_history(&self.history, hist_message, history)
    }

    /// Replaces the mirror, reusing the rows of equal messages (in order) so their session
    /// links, marks, token counts and expansion survive; marks the rows `report` touched.
    /// Returns the lists before and after, for the change's diff.
    pub(in crate::tui::app) fn replace(
        &mut self,
        new: &[Message],
        report: Option<&StageReport>,
        counter: &mut TokenCounter,
    ) -> Replaced {
        let follow = self.model_list.selected + 1 >= self.history.len();
        let old = std::mem::take(&mut self.history);
        // The report says which rows it kept; text matching is only for a replacement no
        // report describes (a second snip's marker has the first one's text, and matching
        // by text took one for the other). The timeline moves its rows by the same map.
        let map = rows_through(report, &old, hist_message, new);
        let kept: Vec<Option<usize>> = map
            .rows
            .iter()
            .map(|f| match f {
                RowFrom::Kept(i) => Some(*i),
                _ => None,
            })
            .collect();
        // A summary is a message of the session from now on: the full session shows what
        // the model sees, after the messages it replaced.
        let summarized = report.is_some_and(|r| {
            r.changes
                .iter()
                .any(|c| matches!(c, Change::Summarized { .. }))
        });
        let summaries: Vec<bool> = if summarized && map.by_report {
            map.rows.iter().map(|f| *f == RowFrom::New).collect()
        } else {
            Vec::new()
        };
        let mut rows = Vec::with_capacity(new.len());
        for (j, (m, k)) in new.iter().zip(kept).enumerate() {
            match k.and_then(|k| old.get(k)) {
                Some(row) => rows.push(row.clone()),
                None => {
                    let info = self.new_info(m.clone(), counter);
                    let session = summaries.get(j).copied().unwrap_or(false).then(|| {
                        self.session.push(SessionRow {
                            info: info.clone(),
                            live: true,
                            entry: None,
                        });
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
                let at = c.messages().start;
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
        let replaced = Replaced {
            before: old.iter().map(|r| r.info.clone()).collect(),
            after: rows.iter().map(|r| r.info.clone()).collect(),
        };
        self.history = rows;
        if follow {
            self.model_list.selected = self.history.len().saturating_sub(1);
        }
        self.recompute_totals();
        replaced
    }

    pub(in crate::tui::app) fn recompute_totals(&mut self) {
        let n = self.history.len();
        let items: usize = self.history.iter().map(|r| r.info.chars).sum();
        self.chars = 2 + items + 2 * n.saturating_sub(1);
        let mut total = 0;
        let mut pending = false;
        for r in &self.history {
            match r.info.tokens() {
                Some(t) => total += t,
                None => pending = true,
            }
        }
        self.tokens = total;
        self.tokens_pending = pending;
    }
}

/// A mirrored row's message (for `lineage::rows_through`).
fn hist_message(row: &HistRow) -> &Message {
    &row.info.message
}
