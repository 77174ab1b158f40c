//! A small deterministic fake session for the TUI tests: real pipeline stages (on a
//! dry-run store, so nothing is written) produce authentic `StageRan` reports, and the
//! events go through `App::update` exactly as the agent would send them.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ctxlab::agent::events::{AgentEvent, ErrorKind, NextStep};
use ctxlab::compact::extractive::extractive_summary_from_request;
use ctxlab::compact::{
    CompactTrigger, Pipeline, PipelineConfig, StageReport, begin_compact_history, estimate_size,
};
use ctxlab::message::{Message, block};
use ctxlab::provider::ModelRequest;
use ctxlab::store::Store;
use ctxlab::tui::{App, Effect, Msg};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

/// A workbench on `/workspace` with the default numbers, 120x40, before any event.
pub fn app() -> App {
    let mut a = App::new(
        "/workspace".into(),
        "test".into(),
        PipelineConfig::default(),
        false,
    );
    a.update(Msg::Resize(120, 40));
    a
}

/// One encoder for the whole test binary (building it takes a moment).
pub fn tokenizer() -> &'static tiktoken_rs::CoreBPE {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().unwrap())
}

pub const REQUEST: &str = "Fix the failing parser test";
/// The system prompt of the fake session's requests.
pub const SYSTEM: &str = "You are a test agent.";

pub fn config() -> PipelineConfig {
    PipelineConfig {
        budget_chars: 5_000,
        persist_threshold: 3_000,
        preview_chars: 60,
        snip_max_messages: 10,
        snip_keep_head: 3,
        micro_keep_recent: 2,
        micro_min_chars: 200,
        context_limit: 12_000,
        reactive_keep_tail: 5,
        summary_input_chars: 80_000,
        summary_max_tokens: 2_000,
        ..PipelineConfig::default()
    }
}

/// Feeds events into an app and mirrors the agent's history to run real stages.
pub struct Driver {
    pub app: App,
    pub history: Vec<Message>,
    pub store: Store,
    pub pipeline: Pipeline,
}

impl Driver {
    pub fn new(workspace: &Path, no_color: bool) -> Driver {
        let mut app = App::new(
            workspace.to_path_buf(),
            "scripted".into(),
            PipelineConfig::default(),
            no_color,
        );
        app.update(Msg::Resize(120, 40));
        app.update(Msg::Tokenizer(tokenizer()));
        let mut d = Driver {
            app,
            history: Vec::new(),
            store: Store::new(workspace).dry_run(),
            pipeline: Pipeline::new(config()),
        };
        d.send(AgentEvent::Ready {
            provider: "scripted (demo)".into(),
            workspace: workspace.to_path_buf(),
            config: config(),
        });
        d
    }

    pub fn send(&mut self, ev: AgentEvent) {
        self.app.update(Msg::Agent(ev));
    }

    pub fn ticks(&mut self, n: usize) {
        for _ in 0..n {
            let fx = self.app.update(Msg::Tick);
            settle(&mut self.app, fx);
        }
    }

    pub fn append(&mut self, m: Message) {
        self.history.push(m.clone());
        self.send(AgentEvent::MessageAppended { message: m });
    }

    /// The cheap stages, then the request, as the agent does before a model call.
    pub fn pre_call(&mut self) {
        for &stage in self.pipeline.stages() {
            let report = self
                .pipeline
                .run_stage(stage, &mut self.history, &self.store)
                .unwrap();
            let history = report.changed.then(|| Arc::new(self.history.clone()));
            self.send(AgentEvent::StageRan { report, history });
        }
        // Within the limit compact_history does not run, and says why, as the agent does.
        self.send(AgentEvent::StageRan {
            report: StageReport::within_limit(
                estimate_size(&self.history),
                self.history.len(),
                self.pipeline.config.context_limit,
            ),
            history: None,
        });
        let request = ModelRequest {
            system: SYSTEM.into(),
            messages: self.history.clone(),
            tools: Vec::new(),
            max_tokens: 1_000,
            kind: ctxlab::provider::RequestKind::Turn,
        };
        self.send(AgentEvent::RequestSent {
            estimate_chars: estimate_size(&self.history),
            messages: self.history.len(),
            summary: false,
            request: Some(Arc::new(request)),
            body: None,
        });
    }

