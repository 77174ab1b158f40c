//! `App::update` without a terminal: events in, state and effects out.

use std::sync::Arc;

use crate::support::{app, key, key_mod, screen, session, settle, type_text};
use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use ctxlab::agent::events::{AgentEvent, NextStep, UserCommand};
use ctxlab::compact::{PipelineConfig, Stage};
use ctxlab::message::Message;
use ctxlab::tui::app::{ConvView, EventKind, Layer, LoadKind, OutputFile, Pane, TranscriptFile};
use ctxlab::tui::work::Work;
use ctxlab::tui::{App, Effect, Msg};

mod slow_work;
mod stage_units;

fn appended(a: &mut App, text: &str) {
    a.update(Msg::Agent(AgentEvent::MessageAppended {
        message: Message::user_text(text),
    }));
}

#[test]
fn appends_build_the_mirror_and_the_session() {
    let mut a = app();
    for t in ["one", "two", "three"] {
        appended(&mut a, t);
    }
    assert_eq!(a.conversation().history().len(), 3);
    assert_eq!(a.conversation().session().len(), 3);
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        2,
        "the list follows new messages"
    );
    let expected = ctxlab::compact::estimate_size(
        &a.conversation()
            .history()
            .iter()
            .map(|r| r.info().message.clone())
            .collect::<Vec<_>>(),
    );
    assert_eq!(a.conversation().chars(), expected);
}

#[test]
fn a_replaced_history_dims_what_went_away_and_keeps_a_diff() {
    let mut a = app();
    for t in ["one", "two", "three", "four"] {
        appended(&mut a, t);
    }
    let new = vec![
        Message::user_text("one"),
        Message::user_text("[snipped 2 messages]"),
        Message::user_text("four"),
    ];
    a.update(Msg::Agent(AgentEvent::HistoryReplaced {
        messages: 3,
        history: Arc::new(new),
    }));
    assert_eq!(a.conversation().history().len(), 3);
    let live: Vec<bool> = a
        .conversation()
        .session()
        .iter()
        .map(|s| s.live())
        .collect();
    assert_eq!(live, vec![true, false, false, true]);
    assert_eq!(a.diffs().len(), 1);
    assert_eq!(a.diffs()[0].before.len(), 4);
    assert_eq!(a.diffs()[0].after.len(), 3);
    // The surviving rows are the same rows (shared info), not copies.
    assert_eq!(a.diffs()[0].before[0].uid, a.diffs()[0].after[0].uid);
    assert!(matches!(a.events()[0].kind, EventKind::Replaced { .. }));
    // Replacing with an equal history adds nothing.
    let same: Vec<Message> = a
        .conversation()
        .history()
        .iter()
        .map(|r| r.info().message.clone())
        .collect();
    a.update(Msg::Agent(AgentEvent::HistoryReplaced {
        messages: 3,
        history: Arc::new(same),
    }));
    assert_eq!(a.events().len(), 1);
}

#[test]
fn the_fake_session_yields_stage_rows_marks_and_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let d = session(dir.path(), false);
    let a = &d.app;
    let stages: Vec<Stage> = a
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Stage { report, .. } if report.changed => Some(report.stage),
            _ => None,
        })
        .collect();
    for s in [
        Stage::CompactHistory,
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
    ] {
        assert!(stages.contains(&s), "{s:?} missing from {stages:?}");
    }
    // Every changed stage kept its before/after lists.
    let with_diff = a
        .events()
        .iter()
        .filter(|e| e.kind.diff().is_some())
        .count();
    assert_eq!(with_diff, a.diffs().len());
    // The mirror equals the agent's history.
    let mirror: Vec<Message> = a
        .conversation()
        .history()
        .iter()
        .map(|r| r.info().message.clone())
        .collect();
    assert_eq!(mirror, d.history);
    // Touched rows carry their stage's mark.
    assert!(
        a.conversation()
            .history()
            .iter()
            .any(|r| r.mark() == Some(Stage::SnipCompact))
    );
    assert!(
        a.conversation()
            .history()
            .iter()
            .any(|r| r.mark() == Some(Stage::ToolResultBudget))
    );
    // Unchanged stages are hidden until `u`.
    let shown = a.visible_events().len();
    assert!(shown < a.events().len());
    assert_eq!(
        a.conversation().request_sizes().len(),
        9,
        "one per non-summary request"
    );
    assert_eq!(a.conversation().api_tokens().0, Some(2_345));
}

