//! What a ctxlab strategy would have left of the history before a compaction, through the
//! one replay loop (`pipeline_replay`), as `ctxlab replay` runs a strategy: the history
//! goes through the strategy's pre-call stages call by call, then a compaction is asked for
//! at its end (with the focus given), and the live history the replay ends with is the
//! fork's: the strategy's summary and what it kept. The summary is `--summary-text`, else
//! the configured model's answer to the strategy's own summary request (`ModelSummary`: the
//! command makes the call, this module calls no model), else the extractive summary; the
//! store is a dry run, so nothing is written anywhere.

use std::sync::{Arc, Mutex};

use super::{ForkError, ForkOptions};
use crate::compact::PipelineConfig;
use crate::compact::summarize::SummaryRequest;
use crate::message::{Message, Role};
use crate::pipeline_replay::{ReplayEvent, ReplayOptions, Summarizer, replay_events};

/// A model's summary for a strategy's summary request (the request's system text and its
/// one user message), made by the front end through the configured provider; Err: why not.
pub type SummaryCall = dyn Fn(&SummaryRequest) -> Result<String, SummaryFailure> + Send + Sync;

/// Why the configured model gave no summary. The provider's error is boxed: this layer
/// may not name the provider's types.
#[derive(Debug, thiserror::Error)]
pub enum SummaryFailure {
    #[error("the model answered with no text")]
    NoText,
    #[error(transparent)]
    Call(Box<dyn std::error::Error + Send + Sync>),
}

/// The configured model's summary call, as `ctxlab fork` hands it in.
#[derive(Clone)]
pub struct ModelSummary(pub Arc<SummaryCall>);

impl std::fmt::Debug for ModelSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelSummary")
    }
}

/// The replay's summarizer over `model`: the first failure is kept for the fork to report
/// (the replay itself has no error for it) and no later call is made.
fn summarizer(model: &ModelSummary, failed: &Arc<Mutex<Option<SummaryFailure>>>) -> Summarizer {
    let (call, failed) = (Arc::clone(&model.0), Arc::clone(failed));
    Summarizer(Arc::new(move |request: &SummaryRequest| {
        let Ok(mut slot) = failed.lock() else {
            return String::new();
        };
        if slot.is_some() {
            return String::new();
        }
        match call(request) {
            Ok(text) => text,
            Err(e) => {
                *slot = Some(e);
                String::new()
            }
        }
    }))
}
use crate::session::recorded::{CompactBy, RecordedEvent, RecordedKind};
use crate::store::Store;

/// The live history a replay of `history` under `config` ends with after a compaction
/// asked for at its end.
pub fn left_by(
    history: Vec<Message>,
    config: PipelineConfig,
    options: &ForkOptions,
) -> Result<Vec<Message>, ForkError> {
    let calls = history
        .iter()
        .filter(|m| m.role_kind() == Role::Assistant)
        .count();
    let compact = RecordedEvent {
        at: history.len(),
        call: calls + 1,
        kind: RecordedKind::Compact {
            focus: options.focus.clone(),
            by: CompactBy::User,
        },
    };
    let failed = Arc::new(Mutex::new(None));
    let replay = ReplayOptions {
        config,
        summary_text: options.summary_text.clone(),
        summarizer: options.model.as_ref().map(|m| summarizer(m, &failed)),
        now_secs: options.now_ms / 1000,
        recorded: vec![compact],
    };
    let scratch = tempfile::tempdir().map_err(|e| ForkError::Replay(e.to_string()))?;
    let store = Store::new(scratch.path()).dry_run();
    let mut end = Vec::new();
    let totals = replay_events(history, &store, &replay, |event| {
        if let ReplayEvent::End(live) = event {
            end = live.to_vec();
        }
    })
    .map_err(|e| ForkError::Replay(e.to_string()))?;
    if let Some(why) = failed.lock().ok().and_then(|mut f| f.take()) {
        return Err(ForkError::SummaryCall(why));
    }
    if let Some(why) = totals.not_applied.first() {
        return Err(ForkError::NoSummary(why.describe()));
    }
    Ok(end)
}
