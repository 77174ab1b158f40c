//! The workbench in front of a class: step mode's keys from every pane (and never typing),
//! "run to", the pause card and the rows the next stage will change, reasons in the events
//! pane, refusals, summary calls and cancels as rows, `/compact` back to idle, `/pace`,
//! `/restart`, the first minute (focus, legend, notices in full), a replay that says what
//! the next call would do, and a theme that reads on light terminals. `App::update` and
//! `render` only: no terminal, no agent.

mod first_minute;
mod screens;

use std::path::Path;
use std::time::Duration;

use crate::support::{Driver, app, key, screen, session, type_text};
use crossterm::event::KeyCode;
use ctxlab::agent::events::{AgentEvent, NextStep, StepTarget, StopReason, UserCommand};
use ctxlab::compact::{Change, Stage, StageReport, reactive_tail_start};
use ctxlab::message::Message;
use ctxlab::tui::app::{EventKind, Layer, Pane, RunState};
use ctxlab::tui::{Effect, Msg};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/workspace")
}

fn fake_session() -> (tempfile::TempDir, Driver) {
    let dir = tempfile::tempdir().unwrap();
    let d = session(dir.path(), false);
    (dir, d)
}

fn model_call() -> AgentEvent {
    AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 3,
            size: 1_234,
        },
    }
}

fn sent(fx: &[Effect]) -> Vec<UserCommand> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Send(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// The reproduced bug: Space pressed while the agent was busy typed a space into the input
/// box, and from then on Space never stepped. In step mode it now steps from every pane,
/// and an empty input line's Space never types.
/// A pause before a call that sends one message says "1 message", in the status line and
/// in the pause panel.
#[test]
fn a_pause_before_a_one_message_call_says_message() {
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    a.update(Msg::Agent(AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 1,
            size: 194,
        },
    }));
    assert_eq!(
        a.step_state().paused(),
        Some("next: model call with 1 message (194 chars)")
    );
    let text = screen(&mut a, 120, 40);
    assert!(
        text.contains("the request: 1 message, 194 / 50,000"),
        "{text}"
    );
    assert!(!text.contains("1 messages"), "{text}");
}

#[test]
fn in_step_mode_space_steps_from_every_pane_and_never_types() {
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    a.update(Msg::Agent(AgentEvent::TurnStarted {
        request: "go".into(),
    }));
    // Busy, not paused, in the input box: nothing is typed, nothing is sent.
    a.update(key(KeyCode::Char('i')));
    assert_eq!(a.focus(), Pane::Input);
    for _ in 0..3 {
        assert!(sent(&a.update(key(KeyCode::Char(' ')))).is_empty());
    }
    assert_eq!(a.input_text(), "", "Space typed into the input box");
    // Paused: Space steps, from the input box too.
    a.update(Msg::Agent(model_call()));
    assert_eq!(
        sent(&a.update(key(KeyCode::Char(' ')))),
        [UserCommand::Step]
    );
    assert!(a.step_state().paused().is_none());
    a.update(key(KeyCode::Esc));
    for pane in ['1', '2', '3', '4'] {
        a.update(key(KeyCode::Char(pane)));
        a.update(Msg::Agent(model_call()));
        let fx = a.update(key(KeyCode::Char(' ')));
        assert_eq!(sent(&fx), [UserCommand::Step], "pane {pane}");
    }
    assert_eq!(a.input_text(), "");
}

