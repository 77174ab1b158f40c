//! The scripted tour, run once per test binary on the real agent (pace 0, pinned clock, a
//! recording model) and shared: its events and the exact requests the model received.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::agent::{RecordingModel, pinned_clock, until_done};
use ctxlab::agent::{AgentEvent, AgentSetup, UserCommand, spawn};
use ctxlab::compact::PipelineConfig;
use ctxlab::provider::{ModelRequest, Scenario, ScriptedModel};
use ctxlab::tools::Workspace;

pub struct Tour {
    /// The workspace the tour ran in (kept for the whole test run).
    pub workspace: PathBuf,
    pub events: Vec<AgentEvent>,
    /// Every request the model received, summaries included, in order.
    pub requests: Vec<ModelRequest>,
}

/// The tour's run, made on first use.
pub fn tour() -> &'static Tour {
    static TOUR: OnceLock<Tour> = OnceLock::new();
    TOUR.get_or_init(|| {
        // Its own thread and runtime: a caller may already be inside one.
        std::thread::spawn(run).join().expect("the tour ran")
    })
}

fn run() -> Tour {
    let dir = tempfile::tempdir().unwrap().keep();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    ctxlab::startup::copy_tree(&demo, &dir).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let scenario = Scenario::embedded("tour").unwrap();
        let request = scenario.request.clone();
        let scripted = ScriptedModel::new(scenario).with_pace(Duration::ZERO);
        let (recorder, requests) = RecordingModel::new(Arc::new(scripted));
        let mut setup = AgentSetup::new(
            Arc::new(recorder),
            Workspace::new(&dir).unwrap(),
            PipelineConfig::default(),
        );
        setup.clock = pinned_clock;
        let (commands, mut events, handle) = spawn(setup);
        let mut seen = vec![events.recv().await.expect("Ready")];
        commands.send(UserCommand::Submit(request)).unwrap();
        seen.extend(until_done(&mut events, Duration::from_secs(120)).await);
        commands.send(UserCommand::Quit).unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(10), handle).await;
        let requests = requests.lock().unwrap().clone();
        Tour {
            workspace: dir.clone(),
            events: seen,
            requests,
        }
    })
}
