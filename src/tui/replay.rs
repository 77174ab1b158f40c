//! Replays a saved transcript through the pipeline with the current thresholds, turn by
//! turn, on a dry-run store so nothing is written. Before each assistant message the
//! pre-call stages run on the prefix, as the agent would have run them before that model
//! call; a pending summary is finished with the extractive summary. Pure computation: no
//! terminal, no clock (time is a fixed 0 so transcript names never matter).

use crate::compact::summary::{extractive_summary_from_request, latest_request};
use crate::compact::{Pipeline, PipelineConfig, StageReport, estimate_size};
use crate::message::Message;
use crate::store::Store;

/// What a replay found.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Stages that changed something, in order, with the turn (assistant message) they ran
    /// before.
    pub stages: Vec<(usize, StageReport)>,
    /// The request size (chars) at each model call, for the sparkline.
    pub request_sizes: Vec<u64>,
    pub turns: usize,
    pub final_chars: usize,
    pub final_messages: usize,
    pub context_limit: usize,
    /// A store error stops the replay; the rows so far stay.
    pub error: Option<String>,
}

/// Runs the replay. `store` is used only through `dry_run()`.
pub fn replay(transcript: &[Message], config: PipelineConfig, store: &Store) -> Replay {
    let pipeline = Pipeline::new(config);
    let dry = store.dry_run();
    let mut out = Replay {
        context_limit: config.context_limit,
        ..Replay::default()
    };
    let mut history: Vec<Message> = Vec::with_capacity(transcript.len());
    for message in transcript {
        if message.role() == "assistant" {
            out.turns += 1;
            let request = latest_request(&history).unwrap_or_default();
            match pipeline.pre_call(&mut history, &dry, 0) {
                Ok(pre) => {
                    for r in pre.reports.into_iter().filter(|r| r.changed) {
                        out.stages.push((out.turns, r));
                    }
                    if let Some(pending) = pre.pending {
                        let summary = extractive_summary_from_request(&pending.request().user_text);
                        let (new_history, report) = pending.finish(&[summary], &request);
                        history = new_history;
                        out.stages.push((out.turns, report));
                    }
                }
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
            out.request_sizes.push(estimate_size(&history) as u64);
        }
        history.push(message.clone());
    }
    out.final_chars = estimate_size(&history);
    out.final_messages = history.len();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::Stage;
    use crate::message::block;
    use serde_json::json;

    #[test]
    fn a_long_session_gets_compacted_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut t = vec![Message::user_text("do it")];
        for i in 0..30 {
            t.push(Message::assistant_blocks(vec![block::tool_use(
                format!("t{i}"),
                "bash",
                json!({"command": "ls"}),
            )]));
            t.push(Message::user_blocks(vec![block::tool_result(
                format!("t{i}"),
                "x".repeat(3_000),
            )]));
        }
        let cfg = PipelineConfig {
            context_limit: 20_000,
            ..PipelineConfig::default()
        };
        let r = replay(&t, cfg, &store);
        assert_eq!(r.turns, 30);
        assert_eq!(r.request_sizes.len(), 30);
        assert!(r.stages.iter().any(|(_, s)| s.stage == Stage::MicroCompact));
        assert!(!dir.path().join(".transcripts").exists());
        assert!(r.error.is_none());
    }
}
