//! The binary's side of session recordings (docs/architecture.md, "Session recordings"):
//! where a live session's recording starts, what the front end is told, and the numbers a
//! recording is replayed with.

use ctxlab::agent::AgentEvent;
use ctxlab::compact::PipelineConfig;
pub(crate) use ctxlab::session::recorded::format::FrontEnd;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::cli::Thresholds;

/// A recording of the live session in the data dir (docs/architecture.md, "Session
/// recordings"), or why there is none.
pub(crate) fn start_recording(front_end: FrontEnd) -> Result<ctxlab::record::Recorder, String> {
    let dir = ctxlab::record::recordings_dir().ok_or("the platform has no data directory")?;
    ctxlab::record::Recorder::create(&dir, front_end).map_err(|e| e.to_string())
}

/// `events` with the session recorded on the way (`say` hears where, or why not).
pub(crate) fn recorded(
    events: UnboundedReceiver<AgentEvent>,
    front_end: FrontEnd,
    say: impl Fn(String),
) -> UnboundedReceiver<AgentEvent> {
    match start_recording(front_end) {
        Ok(recorder) => {
            say(format!(
                "recording this session to {}",
                recorder.path().display()
            ));
            ctxlab::record::tee(events, recorder)
        }
        Err(why) => {
            say(format!("not recording this session: {why}"));
            events
        }
    }
}

/// A ctxlab recording replayed under its own strategy, without `--set`: the numbers it
/// ran with (a recorded session replays as it ran).
pub(crate) fn recorded_config(
    config: PipelineConfig,
    recorded: Option<PipelineConfig>,
    thresholds: &Thresholds,
) -> PipelineConfig {
    match recorded {
        Some(r) if r.strategy == config.strategy && thresholds.set.is_empty() => r,
        _ => config,
    }
}
