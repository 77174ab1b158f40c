//! An `App` wired to a real agent on the scripted tour (pace 0, a fresh copy of the demo
//! project): the test presses keys, the harness sends the commands the keys produce and
//! feeds the agent's events back, as the TUI's loop does.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ctxlab::agent::{AgentEvent, AgentSetup, UserCommand, spawn};
use ctxlab::compact::PipelineConfig;
use ctxlab::provider::{Scenario, ScriptedModel};
use ctxlab::tools::Workspace;
use ctxlab::tui::app::{Effect, Msg};
use ctxlab::tui::{App, event_rows};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::common::agent::pinned_clock;

/// How long any wait for the agent may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(60);

pub struct Bench {
    pub app: App,
    pub commands: UnboundedSender<UserCommand>,
    pub events: UnboundedReceiver<AgentEvent>,
    pub workspace: PathBuf,
    _dir: tempfile::TempDir,
}

/// A fresh demo workspace in `dir`.
pub fn demo_workspace(dir: &Path) -> PathBuf {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    ctxlab::startup::copy_tree(&demo, dir).unwrap();
    dir.to_path_buf()
}

/// The tour's agent on `config`, in step mode or not, and an App at 120x40 on its events.
pub async fn start(config: PipelineConfig, step_mode: bool) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let workspace = demo_workspace(dir.path());
    let scripted =
        ScriptedModel::new(Scenario::embedded("tour").unwrap()).with_pace(Duration::ZERO);
    let mut setup = AgentSetup::new(
        Arc::new(scripted),
        Workspace::new(&workspace).unwrap(),
        config,
    );
    setup.clock = pinned_clock;
    setup.step_mode = step_mode;
    let (commands, events, _task) = spawn(setup);
    let mut app = App::new(workspace.clone(), "scripted tour".into(), config, false);
    app.update(Msg::Resize(120, 40));
    Bench {
        app,
        commands,
        events,
        workspace,
        _dir: dir,
    }
}

impl Bench {
    /// Hands effects to the agent as the loop would (work and restarts are not run here).
    pub fn perform(&mut self, effects: Vec<Effect>) {
        for e in effects {
            if let Effect::Send(cmd) = e {
                let _ = self.commands.send(cmd);
            }
        }
    }

    /// Feeds events to the App until `stop` says so (after the App took the event).
    pub async fn until(&mut self, mut stop: impl FnMut(&AgentEvent, &App) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let ev = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .expect("the agent answers in time")
                .expect("the agent is running");
            let seen = ev.clone();
            let fx = self.app.update(Msg::Agent(ev));
            self.perform(fx);
            if stop(&seen, &self.app) {
                return;
            }
        }
    }

    /// Until the turn is over.
    pub async fn until_done(&mut self) {
        self.until(|e, _| matches!(e, AgentEvent::TurnDone { .. }))
            .await;
    }

    /// Presses `keys` in the App and sends what they produce.
    pub fn keys(&mut self, keys: &[crossterm::event::KeyCode]) {
        for k in keys {
            let fx = crate::support::press(&mut self.app, *k);
            self.perform(fx);
        }
    }

    /// Types `text` into the input box (focus must be there).
    pub fn type_text(&mut self, text: &str) {
        let fx = crate::support::type_text(&mut self.app, text);
        self.perform(fx);
    }

    /// The events pane's rows as text.
    pub fn event_texts(&self) -> Vec<String> {
        self.app
            .events()
            .iter()
            .map(|r| event_rows::row_text(&r.kind))
            .collect()
    }
}
