//! `ctxlab pipeline` as a library function (docs/pipeline.md, "ctxlab pipeline"): run one
//! strategy's stages on a
//! history read from a file and describe every step as JSON, without a model. Each lesson
//! version prints the shape its recorded cases have (docs/strategies.md); the JSON itself
//! is written in `pipeline/shape.rs`.
//!
//! The probes of the summarizing stages run against a dry-run store, which sees the
//! workspace as it stood after the last stage but writes nothing: each probe therefore
//! reports the names it would have used, and the real workspace is left as the stages left
//! it.

use std::path::Path;

use serde_json::Value;

use crate::compact::{CompactTrigger, Pipeline, PipelineConfig, Stage, Strategy};
// The input format is a session format: it lives with the session readers, and this
// command (like `replay`) reads through them. Re-exported for the callers of this command.
pub use crate::session::history_input::{
    HistoryInput, InputError, history_input_from_value, parse_history_input,
};
use crate::store::{Store, StoreError};

mod shape;

use shape::Shape;

/// Runs the strategy's stages on `workspace`, then its summarizing probes, and returns the
/// JSON object of its recorded shape. `now` pins the clock for transcript names (and makes
/// s08-latest count its transcripts 1, 2, 3 instead of drawing random ids); None: the
/// current time.
pub fn pipeline_report(
    input: HistoryInput,
    workspace: &Path,
    config: PipelineConfig,
    now: Option<u64>,
    summary_text: Option<&str>,
) -> Result<Value, StoreError> {
    let mut pipeline = Pipeline::new(config);
    if now.is_some() {
        pipeline = pipeline.with_counter_ids();
    }
    let now_secs = now.unwrap_or_else(crate::util::unix_now);
    let store = Store::new(workspace);
    let mut messages = input.messages;
    let mut out = Shape::new(config.strategy, pipeline.size(&messages));
    for &stage in pipeline.stages() {
        let report = pipeline.run_stage(stage, &mut messages, &store)?;
        out.stage(&store, &report, &messages)?;
        if stage == Stage::SnipCompact && config.strategy == Strategy::S08Latest {
            // The lesson's micro rules show on small inputs too: micro with no target, on
            // a copy, against a dry-run store.
            let probe = store.dry_run();
            let mut copy = messages.clone();
            let r = crate::compact::s08_latest::micro(&mut copy, &probe, &config, None)?;
            out.micro_probe(&probe, &r, &copy)?;
        }
    }
    out.triggered(pipeline.over_limit(&messages));
    if let Some(summary) = summary_text {
        let probe = store.dry_run();
        let pending =
            pipeline.begin_compact(&messages, &probe, None, CompactTrigger::OverLimit, now_secs)?;
        let key = pipeline.summarizing_stage().name();
        out.probe(key, &probe, pending, summary, &input.active_request)?;
        if pipeline.strategy().reactive_attempts() > 0 {
            let probe = store.dry_run();
            let pending = pipeline.begin_reactive(&messages, &probe, now_secs, 0, None)?;
            out.probe(
                "reactive_compact",
                &probe,
                pending,
                summary,
                &input.active_request,
            )?;
        }
    }
    Ok(out.finish())
}
