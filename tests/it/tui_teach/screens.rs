//! The teaching screens at 80x24 and 120x40 (issue 38): the reasons in the events pane
//! read whole on the selected row, the paused status line never cut, the hint line's keys
//! not given over to start-up notices, the tour held until the first-run legend is
//! closed, and `p` stepping back one model call. Each test failed before its fix.

use std::path::Path;

use crossterm::event::KeyCode;
use ctxlab::agent::events::{AgentEvent, NextStep, UserCommand};
use ctxlab::compact::{Change, Stage, StageReport};
use ctxlab::tui::app::{App, EventKind, Layer, Startup};
use ctxlab::tui::event_rows::{TEXT_COLUMN, row_text};
use ctxlab::tui::{Effect, Msg};

use crate::support::{Driver, app, key, paused, screen, session};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/workspace")
}

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The events pane's text as one line per row's text: each line's part after the time
/// column, joined, so a row wrapped over several lines reads as it was written.
fn events_text(a: &mut App, w: u16, h: u16) -> String {
    let text = screen(a, w, h);
    let area = a.areas().expect("the panes fit").events;
    let (x0, x1) = (area.x as usize + 1, (area.x + area.width) as usize - 1);
    let mut out = String::new();
    for line in text
        .lines()
        .skip(area.y as usize + 1)
        .take(area.height as usize - 2)
    {
        let cells: Vec<char> = line.chars().collect();
        let inside: String = cells
            .get(x0.min(cells.len())..x1.min(cells.len()))
            .unwrap_or_default()
            .iter()
            .collect();
        // A row's first line starts with its time; the lines it wraps onto do not.
        let rest: String = if inside.starts_with(|c: char| c.is_ascii_digit()) {
            inside.chars().skip(TEXT_COLUMN).collect()
        } else {
            inside
        };
        out.push_str(rest.trim());
        out.push(' ');
    }
    squeeze(&out)
}

/// Every stage row of the fake session, selected in turn, shows its whole text (its
/// reason first) at both sizes: before, the pane cut it at its edge ("snip: 53 messages >
/// 50 (head 3, kept …").
#[test]
fn the_selected_events_row_shows_its_whole_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    crate::support::focus(&mut d.app, '2');
    let rows: Vec<usize> = d.app.visible_events();
    let mut long = 0;
    for (w, h) in SIZES {
        d.app.update(Msg::Resize(w, h));
        d.app.update(key(KeyCode::Char('g')));
        for (pos, &i) in rows.iter().enumerate() {
            // Compared without spaces: a path longer than a line is cut by columns.
            let whole: String = row_text(&d.app.events()[i].kind)
                .split_whitespace()
                .collect();
            let shown: String = events_text(&mut d.app, w, h).split_whitespace().collect();
            assert!(
                shown.contains(&whole),
                "row {pos} at {w}x{h}: {whole:?} not whole in\n{shown}"
            );
            long += usize::from(whole.len() > 60);
            d.app.update(key(KeyCode::Char('j')));
        }
    }
    assert!(
        long > 0,
        "no row was wider than the pane: the test proves nothing"
    );
    // The snapshot: the snip row selected (its reason and sizes on two lines at 80x24).
    d.app.update(key(KeyCode::Char('g')));
    let snip = rows
        .iter()
        .position(|&i| {
            matches!(&d.app.events()[i].kind,
                EventKind::Stage { report, .. } if report.stage == Stage::SnipCompact)
        })
        .expect("a snip row");
    for _ in 0..snip {
        d.app.update(key(KeyCode::Char('j')));
    }
    for (w, h) in SIZES {
        let text = masked(screen(&mut d.app, w, h), dir.path());
        insta::assert_snapshot!(format!("events_reason_{w}x{h}"), text);
    }
}

fn stage_pause() -> NextStep {
    let mut preview = StageReport::not_run(
        Stage::MicroCompact,
        6_647,
        19,
        String::new(),
        ctxlab::compact::SizeUnit::Chars,
    );
    preview.ran = true;
    preview.changed = true;
    preview.size_after = 5_471;
    preview.messages_after = 19;
    preview.changes = vec![Change::Placeholder {
        message: 12,
        block: 0,
        tool_use_id: None,
        chars: 1_328,
    }];
    preview.reason = "9 results > keep 3; 1 older over 120 chars".into();
    NextStep::Stage {
        stage: Stage::MicroCompact,
        preview,
    }
}

/// The tour's pauses, each kind once, with its longest words.
fn pauses() -> Vec<NextStep> {
    vec![
        stage_pause(),
        NextStep::Summarize {
            stage: Stage::CompactHistory,
            messages: 9,
            size: 32_137,
            reason: "requested, focus: the parse_line bug in src/parser.rs and its tests".into(),
            focus: Some("the parse_line bug in src/parser.rs and its tests".into()),
        },
        NextStep::Reactive {
            stage: Stage::ReactiveCompact,
            api_message: "prompt is too long: 45,226 chars > 42,500 maximum (scripted window)"
                .into(),
            messages: 52,
            size: 45_226,
            replaced: 47,
            kept: 5,
        },
        NextStep::SummaryCall {
            stage: Stage::CompactHistory,
            replaced: 9,
            chars: 32_853,
            focus: Some("the parse_line bug in src/parser.rs and its tests".into()),
            transcript: ".transcripts/transcript_1700000000.jsonl".into(),
        },
        NextStep::ModelCall {
            messages: 52,
            size: 44_910,
        },
    ]
}