#[test]
fn unchanged_filter_and_diff_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    let a = &mut d.app;
    crate::support::focus(a, '2');
    assert_eq!(a.focus(), Pane::Events);
    let before = a.visible_events().len();
    a.update(key(KeyCode::Char('u')));
    assert!(a.show_unchanged());
    assert!(a.visible_events().len() > before);
    a.update(key(KeyCode::Char('u')));
    // Select the first changed stage and open its diff.
    a.update(key(KeyCode::Char('g')));
    let first_diff = a
        .visible_events()
        .iter()
        .position(|&i| a.events()[i].kind.diff().is_some())
        .unwrap();
    for _ in 0..first_diff {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Enter));
    assert!(matches!(a.top_layer(), Some(Layer::Diff(_))));
    a.update(key(KeyCode::Esc));
    assert!(a.top_layer().is_none());
}

#[test]
fn pause_text_and_step_key() {
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    a.update(Msg::Agent(AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 3,
            size: 1_234,
        },
    }));
    assert_eq!(
        a.step_state().paused(),
        Some("next: model call with 3 messages (1,234 chars)")
    );
    // Focus is in the input (typing needs an explicit `i`), which is empty: Space steps.
    a.update(key(KeyCode::Char('i')));
    assert_eq!(a.focus(), Pane::Input);
    let fx = a.update(key(KeyCode::Char(' ')));
    assert_eq!(fx, vec![Effect::Send(UserCommand::Step)]);
    assert!(a.step_state().paused().is_none());
    // Outside the input, Space steps too.
    a.update(Msg::Agent(AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 3,
            size: 1_234,
        },
    }));
    a.update(key(KeyCode::Esc));
    assert_eq!(a.focus(), Pane::Conversation);
    let fx = a.update(key(KeyCode::Char(' ')));
    assert_eq!(fx, vec![Effect::Send(UserCommand::Step)]);
    // With text in the input, Space types.
    a.update(Msg::Agent(AgentEvent::Paused {
        next: NextStep::ModelCall {
            messages: 3,
            size: 1,
        },
    }));
    a.update(key(KeyCode::Char('5')));
    type_text(&mut a, "hi");
    let fx = a.update(key(KeyCode::Char(' ')));
    assert!(fx.is_empty());
    assert_eq!(a.input_text(), "hi ");
}

#[test]
fn ctrl_c_cancels_then_quits() {
    let mut a = app();
    let c = || key_mod(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(a.update(c()), vec![Effect::Send(UserCommand::Cancel)]);
    assert_eq!(a.update(c()), vec![Effect::Quit]);
    // More than a second later, the next Ctrl-C cancels again.
    let mut b = app();
    b.update(c());
    for _ in 0..11 {
        b.update(Msg::Tick);
    }
    assert_eq!(b.update(c()), vec![Effect::Send(UserCommand::Cancel)]);
}

#[test]
fn q_quits_only_outside_the_input() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    assert!(type_text(&mut a, "q").is_empty());
    assert_eq!(a.input_text(), "q");
    a.update(key(KeyCode::Esc));
    assert_eq!(a.update(key(KeyCode::Char('q'))), vec![Effect::Quit]);
}

