//! What a ctxlab strategy would have left of the history before a compaction, through the
//! one replay loop (`pipeline_replay`), as `ctxlab replay` runs a strategy: the history
//! goes through the strategy's pre-call stages call by call, then a compaction is asked for
//! at its end (with the focus given), and the live history the replay ends with is the
//! fork's: the strategy's summary and what it kept. The summary is `--summary-text` or
//! the extractive summary (no model is called); the store is a dry run, so nothing is
//! written anywhere.

use super::{ForkError, ForkOptions};
use crate::compact::PipelineConfig;
use crate::message::{Message, Role};
use crate::pipeline_replay::{ReplayEvent, ReplayOptions, replay_events};
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
    let replay = ReplayOptions {
        config,
        summary_text: options.summary_text.clone(),
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
    if let Some(why) = totals.not_applied.first() {
        return Err(ForkError::NoSummary(why.describe()));
    }
    Ok(end)
}