#[test]
fn s_and_c_run_to_the_next_stage_or_model_call() {
    let mut a = app();
    // Outside step mode they only explain themselves.
    assert!(sent(&a.update(key(KeyCode::Char('s')))).is_empty());
    assert!(a.notice_text().unwrap().contains("step mode"));
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    a.update(Msg::Agent(AgentEvent::TurnStarted {
        request: "go".into(),
    }));
    a.update(Msg::Agent(model_call()));
    assert_eq!(
        sent(&a.update(key(KeyCode::Char('s')))),
        [UserCommand::RunTo(StepTarget::Stage)]
    );
    assert!(a.step_state().paused().is_none(), "the pause is over");
    assert_eq!(a.step_state().run_to(), Some(StepTarget::Stage));
    let top = screen(&mut a, 120, 40);
    assert!(
        top.lines()
            .next()
            .unwrap()
            .contains("running to the next stage"),
        "{top}"
    );
    // The next pause ends the run.
    a.update(Msg::Agent(model_call()));
    assert_eq!(a.step_state().run_to(), None);
    assert_eq!(
        sent(&a.update(key(KeyCode::Char('c')))),
        [UserCommand::RunTo(StepTarget::ModelCall)]
    );
    // While the agent works (not paused), `c` still sets the target for the pauses to come.
    assert_eq!(
        sent(&a.update(key(KeyCode::Char('c')))),
        [UserCommand::RunTo(StepTarget::ModelCall)]
    );
    // Idle with nothing to run: nothing is sent.
    a.update(Msg::Agent(AgentEvent::TurnDone {
        stop_reason: StopReason::EndTurn,
    }));
    assert_eq!(a.step_state().run_to(), None);
    assert!(sent(&a.update(key(KeyCode::Char('s')))).is_empty());
    // In the input box `s` is a letter.
    a.update(key(KeyCode::Char('i')));
    a.update(Msg::Agent(model_call()));
    assert!(sent(&a.update(key(KeyCode::Char('s')))).is_empty());
    assert_eq!(a.input_text(), "s");
}

/// A pause before snip_compact removing rows 1 and 2 (off screen at 80x24).
fn snip_pause(d: &mut Driver) -> std::ops::Range<usize> {
    let mut preview = StageReport::not_run(
        Stage::SnipCompact,
        2_720,
        13,
        String::new(),
        ctxlab::compact::SizeUnit::Chars,
    );
    preview.ran = true;
    preview.changed = true;
    preview.size_after = 2_456;
    preview.messages_after = 12;
    preview.changes = vec![Change::Snipped {
        head_end: 1,
        tail_start: 3,
        removed: 2,
    }];
    preview.reason = "13 messages > 10 (head 1, kept 9)".into();
    d.send(AgentEvent::StepModeChanged { on: true });
    d.send(AgentEvent::Paused {
        next: NextStep::Stage {
            stage: Stage::SnipCompact,
            preview,
        },
    });
    1..3
}

/// The rows a paused stage will change are marked with its letter, the selection goes to
/// them when none is on screen, and back to the newest row after the step.
#[test]
fn a_pause_highlights_the_rows_its_stage_will_change() {
    let (_dir, mut d) = fake_session();
    d.app.update(Msg::Resize(80, 24));
    let last = d.app.conversation().history().len() - 1;
    assert_eq!(
        d.app
            .conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        last
    );
    let rows = snip_pause(&mut d);
    assert_eq!(d.app.rows_to_change(), vec![rows.clone()]);
    // At 80x24 rows 1-2 were off screen: the selection went to the first of them.
    assert_eq!(
        d.app
            .conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        1
    );
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| ctxlab::tui::render(&d.app, f)).unwrap();
    let buf = t.backend().buffer();
    let main = d.app.areas().unwrap().main;
    let mut marked = Vec::new();
    for y in main.top() + 1..main.bottom() - 1 {
        let tag = &buf[(main.left() + 1, y)];
        if tag.symbol() == "S" && tag.modifier.contains(Modifier::REVERSED) {
            let row: String = (main.left() + 3..main.left() + 6)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            marked.push(row.trim().to_string());
        }
    }
    assert_eq!(marked, ["1", "2"]);
    // The card in the input box's place says why and what.
    let text = screen(&mut d.app, 80, 24);
    assert!(text.contains("PAUSED  before snip_compact"), "{text}");
    assert!(
        text.contains("why: 13 messages > 10 (head 1, kept 9)"),
        "{text}"
    );
    assert!(text.contains("(rows 1-2 highlighted)"), "{text}");
    // The step happens: back to following the newest row, nothing highlighted.
    let fx = d.app.update(key(KeyCode::Char(' ')));
    assert_eq!(sent(&fx), [UserCommand::Step]);
    assert!(d.app.rows_to_change().is_empty());
    assert_eq!(
        d.app
            .conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        last
    );
}