#[test]
fn submit_and_slash_commands() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "hello");
    assert_eq!(
        a.update(key(KeyCode::Enter)),
        vec![Effect::Send(UserCommand::Submit("hello".into()))]
    );
    assert_eq!(a.input_text(), "");
    type_text(&mut a, "/compact parser errors");
    assert_eq!(
        a.update(key(KeyCode::Enter)),
        vec![Effect::Send(UserCommand::Compact {
            focus: Some("parser errors".into())
        })]
    );
    // A command leaves the input box: `i` types again.
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/compact");
    assert_eq!(
        a.update(key(KeyCode::Enter)),
        vec![Effect::Send(UserCommand::Compact { focus: None })]
    );
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/step");
    assert_eq!(
        a.update(key(KeyCode::Enter)),
        vec![Effect::Send(UserCommand::StepMode(true))]
    );
    assert!(a.step_state().mode());
    // An empty input sends nothing.
    a.update(key(KeyCode::Char('i')));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
}

#[test]
fn shift_and_alt_enter_insert_newlines() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "a");
    a.update(key_mod(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut a, "b");
    a.update(key_mod(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut a, "c");
    assert_eq!(a.input_text(), "a\nb\nc");
    assert_eq!(
        a.update(key(KeyCode::Enter)),
        vec![Effect::Send(UserCommand::Submit("a\nb\nc".into()))]
    );
}

#[test]
fn config_edit_sends_set_config() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/config");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(matches!(a.top_layer(), Some(Layer::Config(_))));
    let idx = PipelineConfig::KEYS
        .iter()
        .position(|k| *k == "context_limit")
        .unwrap();
    for _ in 0..idx {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Enter));
    for _ in 0..10 {
        a.update(key(KeyCode::Backspace));
    }
    type_text(&mut a, "8000");
    let fx = a.update(key(KeyCode::Enter));
    let expected = PipelineConfig {
        context_limit: 8_000,
        ..PipelineConfig::default()
    };
    assert_eq!(fx, vec![Effect::Send(UserCommand::SetConfig(expected))]);
    assert_eq!(
        a.config().context_limit,
        8_000,
        "the gauge shows the new limit"
    );
    // An empty value is refused with a message, and nothing is sent.
    a.update(key(KeyCode::Enter));
    for _ in 0..10 {
        a.update(key(KeyCode::Backspace));
    }
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    match a.top_layer() {
        Some(Layer::Config(p)) => assert!(p.error().is_some()),
        _ => panic!("config panel closed"),
    }
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Esc));
    assert!(a.top_layer().is_none());
}

#[test]
fn input_history_recall() {
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    for t in ["first", "second"] {
        type_text(&mut a, t);
        a.update(key(KeyCode::Enter));
    }
    type_text(&mut a, "draft");
    a.update(key(KeyCode::Up));
    assert_eq!(a.input_text(), "second");
    a.update(key(KeyCode::Up));
    assert_eq!(a.input_text(), "first");
    a.update(key(KeyCode::Up));
    assert_eq!(a.input_text(), "first");
    a.update(key(KeyCode::Down));
    assert_eq!(a.input_text(), "second");
    a.update(key(KeyCode::Down));
    assert_eq!(a.input_text(), "draft");
}

#[test]
fn view_toggle_expand_and_marker_jump() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    let a = &mut d.app;
    crate::support::focus(a, '1');
    assert_eq!(a.focus(), Pane::Conversation);
    a.update(key(KeyCode::Char('v')));
    assert_eq!(a.conversation().view(), ConvView::Session);
    assert!(a.conversation().session().iter().any(|s| !s.live()));
    a.update(key(KeyCode::Char('v')));
    a.update(key(KeyCode::Char('g')));
    a.update(key(KeyCode::Enter));
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .expanded
            .len(),
        1
    );
    a.update(key(KeyCode::Enter));
    assert!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .expanded
            .is_empty()
    );
    let path = a
        .conversation()
        .history()
        .iter()
        .find_map(|r| r.info().persisted_paths.first().cloned())
        .expect("a persisted marker");
    a.update(key(KeyCode::Char('g')));
    crate::support::jump_to_marker(a, &path);
    assert!(
        a.conversation().history()[a
            .conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected]
            .info()
            .persisted_paths
            .contains(&path)
    );
}

