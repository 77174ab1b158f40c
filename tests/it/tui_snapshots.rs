//! Snapshots of every pane and overlay, rendered into ratatui's `TestBackend` at 80x24 and
//! 120x40 from the deterministic fake session in `support`. The workspace's temp path is
//! masked; times come from the tick counter, so they are deterministic.

use std::path::Path;

use crate::support::{Driver, key, paused, press, screen, session, type_text};
use crossterm::event::KeyCode;
use ctxlab::compact::summarize::transcript_text;
use ctxlab::message::{Message, block};
use ctxlab::tui::Msg;
use ctxlab::tui::app::{OutputFile, TranscriptFile};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/workspace")
}

fn snap_all(name: &str, d: &mut Driver, dir: &Path) {
    for (w, h) in SIZES {
        let text = masked(screen(&mut d.app, w, h), dir);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

fn fake_session() -> (tempfile::TempDir, Driver) {
    let dir = tempfile::tempdir().unwrap();
    let d = session(dir.path(), false);
    (dir, d)
}

#[test]
fn conversation_pane() {
    let (dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '1');
    snap_all("conversation", &mut d, dir.path());
}

#[test]
fn conversation_expanded_row() {
    let (dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '1');
    d.app.update(key(KeyCode::Char('g')));
    d.app.update(key(KeyCode::Enter));
    snap_all("conversation_expanded", &mut d, dir.path());
}

#[test]
fn conversation_full_session_view() {
    let (dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '1');
    d.app.update(key(KeyCode::Char('v')));
    snap_all("conversation_session", &mut d, dir.path());
}

#[test]
fn streaming_reply_and_running_tool() {
    let (dir, mut d) = fake_session();
    d.send(ctxlab::agent::events::AgentEvent::TurnStarted {
        request: "go on".into(),
    });
    d.send(ctxlab::agent::events::AgentEvent::TextDelta {
        text: "Looking at the lexer next;\nthe tokens for numbers".into(),
    });
    d.ticks(7);
    snap_all("streaming", &mut d, dir.path());
    d.send(ctxlab::agent::events::AgentEvent::ToolStarted {
        id: "toolu_99".into(),
        name: "bash".into(),
        input: json!({"command": "sleep 5"}),
    });
    d.ticks(23);
    let text = masked(screen(&mut d.app, 120, 40), dir.path());
    insta::assert_snapshot!("running_tool_status", text.lines().next().unwrap_or(""));
}

#[test]
fn events_pane_with_unchanged_stages() {
    let (dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '2');
    snap_all("events", &mut d, dir.path());
    d.app.update(key(KeyCode::Char('u')));
    snap_all("events_all", &mut d, dir.path());
}

#[test]
fn diff_view() {
    let (dir, mut d) = fake_session();
    crate::support::focus(&mut d.app, '2');
    d.app.update(key(KeyCode::Char('g')));
    // The snip row: the first event whose stage is snip_compact.
    let pos = d
        .app
        .visible_events()
        .iter()
        .position(|&i| match &d.app.events()[i].kind {
            ctxlab::tui::app::EventKind::Stage { report, .. } => {
                report.stage == ctxlab::compact::Stage::SnipCompact
            }
            _ => false,
        })
        .unwrap();
    for _ in 0..pos {
        d.app.update(key(KeyCode::Char('j')));
    }
    d.app.update(key(KeyCode::Enter));
    snap_all("diff_snip", &mut d, dir.path());
}

fn write_outputs(d: &mut Driver, dir: &Path) -> String {
    let path = d
        .app
        .conversation()
        .history()
        .iter()
        .find_map(|r| r.info().persisted_paths.first().cloned())
        .unwrap();
    let full = dir.join(&path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    let text: String = (1..=60)
        .map(|i| {
            if i % 7 == 0 {
                format!("test parser::number_{i} ... FAILED\n")
            } else {
                format!("test parser::case_{i} ... ok\n")
            }
        })
        .collect();
    std::fs::write(&full, text).unwrap();
    crate::support::files_listed(
        &mut d.app,
        vec![
            OutputFile {
                relative: path.clone(),
                bytes: 4_200,
                age_secs: Some(95),
            },
            OutputFile {
                relative: ".task_outputs/tool-results/toolu_earlier.txt".into(),
                bytes: 212_004,
                age_secs: Some(7_300),
            },
        ],
        vec![],
    );
    path
}

#[test]
fn outputs_browser_and_viewer_search() {
    let (dir, mut d) = fake_session();
    write_outputs(&mut d, dir.path());
    crate::support::focus(&mut d.app, '3');
    snap_all("outputs", &mut d, dir.path());
    press(&mut d.app, KeyCode::Enter);
    d.app.update(key(KeyCode::Char('/')));
    type_text(&mut d.app, "failed");
    d.app.update(key(KeyCode::Enter));
    d.app.update(key(KeyCode::Char('n')));
    snap_all("viewer_search", &mut d, dir.path());
    d.app.update(key(KeyCode::Esc));
    // `m` jumps to the conversation row holding the marker.
    d.app.update(key(KeyCode::Char('m')));
    assert_eq!(d.app.focus(), ctxlab::tui::app::Pane::Conversation);
    snap_all("outputs_jump", &mut d, dir.path());
}

fn long_transcript() -> Vec<Message> {
    let mut t = vec![Message::user_text("Refactor the lexer")];
    for i in 0..16 {
        let id = format!("toolu_r{i:02}");
        t.push(Message::assistant_blocks(vec![block::tool_use(
            &id,
            "bash",
            json!({"command": format!("cargo test lexer_{i}")}),
        )]));
        let size = if i == 5 { 6_000 } else { 700 };
        t.push(Message::user_blocks(vec![block::tool_result(
            &id,
            format!("lexer_{i}: {}", "ok ".repeat(size / 3)),
        )]));
    }
    t.push(Message::assistant_blocks(vec![block::text("Done.")]));
    t
}

#[test]
fn transcripts_browser_and_replay() {
    let (dir, mut d) = fake_session();
    let rel = ".transcripts/transcript_1700000000.jsonl";
    let full = dir.path().join(rel);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    let t = long_transcript();
    std::fs::write(&full, transcript_text(&t)).unwrap();
    crate::support::files_listed(
        &mut d.app,
        vec![],
        vec![TranscriptFile {
            relative: rel.into(),
            bytes: 30_123,
            age_secs: Some(42),
            messages: Some(t.len()),
        }],
    );
    crate::support::focus(&mut d.app, '4');
    snap_all("transcripts", &mut d, dir.path());
    // Opening and replaying are jobs the loop runs off the UI task: until the loop hands
    // the result back, the pane and the status bar say what is loading.
    let load = d.app.update(key(KeyCode::Enter));
    d.ticks(3);
    snap_all("transcript_loading", &mut d, dir.path());
    crate::support::settle(&mut d.app, load);
    d.ticks(1);
    snap_all("transcript_open", &mut d, dir.path());
    press(&mut d.app, KeyCode::Char('r'));
    let replay = d.app.transcripts().open().unwrap().replay().unwrap();
    assert!(!replay.stages.is_empty());
    assert!(
        !dir.path().join(".task_outputs").exists(),
        "replay writes nothing"
    );
    snap_all("transcript_replay", &mut d, dir.path());
    // The stage rows follow the selected message's turn.
    for _ in 0..20 {
        d.app.update(key(KeyCode::Char('j')));
    }
    snap_all("transcript_replay_scrolled", &mut d, dir.path());
}

#[test]
fn help_overlay() {
    let (dir, mut d) = fake_session();
    d.app.update(key(KeyCode::Esc));
    crate::support::focus(&mut d.app, '?');
    snap_all("help", &mut d, dir.path());
}

#[test]
fn config_panel() {
    let (dir, mut d) = fake_session();
    d.app.update(key(KeyCode::Char('i')));
    type_text(&mut d.app, "/config");
    d.app.update(key(KeyCode::Enter));
    for _ in 0..7 {
        d.app.update(key(KeyCode::Char('j')));
    }
    d.app.update(key(KeyCode::Enter));
    type_text(&mut d.app, "0");
    snap_all("config", &mut d, dir.path());
}

#[test]
fn paused_status_bar() {
    let (dir, mut d) = fake_session();
    paused(&mut d);
    snap_all("paused", &mut d, dir.path());
}

#[test]
fn too_small() {
    let (dir, mut d) = fake_session();
    let text = masked(screen(&mut d.app, 60, 20), dir.path());
    insta::assert_snapshot!("too_small_60x20", text);
    let text = masked(screen(&mut d.app, 80, 23), dir.path());
    assert!(text.contains("terminal too small (need 80x24, have 80x23)"));
}

#[test]
fn no_color_uses_no_colours() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    d.app.update(Msg::Resize(120, 40));
    for setup in ["", "2", "?"] {
        if let Some(c) = setup.chars().next() {
            d.app.update(key(KeyCode::Esc));
            d.app.update(key(KeyCode::Char(c)));
        }
        let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
        t.draw(|f| ctxlab::tui::render(&d.app, f)).unwrap();
        let buf = t.backend().buffer();
        for cell in buf.content() {
            assert_eq!(cell.fg, Color::Reset, "fg colour with NO_COLOR: {cell:?}");
            assert_eq!(cell.bg, Color::Reset, "bg colour with NO_COLOR: {cell:?}");
        }
    }
}

/// The x of the last cell of every conversation row's `tok` (the right end of the size
/// column), in buffer cells: display columns, whatever the row's text.
fn tok_ends(buf: &ratatui::buffer::Buffer, main: ratatui::layout::Rect) -> Vec<u16> {
    let mut out = Vec::new();
    for y in main.top()..main.bottom() {
        for x in main.left() + 2..main.right() {
            if [x - 2, x - 1, x].map(|x| buf[(x, y)].symbol()) == ["t", "o", "k"] {
                out.push(x);
                break;
            }
        }
    }
    out
}

/// Columns are measured in display width: a CJK request and an emoji reply take two columns
/// per character, and the size column stays in line with the ASCII rows.
#[test]
fn wide_characters_keep_columns_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), false);
    d.append(Message::user_text(
        "解析器のテストが失敗しています。数値の境界条件を直してから全部のテストを実行してください",
    ));
    d.append(Message::assistant_blocks(vec![block::text(
        "🚀 修正しました 🎉 all 12 tests pass ✅ and the 🐛 in parse_number is gone for good",
    )]));
    d.append(Message::user_text("plain ascii request, for comparison"));
    d.ticks(1);
    crate::support::focus(&mut d.app, '1');
    for (w, h) in SIZES {
        d.app.update(Msg::Resize(w, h));
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| ctxlab::tui::render(&d.app, f)).unwrap();
        let main = d.app.areas().unwrap().main;
        let ends = tok_ends(t.backend().buffer(), main);
        assert_eq!(ends.len(), 3, "one size column per message row");
        assert!(
            ends.iter().all(|&x| x == ends[0]),
            "size columns out of line at {w}x{h}: {ends:?}"
        );
        let text = masked(screen(&mut d.app, w, h), dir.path());
        insta::assert_snapshot!(format!("wide_chars_{w}x{h}"), text);
    }
}