    pub fn compact(&mut self, focus: Option<&str>) {
        let pending = begin_compact_history(
            &self.history,
            &self.store,
            &self.pipeline.config,
            focus,
            CompactTrigger::Requested,
            1_700_000_000,
        )
        .unwrap();
        self.send(AgentEvent::RequestSent {
            estimate_chars: pending.request().user_text.chars().count(),
            messages: 1,
            summary: true,
            request: None,
            body: None,
        });
        let summary = extractive_summary_from_request(&pending.request().user_text);
        let (history, report) = pending.finish(&[summary], REQUEST);
        self.history = history;
        let h = Arc::new(self.history.clone());
        self.send(AgentEvent::StageRan {
            report,
            history: Some(h.clone()),
        });
        self.send(AgentEvent::HistoryReplaced {
            messages: h.len(),
            history: h,
        });
    }

    pub fn tool_turn(&mut self, n: usize, name: &str, input: serde_json::Value, output: String) {
        self.pre_call();
        self.send(AgentEvent::TextDelta {
            text: format!("Step {n}. "),
        });
        self.ticks(2);
        let id = format!("toolu_{n:02}");
        self.append(Message::assistant_blocks(vec![
            block::text(format!("Step {n}.")),
            block::tool_use(&id, name, input.clone()),
        ]));
        self.send(AgentEvent::ToolStarted {
            id: id.clone(),
            name: name.into(),
            input,
        });
        self.ticks(3);
        self.send(AgentEvent::ToolFinished {
            id: id.clone(),
            name: name.into(),
            is_error: false,
            chars: output.chars().count(),
            elapsed: Duration::from_millis(300),
        });
        self.append(Message::user_blocks(vec![block::tool_result(&id, output)]));
        self.ticks(1);
    }
}

fn lines(prefix: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("{prefix} line {i}: all good here"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fake session: request, tool turns, a manual compaction with a focus, more turns with
/// a large output (persisted), enough messages to snip, old results as placeholders, a
/// retry and an error.
pub fn session(workspace: &Path, no_color: bool) -> Driver {
    let mut d = Driver::new(workspace, no_color);
    d.send(AgentEvent::TurnStarted {
        request: REQUEST.into(),
    });
    d.append(Message::user_text(REQUEST));
    d.tool_turn(
        1,
        "read_file",
        json!({"path": "src/parser.rs"}),
        lines("parser.rs", 8),
    );
    d.send(AgentEvent::Usage {
        input_tokens: Some(1_234),
        output_tokens: Some(56),
        cached_input_tokens: None,
    });
    d.tool_turn(
        2,
        "bash",
        json!({"command": "cargo test"}),
        lines("test", 10),
    );
    d.send(AgentEvent::CompactRequested {
        focus: Some("parser errors".into()),
    });
    d.compact(Some("parser errors"));
    d.send(AgentEvent::Retrying {
        attempt: 1,
        reason: "overloaded (529)".into(),
        wait: Duration::from_secs(2),
    });
    d.ticks(4);
    d.tool_turn(
        3,
        "bash",
        json!({"command": "cargo test -- --nocapture"}),
        "x".repeat(6_000),
    );
    d.tool_turn(
        4,
        "read_file",
        json!({"path": "src/lexer.rs"}),
        lines("lexer.rs", 12),
    );
    d.tool_turn(
        5,
        "edit_file",
        json!({"path": "src/parser.rs", "old": "a", "new": "b"}),
        "Edited src/parser.rs".into(),
    );
    d.tool_turn(
        6,
        "bash",
        json!({"command": "cargo build"}),
        lines("build", 9),
    );
    d.tool_turn(
        7,
        "bash",
        json!({"command": "cargo test"}),
        lines("test", 4),
    );
    d.send(AgentEvent::Error {
        kind: ErrorKind::Overloaded,
        message: "server overloaded, retrying later".into(),
    });
    d.tool_turn(
        8,
        "bash",
        json!({"command": "git diff --stat"}),
        " src/parser.rs | 2 +-".into(),
    );
    d.pre_call();
    d.send(AgentEvent::Usage {
        input_tokens: Some(2_345),
        output_tokens: Some(40),
        cached_input_tokens: None,
    });
    d.append(Message::assistant_blocks(vec![block::text(
        "The parser test passes now: the off-by-one in `parse_number` is fixed.",
    )]));
    d.send(AgentEvent::TurnDone {
        stop_reason: "end_turn".into(),
    });
    // Let notices expire so snapshots show the key hints.
    d.ticks(60);
    d
}

pub fn paused(d: &mut Driver) {
    d.send(AgentEvent::StepModeChanged { on: true });
    d.send(AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 12,
            size: 9_876,
        },
    });
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn key_mod(code: KeyCode, m: KeyModifiers) -> Msg {
    Msg::Key(KeyEvent::new(code, m))
}

/// Runs the jobs `effects` ask for, in place, as the loop would run them off the UI task,
/// feeding each result back until no job is left. Returns the other effects.
pub fn settle(app: &mut App, effects: Vec<Effect>) -> Vec<Effect> {
    let mut queue: std::collections::VecDeque<Effect> = effects.into();
    let mut rest = Vec::new();
    while let Some(e) = queue.pop_front() {
        match e {
            Effect::Work(work) => queue.extend(app.update(Msg::Done(work.run()))),
            other => rest.push(other),
        }
    }
    rest
}

/// A key, with the jobs it asks for done.
pub fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let fx = app.update(key(code));
    settle(app, fx)
}