#[test]
fn mouse_wheel_scrolls_the_pane_under_the_cursor() {
    let mut a = app();
    for i in 0..50 {
        appended(&mut a, &format!("m{i}"));
    }
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        49
    );
    let wheel = |kind| {
        Msg::Mouse(MouseEvent {
            kind,
            column: 5,
            row: 5,
            modifiers: KeyModifiers::NONE,
        })
    };
    a.update(wheel(MouseEventKind::ScrollUp));
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        46
    );
    a.update(wheel(MouseEventKind::ScrollDown));
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        49
    );
}

#[test]
fn a_hundred_thousand_messages_stay_scrollable() {
    let mut a = app();
    for i in 0..100_000 {
        appended(&mut a, &format!("message {i}"));
    }
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Char('g')));
    assert_eq!(
        (
            a.conversation()
                .list(ctxlab::tui::app::ConvView::Model)
                .selected,
            a.conversation().list(ctxlab::tui::app::ConvView::Model).top
        ),
        (0, 0)
    );
    a.update(key(KeyCode::PageDown));
    assert!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected
            > 30
    );
    a.update(key(KeyCode::Char('G')));
    assert_eq!(
        a.conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected,
        99_999
    );
    assert!(a.conversation().list(ctxlab::tui::app::ConvView::Model).top > 99_900);
}

#[test]
fn tokens_are_counted_off_the_start_up_path() {
    let mut a = app();
    appended(&mut a, "hello world");
    assert!(a.conversation().tokens_pending());
    let bpe: &'static _ = Box::leak(Box::new(tiktoken_rs::cl100k_base().unwrap()));
    let fx = a.update(Msg::Tokenizer(bpe));
    // The count is a job: the UI task only asks for it.
    assert!(a.conversation().tokens_pending());
    settle(&mut a, fx);
    assert!(!a.conversation().tokens_pending());
    assert!(a.conversation().tokens() > 0);
    assert!(a.conversation().history()[0].info().tokens().is_some());
}

/// `/restart` with a real provider does not promise a scenario (issue 25): only the
/// scripted model plays one.
#[test]
fn restart_says_what_it_restarted() {
    for (provider, says, not) in [
        (
            "openai smollm2",
            "a fresh agent with an empty history",
            "scenario",
        ),
        ("scripted tour", "the scenario plays again", "fresh agent"),
    ] {
        let mut a = app();
        a.update(Msg::Restarted {
            provider: provider.into(),
            notices: Vec::new(),
        });
        let text = screen(&mut a, 120, 40);
        assert!(text.contains(says), "{provider}: {text}");
        assert!(!text.contains(not), "{provider}: {text}");
    }
}

#[test]
fn the_strategy_row_chooses_a_typed_strategy_and_sends_it() {
    use ctxlab::compact::Strategy;
    let mut a = app();
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, "/config");
    a.update(key(KeyCode::Enter));
    a.update(key(KeyCode::Char('G')));
    a.update(key(KeyCode::Enter));
    let start = a.config().strategy;
    match a.top_layer() {
        Some(ctxlab::tui::app::Layer::Config(p)) => assert_eq!(p.choosing(), Some(start)),
        _ => panic!("config panel closed"),
    }
    a.update(key(KeyCode::Char('l')));
    let at = Strategy::ALL.iter().position(|s| *s == start).unwrap();
    let next = Strategy::ALL[(at + 1) % Strategy::ALL.len()];
    let fx = a.update(key(KeyCode::Enter));
    let expected = PipelineConfig::default().with_strategy(next);
    assert_eq!(fx, vec![Effect::Send(UserCommand::SetConfig(expected))]);
    assert_eq!(a.config().strategy, next);
}
