//! A `ctxlab proxy` capture followed as the proxy appends its exchanges: each line goes
//! through the capture fold the whole-file reader uses (`session::capture::fold`), and what
//! it added is reported once: a compaction the agent made between two requests, the
//! request's new messages and tool calls, then the call with the usage of its response.
//! Side requests (other tools, a quota probe, a title), other conversations, the agent's
//! compaction requests, refused requests and exchanges that are no model call are reported
//! as skipped, never as calls: they stay off the context curve.

use std::collections::BTreeMap;

use super::live_item::{
    CALLS_TAIL, FORGET_BATCH, LiveCall, LiveItem, SeenToolIds, WHOLE_TAIL, report_messages,
};
use crate::session::capture::CaptureFold;
use crate::session::capture::fold::{
    COMPACTION_REQUEST, NOT_A_CALL, OTHER_CONVERSATION, REFUSED, SIDE_REQUEST,
};
use crate::session::capture::parse_line;
use crate::session::model::Session;

/// A capture read line by line, and what of it was reported.
#[derive(Default)]
pub(super) struct LiveCapture {
    fold: CaptureFold,
    calls: usize,
    messages: usize,
    compactions: usize,
    warnings: usize,
    /// Side requests and other exchanges counted, as last reported.
    skipped: BTreeMap<&'static str, usize>,
    tool_ids: SeenToolIds,
    /// Forget nothing (a test compares the items with and without forgetting).
    #[cfg(test)]
    pub(super) keep_all: bool,
}

impl LiveCapture {
    pub(super) fn session(&self) -> &Session {
        self.fold.session()
    }

    /// Folds one whole line and appends what it added to `out`. The tail hands over only
    /// whole lines, so a line is never the half the proxy is still writing.
    pub(super) fn read(&mut self, number: usize, text: &str, out: &mut Vec<LiveItem>) {
        let lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        for (i, line) in lines {
            let number = number + i;
            self.fold.push_parsed(number, parse_line(line), false);
            self.report(number, out);
            self.forget_reported();
        }
    }

    /// Drops the messages and calls reported behind the newest few (issue 39, item 5; the
    /// window and the batch are the agents' followers', `watch::live_item`): a
    /// capture's follower then holds a window, the compactions and the counts, not every
    /// message of the conversation. Indices stay the whole file's (`CaptureFold::forget`),
    /// so every item reported is the one a follower that forgot nothing would report.
    fn forget_reported(&mut self) {
        #[cfg(test)]
        if self.keep_all {
            return;
        }
        let messages = self
            .messages
            .saturating_sub(WHOLE_TAIL)
            .saturating_sub(self.fold.forgotten());
        let calls = self.calls.saturating_sub(CALLS_TAIL);
        if messages >= FORGET_BATCH || calls >= FORGET_BATCH {
            let before = self.fold.session().calls.len();
            self.fold.forget(messages, calls);
            self.calls -= before - self.fold.session().calls.len();
        }
    }

    fn report(&mut self, number: usize, out: &mut Vec<LiveItem>) {
        let base = self.fold.forgotten();
        let s = self.fold.session();
        for what in [
            SIDE_REQUEST,
            OTHER_CONVERSATION,
            COMPACTION_REQUEST,
            REFUSED,
            NOT_A_CALL,
        ] {
            let n = s.skipped.get(what).copied().unwrap_or(0);
            let before = self.skipped.get(what).copied().unwrap_or(0);
            if n > before {
                out.extend((before..n).map(|_| LiveItem::Skipped {
                    line: number,
                    what: what.to_string(),
                }));
                self.skipped.insert(what, n);
            }
        }
        out.extend(
            s.warnings[self.warnings..]
                .iter()
                .cloned()
                .map(LiveItem::Warning),
        );
        self.warnings = s.warnings.len();
        // In session order: the messages before each new compaction (the previous call's
        // answer, taken from its response when no request holds it), the compaction, the
        // messages after it.
        for (index, c) in s.compactions.iter().enumerate().skip(self.compactions) {
            self.messages = report_messages(
                s,
                base,
                self.messages,
                c.at,
                &mut self.tool_ids,
                &mut 0,
                out,
            );
            out.push(LiveItem::Compaction {
                index,
                compaction: Box::new(c.clone()),
                update: false,
                at: c.line,
            });
        }
        self.compactions = s.compactions.len();
        self.messages = report_messages(
            s,
            base,
            self.messages,
            base + s.messages.len(),
            &mut self.tool_ids,
            &mut 0,
            out,
        );
        for c in &s.calls[self.calls..] {
            out.push(LiveItem::Call(LiveCall::of(c, false)));
        }
        self.calls = s.calls.len();
    }
}
