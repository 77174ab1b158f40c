//! What the transcripts pane shows for a replayed transcript: the rows of the library's one
//! replay loop (`crate::pipeline_replay`), collected for drawing. A transcript's runs on a dry-run
//! store, so nothing is written; an opened session's (`replay_into`) on a scratch store
//! under the data dir. The clock is at 0, so transcript names never matter. A ctxlab
//! recording's events (refusals, compact-tool calls, settings) go into the same loop, as
//! `ctxlab replay` and the compare view hand them (`replay_recorded_into`).

use crate::compact::{PipelineConfig, StageReport};
use crate::message::Message;
use crate::pipeline_replay::{ReplayOptions, replay as replay_session};
use crate::session::recorded::RecordedEvent;
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
    /// When the transcript ends before a model call (it is saved just before a summary):
    /// what the pipeline would do before that call (a dry run).
    pub next_call: Option<Vec<StageReport>>,
    /// A store error stops the replay; the rows so far stay.
    pub error: Option<String>,
    /// The recorded events this replay could not follow, in words
    /// (`NotApplied::describe`).
    not_applied: Vec<String>,
}

impl Replay {
    /// A replay that could not start, with why.
    pub fn failed(error: String, context_limit: usize) -> Replay {
        Replay {
            error: Some(error),
            context_limit,
            ..Replay::default()
        }
    }

    /// The recorded events this replay could not follow (another strategy than the live
    /// run's), as `ctxlab replay` says them.
    pub fn not_applied(&self) -> &[String] {
        &self.not_applied
    }
}

/// Runs the replay (blocking: the loop runs it as `Work::Replay`). `store` is used only
/// through `dry_run()`.
pub fn replay(transcript: Vec<Message>, config: PipelineConfig, store: &Store) -> Replay {
    replay_into(transcript, config, &store.dry_run())
}

/// `replay`, writing what the pipeline persists into `store` as it would (the opened
/// session's replay hands it a scratch store under the data dir, never a workspace).
pub fn replay_into(transcript: Vec<Message>, config: PipelineConfig, store: &Store) -> Replay {
    replay_recorded_into(transcript, config, Vec::new(), store)
}

/// `replay_into` honouring a recording's events where they happened (a refusal makes the
/// reactive stage run at its call), through the one replay loop the CLI uses.
pub fn replay_recorded_into(
    transcript: Vec<Message>,
    config: PipelineConfig,
    recorded: Vec<RecordedEvent>,
    store: &Store,
) -> Replay {
    let options = ReplayOptions {
        config,
        summary_text: None,
        summarizer: None,
        now_secs: 0,
        recorded,
    };
    let mut out = Replay {
        context_limit: config.context_limit,
        ..Replay::default()
    };
    let result = replay_session(transcript, store, &options, |record| {
        out.turns = record.call;
        for r in &record.reports {
            out.stages.push((record.call, r.clone()));
        }
        out.request_sizes.push(record.estimate_size as u64);
    });
    match result {
        Ok(totals) => {
            out.turns = totals.calls;
            out.final_chars = totals.final_estimate_size;
            out.final_messages = totals.final_messages;
            out.next_call = totals.next_call.map(|c| c.reports);
            out.not_applied = totals.not_applied.iter().map(|n| n.describe()).collect();
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::Stage;
    use crate::message::block;
    use serde_json::json;

    /// A request and `n` bash calls, each answered with `result`.
    fn bash_session(n: usize, result: &str) -> Vec<Message> {
        let mut t = vec![Message::user_text("do it")];
        for i in 0..n {
            t.push(Message::assistant_blocks(vec![block::tool_use(
                format!("t{i}"),
                "bash",
                json!({"command": "ls"}),
            )]));
            t.push(Message::user_blocks(vec![block::tool_result(
                format!("t{i}"),
                result.to_string(),
            )]));
        }
        t
    }

    #[test]
    fn a_long_session_gets_compacted_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let t = bash_session(30, &"x".repeat(3_000));
        let cfg = PipelineConfig {
            context_limit: 20_000,
            ..PipelineConfig::default()
        };
        let r = replay(t, cfg, &store);
        assert_eq!(r.turns, 30);
        assert_eq!(r.request_sizes.len(), 30);
        assert!(r.stages.iter().any(|(_, s)| s.stage == Stage::MicroCompact));
        assert!(!dir.path().join(".transcripts").exists());
        assert!(r.error.is_none());
        // It ends with a tool result: a call is to come, and it is a dry run too.
        assert!(r.next_call.is_some());
        let answered = Message::assistant_blocks(vec![block::text("done")]);
        let mut t2 = vec![Message::user_text("hi"), answered];
        t2.truncate(2);
        assert!(
            replay(t2, cfg, &store).next_call.is_none(),
            "answered: none to come"
        );
    }

    /// A transcript saved just before a summary ends over the limit and before a call:
    /// the replay says compact_history would fire next, and writes nothing for it.
    #[test]
    fn a_transcript_that_ends_before_a_call_says_what_that_call_would_do() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut t = bash_session(6, &"y".repeat(100));
        t.push(Message::assistant_blocks(vec![block::tool_use(
            "big",
            "bash",
            json!({"command": "cat"}),
        )]));
        t.push(Message::user_blocks(vec![block::tool_result(
            "big",
            "z".repeat(30_000),
        )]));
        let cfg = PipelineConfig {
            context_limit: 20_000,
            ..PipelineConfig::default()
        };
        let r = replay(t, cfg, &store);
        assert!(r.stages.is_empty(), "no earlier call was over anything");
        let next = r.next_call.expect("a call is to come");
        let compact = next
            .iter()
            .find(|s| s.stage == Stage::CompactHistory)
            .expect("compact_history fires before it");
        assert!(compact.reason.ends_with("> 20,000"), "{}", compact.reason);
        assert!(!dir.path().join(".transcripts").exists(), "a dry run");
    }
}