#[test]
fn i_brings_the_input_back_while_paused_and_esc_the_card() {
    let (_dir, mut d) = fake_session();
    snip_pause(&mut d);
    assert!(d.app.pause_card_shown());
    d.app.update(key(KeyCode::Char('i')));
    assert!(!d.app.pause_card_shown());
    let text = screen(&mut d.app, 80, 24);
    assert!(text.contains("5 Input"), "{text}");
    d.app.update(key(KeyCode::Esc));
    assert!(d.app.pause_card_shown());
}

/// The pause before reactive_compact, with the API's words on screen and the rows it will
/// summarize marked `R`.
#[test]
fn the_pause_before_reactive_compact() {
    let (dir, mut d) = fake_session();
    d.send(AgentEvent::StepModeChanged { on: true });
    d.send(AgentEvent::TurnStarted {
        request: "go on".into(),
    });
    d.append(Message::user_text("go on"));
    d.pre_call();
    let message = "prompt is too long: 12,731 chars > 12,000 maximum (scripted window)";
    let messages = d.history.len();
    d.send(AgentEvent::PromptTooLong {
        message: message.into(),
        messages,
        estimate_chars: 12_731,
    });
    let replaced = reactive_tail_start(&d.history, &d.pipeline.config);
    d.send(AgentEvent::Paused {
        next: NextStep::Reactive {
            stage: Stage::ReactiveCompact,
            api_message: message.into(),
            messages,
            size: 12_731,
            replaced,
            kept: messages - replaced,
        },
    });
    d.ticks(60);
    for (w, h) in SIZES {
        let text = masked(screen(&mut d.app, w, h), dir.path());
        assert!(
            text.contains("the API said: prompt is too long: 12,731 chars > 12,000"),
            "{text}"
        );
        assert!(text.contains("API refused: prompt is too long"), "{text}");
        insta::assert_snapshot!(format!("pause_reactive_{w}x{h}"), text);
    }
}

#[test]
fn reasons_are_on_every_stage_row_and_u_shows_compact_history_that_did_not_run() {
    let (_dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '2');
    let text = screen(&mut d.app, 120, 40);
    assert!(
        text.contains("Δ snip: 13 messages > 10 (head 3, kept"),
        "{text}"
    );
    assert!(!text.contains("compact_history: 2,247 <= 12,000"), "{text}");
    d.app.update(key(KeyCode::Char('u')));
    d.app.update(key(KeyCode::Char('G')));
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("compact_history: 2,247 <= 12,000"), "{text}");
    // Enter on a row without a diff shows it in full, reason included.
    d.app.update(key(KeyCode::Enter));
    match d.app.top_layer() {
        Some(Layer::Viewer(v)) => {
            assert!(
                v.lines().iter().any(|l| l == "why: 2,247 <= 12,000"),
                "{v:?}"
            )
        }
        other => panic!("expected the viewer, got {other:?}"),
    }
}

#[test]
fn refusals_summary_calls_and_cancels_are_rows_and_the_api_figure_is_the_main_calls() {
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::RequestSent {
        estimate_chars: 40_000,
        messages: 20,
        summary: false,
        request: None,
        body: None,
    }));
    a.update(Msg::Agent(AgentEvent::Usage {
        input_tokens: Some(10_000),
        output_tokens: None,
        cached_input_tokens: None,
    }));
    a.update(Msg::Agent(AgentEvent::PromptTooLong {
        message: "prompt is too long: 210000 tokens > 200000 maximum".into(),
        messages: 20,
        estimate_chars: 40_000,
    }));
    assert!(a.notice_text().unwrap().contains("prompt is too long"));
    a.update(Msg::Agent(AgentEvent::RequestSent {
        estimate_chars: 32_137,
        messages: 1,
        summary: true,
        request: None,
        body: None,
    }));
    assert!(matches!(a.run_state(), RunState::Summarizing { .. }));
    a.update(Msg::Agent(AgentEvent::Usage {
        input_tokens: Some(8_034),
        output_tokens: Some(300),
        cached_input_tokens: None,
    }));
    assert_eq!(
        a.conversation().api_tokens().0,
        Some(10_000),
        "the main request's figure"
    );
    assert_eq!(a.conversation().summary_input_tokens(), Some(8_034));
    a.update(Msg::Agent(AgentEvent::TurnDone {
        stop_reason: StopReason::Cancelled,
    }));
    let kinds: Vec<&EventKind> = a.events().iter().map(|e| &e.kind).collect();
    assert!(matches!(kinds[0], EventKind::PromptTooLong { message } if message.contains("210000")));
    assert!(matches!(
        kinds[1],
        EventKind::SummaryCall {
            chars: 32_137,
            input_tokens: Some(8_034),
            ..
        }
    ));
    assert!(matches!(kinds[2], EventKind::Cancelled));
    let text = screen(&mut a, 120, 40);
    assert!(
        text.contains("summary call: 32,137 chars · API 8,0"),
        "{text}"
    );
    assert!(text.contains("turn cancelled by the user"), "{text}");
    assert!(text.contains("· API 10,000"), "{text}");
    assert!(
        text.contains("last summary call's input: 8,034 tokens (API)"),
        "{text}"
    );
}