/// The paused status line fits at 80 and 120 columns for every kind of pause: the whole
/// sentence when it fits, else the short one, never a sentence cut mid-word (before: "1
/// result -" at 80 columns, the keys and the provider cut at 120).
#[test]
fn the_paused_status_line_is_never_cut() {
    for next in pauses() {
        let mut a = app();
        a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
        a.update(Msg::Agent(AgentEvent::Paused { next: next.clone() }));
        for (w, h) in SIZES {
            let text = screen(&mut a, w, h);
            let top = text.lines().next().unwrap_or_default().to_string();
            assert!(top.starts_with(" PAUSED "), "{top}");
            assert!(!top.contains('…'), "cut at {w}: {top}");
            let full = next.describe();
            let short = ctxlab::tui::pause::short(&next);
            assert!(
                top.contains(&full) || top.contains(&short),
                "neither sentence whole at {w}: {top}"
            );
            if w == 120 && full.len() + 9 <= 120 {
                assert!(top.contains(&full), "the full sentence fits at 120: {top}");
            }
        }
    }
    // The snapshot: a stage pause at both sizes.
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    d.send(AgentEvent::StepModeChanged { on: true });
    d.send(AgentEvent::Paused {
        next: stage_pause(),
    });
    for (w, h) in SIZES {
        let text = masked(screen(&mut d.app, w, h), dir.path());
        insta::assert_snapshot!(format!("paused_stage_{w}x{h}"), text);
    }
}

const NO_KEY: &str = "No API key found: running the embedded scripted model. Set \
                      ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local server) to use a real model.";
const DEMO: &str = "Demo workspace: /home/teacher/.local/share/ctxlab/workspaces/tour-1796006552";

/// At 80x24 the hint line offers the keys from the first second, in step mode the step
/// keys first; the notices are read whole in the events pane (and the legend) instead of a
/// page at a time for 10-20 s in the hint line.
#[test]
fn start_up_notices_leave_the_hint_line_to_the_keys() {
    let mut a = app();
    crate::support::start_notices(&mut a, vec![NO_KEY.into(), DEMO.into()]);
    for tick in 0..3 {
        let text = screen(&mut a, 80, 24);
        let hint = text.lines().nth(23).unwrap_or_default();
        assert!(hint.starts_with("j/k move"), "tick {tick}: {hint}");
        assert!(hint.ends_with("? help  q quit"), "tick {tick}: {hint}");
        a.update(Msg::Tick);
    }
    a.update(Msg::Agent(AgentEvent::StepModeChanged { on: true }));
    let text = screen(&mut a, 80, 24);
    let hint = text.lines().nth(23).unwrap_or_default();
    assert!(
        hint.starts_with("Space step  s stage  c call  p back"),
        "{hint}"
    );
    // Read whole in the events pane at 120x40.
    let shown = events_text(&mut a, 120, 40);
    // A path longer than a line is cut by columns: compared without spaces.
    let shown: String = shown.split_whitespace().collect();
    for notice in [NO_KEY, DEMO] {
        let whole: String = format!("notice: {notice}").split_whitespace().collect();
        assert!(shown.contains(&whole), "{notice} not whole in\n{shown}");
    }
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("start_notices_{w}x{h}"), screen(&mut a, w, h));
    }
}

fn submitted(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(UserCommand::Submit(r)) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// On a first run the scenario's request waits for the legend to close: before, the
/// binary sent it at once and every compaction had happened behind the legend before the
/// teacher pressed Enter. Without the legend it goes as the loop starts.
#[test]
fn the_tour_waits_for_the_first_run_legend_to_close() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ctxlab/legend-seen");
    let mut a = app();
    a.update(Msg::Start(Box::new(Startup {
        unseen_legend: Some(marker),
        request: Some("The parser test fails".into()),
        ..Startup::default()
    })));
    assert!(matches!(a.top_layer(), Some(Layer::Legend(_))));
    assert!(submitted(&a.update(Msg::LoopStarted)).is_empty());
    for _ in 0..50 {
        assert!(submitted(&a.update(Msg::Tick)).is_empty());
    }
    let closed = a.update(key(KeyCode::Enter));
    assert_eq!(
        submitted(&closed),
        vec!["The parser test fails".to_string()]
    );
    // `l` and Enter again: the legend is not a first run's any more; nothing is sent twice.
    a.update(key(KeyCode::Char('l')));
    assert!(submitted(&a.update(key(KeyCode::Enter))).is_empty());

    let mut b = app();
    b.update(Msg::Start(Box::new(Startup {
        request: Some("go".into()),
        ..Startup::default()
    })));
    assert_eq!(
        submitted(&b.update(Msg::LoopStarted)),
        vec!["go".to_string()]
    );
}

/// `p` in step mode steps back one model call: it continues from the last call made, so
/// the agent (still in step mode) pauses again before that call's stages. Outside step
/// mode it says how to get there.
#[test]
fn p_steps_back_one_model_call_in_step_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut d: Driver = session(dir.path(), false);
    crate::support::focus(&mut d.app, '1');
    let fx = d.app.update(key(KeyCode::Char('p')));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        d.app
            .notice_text()
            .unwrap_or_default()
            .contains("step mode"),
        "{:?}",
        d.app.notice_text()
    );
    paused(&mut d);
    let last = d.app.timeline().calls.last().expect("calls").number;
    // The fake session plays the scripted model: no question, the continue goes at once.
    let fx = d.app.update(key(KeyCode::Char('p')));
    match fx.as_slice() {
        [Effect::Continue(from)] => assert_eq!(from.call, last),
        other => panic!("expected a continue from call {last}, got {other:?}"),
    }
}
