//! The first minute (focus outside the input, the legend remembered through a job,
//! start-up notices read in full, `? help  q quit` on every hint line), a replay that says
//! what the next call would do, and a theme that reads on light terminals.

use super::{SIZES, app, fake_session, snip_pause};
use crate::support::{key, screen, settle};
use crossterm::event::KeyCode;
use ctxlab::agent::events::AgentEvent;
use ctxlab::compact::summarize::transcript_text;
use ctxlab::compact::{PipelineConfig, Stage, Strategy};
use ctxlab::message::{Message, block};
use ctxlab::tui::app::{EventKind, Layer, Pane, Startup, TranscriptFile};
use ctxlab::tui::theme::FADING_COLORS;
use ctxlab::tui::work::Work;
use ctxlab::tui::{App, Effect, Msg};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use serde_json::json;

/// The first minute: focus outside the input (`q` quits, `?` helps), a legend remembered
/// through a job once it is closed, notices read in full.
#[test]
fn the_first_minute() {
    let mut a = app();
    assert_eq!(a.focus(), Pane::Conversation);
    a.update(key(KeyCode::Char('?')));
    assert!(matches!(a.top_layer(), Some(Layer::Help(_))));
    assert_eq!(a.input_text(), "");
    a.update(key(KeyCode::Esc));
    assert_eq!(a.update(key(KeyCode::Char('q'))), vec![Effect::Quit]);

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ctxlab/legend-seen");
    // What `run` knows before the loop (here: a legend not seen yet) comes as a message.
    a.update(Msg::Start(Box::new(Startup {
        unseen_legend: Some(marker.clone()),
        ..Startup::default()
    })));
    let text = screen(&mut a, 80, 24);
    for needle in [
        "Legend",
        "B  tool_result_budget",
        "R  reactive_compact",
        "> 50 messages: keep the first 3, last 47",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    // The step keys whole, the step back with them (below the fold at 80x24).
    let tall = screen(&mut a, 120, 40);
    assert!(
        tall.contains("Step    Space step  s next stage  c next call  p back a call"),
        "{tall}"
    );
    let fx = a.update(key(KeyCode::Enter));
    assert_eq!(
        fx,
        vec![Effect::Work(Work::RememberLegend {
            path: marker.clone()
        })]
    );
    assert!(a.top_layer().is_none());
    assert!(settle(&mut a, fx).is_empty());
    assert!(marker.is_file(), "remembered");
    // `l` shows it again; closing it writes nothing more.
    a.update(key(KeyCode::Char('l')));
    assert!(matches!(a.top_layer(), Some(Layer::Legend(_))));
    assert!(a.update(key(KeyCode::Esc)).is_empty());
}

/// Under another strategy the legend says which stages that one runs; under s08 it does
/// not need to.
#[test]
fn the_legend_names_the_stages_of_another_strategy() {
    let mut a = app();
    a.update(crate::support::key(crossterm::event::KeyCode::Char('l')));
    assert!(!screen(&mut a, 120, 40).contains("--strategy"));
    let mut b = App::new(
        "/workspace".into(),
        "test".into(),
        PipelineConfig::default().with_strategy(Strategy::S06),
        false,
    );
    b.update(Msg::Resize(120, 40));
    b.update(crate::support::key(crossterm::event::KeyCode::Char('l')));
    let text = screen(&mut b, 120, 40);
    assert!(
        text.contains("--strategy s06 runs micro_compact, auto_compact"),
        "{text}"
    );
}

/// Start-up notices are events rows and the legend lists them in full (the hint line
/// keeps the keys: `screens::start_up_notices_leave_the_hint_line_to_the_keys`).
#[test]
fn start_up_notices_are_read_in_full_in_the_events_pane_and_the_legend() {
    let mut a = app();
    let no_key = "No API key found: running the embedded scripted model. Set ANTHROPIC_API_KEY \
                  (or OPENAI_BASE_URL for a local server) to use a real model.";
    let ws = "Demo workspace: /home/teacher/.local/share/ctxlab/workspaces/tour-1796006552";
    crate::support::start_notices(&mut a, vec![no_key.into(), ws.into()]);
    // Both are events rows, and the legend lists them in full.
    let notices = a
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Notice { .. }))
        .count();
    assert_eq!(notices, 2);
    a.update(crate::support::key(crossterm::event::KeyCode::Char('l')));
    let text = screen(&mut a, 120, 40);
    for part in [
        "No API key found: running the embedded scripted model.",
        "(or OPENAI_BASE_URL for a local server) to use a real",
        "/home/teacher/.local/share/ctxlab/workspaces/tour-1796006552",
    ] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
}