/// After `/compact` the agent ends with `compacted`: the status bar goes back to idle.
#[test]
fn after_compact_the_status_bar_returns_to_idle() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/compact");
    assert_eq!(
        sent(&a.update(key(KeyCode::Enter))),
        [UserCommand::Compact { focus: None }]
    );
    a.update(Msg::Agent(AgentEvent::RequestSent {
        estimate_chars: 500,
        messages: 1,
        summary: true,
        request: None,
        body: None,
    }));
    assert!(
        screen(&mut a, 120, 40)
            .lines()
            .next()
            .unwrap()
            .contains("summarizing")
    );
    a.update(Msg::Agent(AgentEvent::TurnDone {
        stop_reason: StopReason::Compacted,
    }));
    assert_eq!(*a.run_state(), RunState::Idle);
    assert!(
        screen(&mut a, 120, 40)
            .lines()
            .next()
            .unwrap()
            .contains("│ idle │")
    );
}

#[test]
fn pace_and_restart_are_commands() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/pace 200");
    assert_eq!(
        sent(&a.update(key(KeyCode::Enter))),
        [UserCommand::SetPace(Duration::from_millis(200))]
    );
    assert_eq!(
        a.focus(),
        Pane::Conversation,
        "a command leaves the input box"
    );
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/pace fast");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(a.notice_text().unwrap().contains("usage: /pace MS"));
    a.update(Msg::Agent(AgentEvent::PaceChanged {
        pace_ms: 0,
        applied: false,
    }));
    assert!(a.notice_text().unwrap().contains("own pace"));

    // /restart asks the loop for a fresh agent; the view starts over, keeping the inputs.
    for i in 0..3 {
        a.update(Msg::Agent(AgentEvent::MessageAppended {
            message: Message::user_text(format!("m{i}")),
        }));
    }
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/restart");
    assert_eq!(a.update(key(KeyCode::Enter)), vec![Effect::Restart]);
    a.update(Msg::Restarted {
        provider: "scripted tour".into(),
        notices: vec!["Demo workspace: /tmp/tour-2".into()],
    });
    assert!(a.conversation().history().is_empty() && a.conversation().session().is_empty());
    assert_eq!(a.provider(), "scripted tour");
    assert!(a.input().history().contains(&"/restart".to_string()));
    assert!(matches!(
        a.events(),
        [e] if matches!(&e.kind, EventKind::Notice { text } if text.contains("/tmp/tour-2"))
    ));
    a.update(Msg::RestartFailed("not available here".into()));
    assert!(
        a.notice_text()
            .unwrap()
            .contains("restart failed: not available here")
    );
}

#[test]
fn the_restart_view_keeps_step_mode_and_the_tokenizer() {
    let mut a = app();
    a.update(Msg::Tokenizer(crate::support::tokenizer()));
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    a.update(Msg::Restarted {
        provider: "scripted tour".into(),
        notices: Vec::new(),
    });
    assert!(a.step_state().mode());
    a.update(Msg::Agent(AgentEvent::MessageAppended {
        message: Message::user_text("hello world"),
    }));
    let fx = a.update(Msg::Tick);
    crate::support::settle(&mut a, fx);
    assert!(
        a.conversation().tokens() > 0,
        "the tokenizer survived the restart"
    );
}