pub fn type_text(app: &mut App, text: &str) -> Vec<ctxlab::tui::Effect> {
    let mut out = Vec::new();
    for c in text.chars() {
        out.extend(app.update(key(KeyCode::Char(c))));
    }
    out
}

/// Renders the whole screen into a TestBackend and returns it as text.
pub fn screen(app: &mut App, w: u16, h: u16) -> String {
    app.update(Msg::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ctxlab::tui::render(app, f)).unwrap();
    buffer_text(t.backend().buffer())
}

/// The screen as a terminal shows it: a wide character (CJK, emoji) covers the cell after
/// it, so that cell is skipped and every line reads with its real columns.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        let mut x = 0;
        while x < buf.area.width {
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            x += ctxlab::util::display_width(symbol).max(1) as u16;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Leaves the input box (where focus starts) and presses a pane key.
pub fn focus(app: &mut App, c: char) {
    app.update(key(KeyCode::Esc));
    app.update(key(KeyCode::Char(c)));
}

/// Changes the pipeline's settings the way the agent says they changed.
pub fn set_config(app: &mut App, config: PipelineConfig) {
    app.update(Msg::Agent(AgentEvent::ConfigChanged { config }));
}

/// The workspace's files (fixed ages for snapshots) as the loop delivers them: the
/// `ListFiles` job's listing, then the `CountMessages` job's counts for the transcripts
/// that carry one, both through `Msg::Done`.
pub fn files_listed(
    app: &mut App,
    outputs: Vec<ctxlab::tui::app::OutputFile>,
    transcripts: Vec<ctxlab::tui::app::TranscriptFile>,
) {
    use ctxlab::tui::work::Done;
    let root = app.workspace().to_path_buf();
    let counts: Vec<(String, u64, usize)> = transcripts
        .iter()
        .filter_map(|t| Some((t.relative.clone(), t.bytes, t.messages?)))
        .collect();
    let asked = transcripts.iter().map(|t| t.relative.clone()).collect();
    app.update(Msg::Done(Done::FilesListed {
        root: root.clone(),
        outputs,
        transcripts,
    }));
    app.update(Msg::Done(Done::MessagesCounted {
        root,
        counts,
        asked,
    }));
}

/// `m` on the outputs pane's row for `relative`: the conversation row whose marker names it.
pub fn jump_to_marker(app: &mut App, relative: &str) {
    files_listed(
        app,
        vec![ctxlab::tui::app::OutputFile {
            relative: relative.into(),
            bytes: 1,
            age_secs: None,
        }],
        vec![],
    );
    focus(app, '3');
    app.update(key(KeyCode::Char('m')));
}

/// The sessions browser over `paths`, as when the loop is running.
pub fn open_sessions(app: &mut App, paths: Vec<std::path::PathBuf>) -> Vec<Effect> {
    app.update(Msg::OpenSessions(ctxlab::tui::app::StartSessions::Browse(
        paths,
    )))
}

/// One session file opened at once, as when the loop is running.
pub fn open_session(app: &mut App, path: std::path::PathBuf) -> Vec<Effect> {
    app.update(Msg::OpenSessions(ctxlab::tui::app::StartSessions::File {
        path,
        bytes: None,
    }))
}

/// Start-up notices, as the loop's caller hands them over.
pub fn start_notices(app: &mut App, notices: Vec<String>) {
    app.update(Msg::Start(Box::new(ctxlab::tui::app::Startup {
        notices,
        ..Default::default()
    })));
}