#[test]
fn every_hint_line_ends_with_help_and_quit() {
    let (_dir, mut d) = fake_session();
    for (w, h) in SIZES {
        for pane in ['1', '2', '3', '4', '5'] {
            crate::support::focus(&mut d.app, pane);
            let text = screen(&mut d.app, w, h);
            let hint = text.lines().nth(h as usize - 1).unwrap();
            assert!(
                hint.contains("? help  q quit"),
                "pane {pane} at {w}x{h}: {hint}"
            );
        }
        snip_pause(&mut d);
        crate::support::focus(&mut d.app, '1');
        let text = screen(&mut d.app, w, h);
        let hint = text.lines().nth(h as usize - 1).unwrap();
        assert!(
            hint.starts_with("Space step  s stage  c call  p back"),
            "{hint}"
        );
        assert!(hint.contains("? help  q quit"), "{hint}");
    }
}

/// A transcript saved just before a summary ends over the limit, before a call: the replay
/// says what that call would do instead of "no stage would change this session".
#[test]
fn a_replayed_transcript_says_what_the_next_call_would_do() {
    let (dir, mut d) = fake_session();
    let rel = ".transcripts/transcript_1700000000.jsonl";
    // Three results of 4,000 chars: within micro's 3, over a 10,000 limit only at the end.
    crate::support::set_config(
        &mut d.app,
        PipelineConfig {
            context_limit: 10_000,
            ..PipelineConfig::default()
        },
    );
    let mut t = vec![Message::user_text("Summarize the logs")];
    for i in 0..3 {
        let id = format!("toolu_{i}");
        t.push(Message::assistant_blocks(vec![block::tool_use(
            &id,
            "bash",
            json!({"command": "cat log"}),
        )]));
        t.push(Message::user_blocks(vec![block::tool_result(
            &id,
            "log line\n".repeat(450),
        )]));
    }
    let full = dir.path().join(rel);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(&full, transcript_text(&t)).unwrap();
    crate::support::files_listed(
        &mut d.app,
        vec![],
        vec![TranscriptFile {
            relative: rel.into(),
            bytes: 14_000,
            age_secs: Some(5),
            messages: Some(t.len()),
        }],
    );
    crate::support::focus(&mut d.app, '4');
    let fx = d.app.update(key(KeyCode::Char('r')));
    settle(&mut d.app, fx);
    let replay = d
        .app
        .transcripts()
        .open()
        .unwrap()
        .replay()
        .cloned()
        .unwrap();
    let next = replay.next_call.expect("the transcript ends before a call");
    assert!(next.iter().any(|r| r.stage == Stage::CompactHistory));
    let text = screen(&mut d.app, 120, 40);
    assert!(replay.stages.is_empty(), "no earlier call changed anything");
    assert!(text.contains("next call compact_history"), "{text}");
    assert!(text.contains("> 10,000"), "{text}");
    assert!(!text.contains("no stage would change"), "{text}");
}

/// Light terminals: no text in a colour that fades on white, the selection bar in the
/// terminal's own colours swapped, and a background only where both colours are set.
#[test]
fn the_theme_reads_on_a_light_terminal() {
    let (_dir, mut d) = fake_session();
    snip_pause(&mut d);
    d.send(AgentEvent::PromptTooLong {
        message: "prompt is too long".into(),
        messages: 3,
        estimate_chars: 10,
    });
    for setup in ['1', '2', '?'] {
        let overlay = setup == '?';
        crate::support::focus(&mut d.app, setup);
        d.app.update(Msg::Resize(120, 40));
        let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
        t.draw(|f| ctxlab::tui::render(&d.app, f)).unwrap();
        let buf = t.backend().buffer();
        let mut reversed = 0;
        for cell in buf.content() {
            assert!(
                !FADING_COLORS.contains(&cell.fg),
                "a fading colour on {setup}: {cell:?}"
            );
            if cell.bg != Color::Reset {
                assert_eq!(
                    (cell.fg, cell.bg),
                    (Color::Black, Color::Yellow),
                    "a background without its foreground: {cell:?}"
                );
            }
            if cell.modifier.contains(Modifier::REVERSED) && cell.fg == Color::Reset {
                reversed += 1;
            }
        }
        assert!(
            overlay || reversed > 20,
            "no reverse-video selection bar on {setup}"
        );
    }
}

/// The selection bar: every cell of the selected conversation row is reverse video in the
/// terminal's colours (no fixed dark background).
#[test]
fn the_selected_row_is_reverse_video() {
    let (_dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '1');
    d.app.update(Msg::Resize(120, 40));
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ctxlab::tui::render(&d.app, f)).unwrap();
    let buf = t.backend().buffer();
    let main = d.app.areas().unwrap().main;
    let y = main.top()
        + 1
        + (d.app
            .conversation()
            .list(ctxlab::tui::app::ConvView::Model)
            .selected
            - d.app
                .conversation()
                .list(ctxlab::tui::app::ConvView::Model)
                .top) as u16;
    for x in main.left() + 1..main.right() - 1 {
        let cell = &buf[(x, y)];
        assert!(cell.modifier.contains(Modifier::REVERSED), "{cell:?}");
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
}
