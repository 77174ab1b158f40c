//! Token counting, owned here: the tokenizer once it is built, the rows waiting for a count
//! (the conversation's, the timeline's rewound request, a transcript opened before the
//! tokenizer was ready) and the batch a `Work::CountTokens` job is counting. The tokenizer
//! never runs on the UI task: `App` hands batches out as jobs and takes the counts back in
//! `Done::TokensCounted` (`jobs.rs`).

use std::collections::VecDeque;
use std::sync::Arc;

use tiktoken_rs::CoreBPE;

use crate::tui::rows::MessageInfo;
use crate::tui::work::{Rows, Tokenizer, Work};

#[derive(Default)]
pub struct TokenCounter {
    tokenizer: Option<&'static CoreBPE>,
    /// Rows waiting for a count.
    queue: VecDeque<Arc<MessageInfo>>,
    /// The rows a `CountTokens` job is counting (one batch at a time).
    live: Option<Rows>,
}

/// What `TokenCounter::next_batch` found.
pub(super) enum Batch {
    /// Nothing to do now (no tokenizer, a batch running, or nothing queued).
    Idle,
    /// Every queued row was counted already or dropped: totals may be read again.
    Settled,
    /// Count these.
    Count(Work),
}

impl TokenCounter {
    pub(super) fn tokenizer(&self) -> Option<&'static CoreBPE> {
        self.tokenizer
    }

    pub(super) fn set_tokenizer(&mut self, bpe: &'static CoreBPE) {
        self.tokenizer = Some(bpe);
    }

    /// Whether a tick may change a count shown (a batch running or waiting).
    pub(super) fn busy(&self) -> bool {
        self.live.is_some() || (self.tokenizer.is_some() && !self.queue.is_empty())
    }

    /// Queues a row for a count.
    pub(super) fn queue(&mut self, info: Arc<MessageInfo>) {
        self.queue.push_back(info);
    }

    pub(super) fn queue_all(&mut self, rows: &[Arc<MessageInfo>]) {
        self.queue.extend(rows.iter().cloned());
    }

    /// The queued rows as one job, when the tokenizer is ready and no batch is running.
    pub(super) fn next_batch(&mut self) -> Batch {
        let Some(bpe) = self.tokenizer else {
            return Batch::Idle;
        };
        if self.live.is_some() || self.queue.is_empty() {
            return Batch::Idle;
        }
        // A row dropped from every list needs no count, nor one counted already.
        let rows: Vec<Arc<MessageInfo>> = self
            .queue
            .drain(..)
            .filter(|info| Arc::strong_count(info) > 1 && info.tokens().is_none())
            .collect();
        if rows.is_empty() {
            return Batch::Settled;
        }
        let rows = Arc::new(rows);
        self.live = Some(rows.clone());
        Batch::Count(Work::CountTokens {
            rows,
            from: 0,
            tokenizer: Tokenizer(bpe),
        })
    }

    /// The job counting `rows` from `from`, when the tokenizer is ready.
    pub(super) fn work(&self, rows: Rows, from: usize) -> Option<Work> {
        self.tokenizer.map(|bpe| Work::CountTokens {
            rows,
            from,
            tokenizer: Tokenizer(bpe),
        })
    }

    /// Whether `rows` is the batch running.
    pub(super) fn is_live(&self, rows: &Rows) -> bool {
        self.live.as_ref().is_some_and(|l| Arc::ptr_eq(l, rows))
    }

    /// The running batch is counted.
    pub(super) fn live_done(&mut self) {
        self.live = None;
    }
}
