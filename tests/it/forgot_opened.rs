//! The forgot and "where the context goes" views from the places that need a job: `F` on
//! an opened session's compaction row (the same lines `ctxlab forgot FILE --compaction N`
//! prints), `w` in an opened session (its recorded calls, "not in the file" apart), `F` on
//! the compare view's selected strategy; and the context view from the main screen (`w`
//! in the conversation pane, a click on the gauge). Driven through `App::update`, the jobs
//! run in place (`support::settle`); a snapshot of the opened session's forgot view.

use std::path::{Path, PathBuf};

use crate::support::{Driver, key, press, screen, settle};
use crate::tui_timeline::tour_app;
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ctxlab::commands::forgot::{ForgotOptions, find_forgotten};
use ctxlab::compact::Strategy;
use ctxlab::forgot::text::{VIEW_LAYOUT, report_lines};
use ctxlab::tui::analysis::AnalysisWork;
use ctxlab::tui::app::{Layer, Startup};
use ctxlab::tui::sessions::ViewRow;
use ctxlab::tui::work::Work;
use ctxlab::tui::{Effect, Msg};

fn forgot_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/forgot")
        .join(name)
}

fn driver(dir: &Path) -> Driver {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut d = Driver::new(&ws, false);
    d.app.update(Msg::Start(Box::new(Startup {
        scratch_root: Some(dir.join("data/scratch")),
        ..Startup::default()
    })));
    d
}

fn open(d: &mut Driver, path: PathBuf) {
    let fx = crate::support::open_session(&mut d.app, path);
    settle(&mut d.app, fx);
    assert!(d.app.loading().is_none(), "opened");
    assert!(d.app.sessions().open().unwrap().complete());
}

fn select_row(d: &mut Driver, row: ViewRow) {
    let open = d.app.sessions().open().unwrap();
    let at = open
        .rows()
        .iter()
        .position(|r| *r == row)
        .unwrap_or_else(|| panic!("no row {row:?}"));
    press(&mut d.app, KeyCode::Char('g'));
    for _ in 0..at {
        press(&mut d.app, KeyCode::Char('j'));
    }
    assert_eq!(d.app.sessions().open().unwrap().list().selected, at);
}

fn viewer(d: &Driver) -> (String, Vec<String>) {
    match d.app.top_layer() {
        Some(Layer::Viewer(v)) => (v.title().to_string(), v.lines().to_vec()),
        other => panic!("no viewer: {other:?}"),
    }
}

/// `F` on compaction `k` (0-based) of the opened file: the job it asks for, then the
/// viewer's title and lines once it is done.
fn forgot_of(d: &mut Driver, path: &Path, k: usize) -> (String, Vec<String>) {
    select_row(d, ViewRow::Compaction(k));
    let fx = d.app.update(key(KeyCode::Char('F')));
    // The analysis is a job: nothing opens until it is done.
    match fx.as_slice() {
        [
            Effect::Work(Work::Analysis(AnalysisWork::Forgot {
                path: p,
                compaction,
                ..
            })),
        ] => {
            assert_eq!(p, path);
            assert_eq!(*compaction, k + 1);
        }
        other => panic!("not a forgot job: {other:?}"),
    }
    assert!(d.app.top_layer().is_none());
    assert!(d.app.loading().is_some(), "the screen waits for it");
    settle(&mut d.app, fx);
    assert!(d.app.loading().is_none());
    viewer(d)
}

/// What `ctxlab forgot FILE --compaction N` prints for that compaction.
fn cli_lines(path: &Path, n: usize) -> Vec<String> {
    let options = ForgotOptions {
        compaction: Some(n),
        replay: None,
    };
    let found = find_forgotten(path, &options).unwrap();
    report_lines(&found.report.compactions[0], &VIEW_LAYOUT)
}

#[test]
fn f_on_an_opened_claude_compaction_shows_what_the_cli_prints() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = forgot_fixture("claude_planted.jsonl");
    open(&mut d, path.clone());
    let (title, lines) = forgot_of(&mut d, &path, 1);
    assert_eq!(title, "what claude-code full forgot");
    let cli = cli_lines(&path, 2);
    assert_eq!(lines[..cli.len()], cli[..], "the same lines as the command");
    let text = lines.join("\n");
    assert!(
        text.contains("NOT CARRIED constraint  Never change the public API of src/ledger.rs"),
        "{text}"
    );
    assert!(text.contains("A check of mentions, not of meaning"));
    // The micro compaction before it: its cleared result, read again.
    press(&mut d.app, KeyCode::Esc);
    let (title, lines) = forgot_of(&mut d, &path, 0);
    assert_eq!(title, "what claude-code micro forgot");
    assert_eq!(lines[..cli_lines(&path, 1).len()], cli_lines(&path, 1)[..]);
    assert!(lines.join("\n").contains("toolu_r1"));
}

#[test]
fn f_on_an_opened_codex_compaction_applies_codex_s_rule() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = forgot_fixture("codex_planted.jsonl");
    open(&mut d, path.clone());
    let (title, lines) = forgot_of(&mut d, &path, 0);
    assert!(title.starts_with("what codex"), "{title}");
    let cli = cli_lines(&path, 1);
    assert_eq!(lines[..cli.len()], cli[..]);
}

#[test]
fn f_on_a_message_row_says_to_select_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = forgot_fixture("claude_planted.jsonl");
    open(&mut d, path);
    select_row(
        &mut d,
        ViewRow::Message {
            index: 0,
            dimmed: true,
        },
    );
    let fx = d.app.update(key(KeyCode::Char('F')));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(d.app.top_layer().is_none());
    assert!(
        d.app
            .notice_text()
            .is_some_and(|n| n.contains("select a compaction row")),
        "{:?}",
        d.app.notice_text()
    );
}

#[test]
fn the_opened_session_offers_f_and_w_and_its_forgot_view_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = forgot_fixture("claude_planted.jsonl");
    open(&mut d, path.clone());
    let hints = screen(&mut d.app, 120, 40);
    let last = hints.lines().last().unwrap_or_default().to_string();
    assert!(
        last.contains("F forgot") && last.contains("w context"),
        "{last}"
    );
    forgot_of(&mut d, &path, 1);
    let text = screen(&mut d.app, 80, 24)
        .replace(&dir.path().display().to_string(), "/tmp")
        .replace(env!("CARGO_MANIFEST_DIR"), "/repo");
    insta::assert_snapshot!("opened_forgot_80x24", text);
}

#[test]
fn w_in_an_opened_session_breaks_down_its_recorded_calls() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = forgot_fixture("claude_planted.jsonl");
    open(&mut d, path.clone());
    // The row of the last message before the full compaction: its call is selected.
    let at = d.app.sessions().open().unwrap().compactions()[1].at;
    select_row(
        &mut d,
        ViewRow::Message {
            index: at - 1,
            dimmed: true,
        },
    );
    let call = d.app.sessions().open().unwrap().selected_call().unwrap();
    let fx = d.app.update(key(KeyCode::Char('w')));
    assert!(
        matches!(
            fx.as_slice(),
            [Effect::Work(Work::Analysis(AnalysisWork::Calls { .. }))]
        ),
        "{fx:?}"
    );
    assert!(d.app.context_view().is_none(), "not before the job is done");
    settle(&mut d.app, fx);
    let v = d.app.context_view().expect("the context view opens");
    let session = ctxlab::session::load_session(&path).unwrap();
    let expected = ctxlab::breakdown::session::of_session(&session);
    assert_eq!(v.breakdown().calls, expected.calls, "as inspect --calls");
    assert_eq!(v.selected(), call);
    let c = v.call().unwrap();
    let sum: u64 = c.categories.iter().map(|x| x.tokens).sum();
    assert_eq!(sum, c.total_tokens);
    // The agent's system prompt and tools are not in the file: their own category.
    assert!(c.tokens_of("not_in_file") > 0, "{c:?}");
    assert_eq!(c.tokens_of("system_prompt"), 0);
    // Claude has no tokenizer here: an estimate calibrated on the session, marked `~`.
    assert!(v.breakdown().counting.is_estimate());
    assert!(c.total_text().starts_with('~'), "{}", c.total_text());
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("not in the file"), "{text}");
    press(&mut d.app, KeyCode::Esc);
    assert!(d.app.context_view().is_none());
    assert!(
        d.app.sessions().open().is_some(),
        "Esc closes only the view"
    );
}

#[test]
fn w_in_the_conversation_pane_opens_the_latest_call() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('1')));
    a.update(key(KeyCode::Char('w')));
    let v = a.context_view().expect("the view opens");
    let calls = a.timeline().calls.len();
    assert_eq!(v.selected(), calls - 1, "the latest call");
    assert_eq!(v.call().unwrap().call, calls);
}

#[test]
fn a_click_on_the_gauge_opens_the_latest_call() {
    let mut a = tour_app();
    let gauge = a.areas().unwrap().gauge;
    let click = |x, y| {
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        })
    };
    a.update(click(gauge.x + 1, gauge.y + 1));
    let v = a.context_view().expect("the view opens");
    let last = a.timeline().calls.len() - 1;
    assert_eq!(v.selected(), last);
    // A click where the gauge was, under the open view, leaves its selection alone.
    a.update(key(KeyCode::Char('h')));
    a.update(click(gauge.x + 1, gauge.y + 1));
    assert_eq!(a.context_view().unwrap().selected(), last - 1);
}

#[test]
fn f_in_the_compare_view_shows_what_the_selected_strategy_forgot() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    d.app.update(key(KeyCode::Esc));
    // s08's micro replaces results in this session; guarded keeps them.
    let fx = crate::compare_view::open_compare_live(
        &mut d.app,
        &crate::compare_view::teaching_session(),
        Some(vec![Strategy::Guarded, Strategy::S08]),
    );
    settle(&mut d.app, fx);
    let v = d.app.compare().unwrap();
    assert!(v.complete());
    assert_eq!(v.strategy(), 0);
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains(">guarded"), "{text}");
    assert!(text.contains("F forgot"), "{text}");
    press(&mut d.app, KeyCode::Tab);
    assert_eq!(d.app.compare().unwrap().strategy(), 1);
    assert!(screen(&mut d.app, 120, 40).contains(">s08"));
    press(&mut d.app, KeyCode::Tab);
    assert_eq!(d.app.compare().unwrap().strategy(), 0, "wraps around");
    press(&mut d.app, KeyCode::BackTab);
    assert_eq!(d.app.compare().unwrap().strategy(), 1);
    let v = d.app.compare().unwrap();
    let run = &v.runs()[1];
    assert_eq!(run.strategy, Strategy::S08);
    let quiet = run
        .calls
        .iter()
        .position(|c| c.stages.is_empty())
        .expect("a call s08 ran no stage before");
    let busy = run
        .calls
        .iter()
        .position(|c| !c.stages.is_empty())
        .expect("s08 compacts this session");
    let number = run.calls[busy].call;
    let goto = |d: &mut Driver, call: usize| {
        d.app.update(key(KeyCode::Char('g')));
        for _ in 0..call {
            d.app.update(key(KeyCode::Char('l')));
        }
        assert_eq!(d.app.compare().unwrap().call(), call);
    };
    goto(&mut d, quiet);
    let fx = d.app.update(key(KeyCode::Char('F')));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        d.app
            .notice_text()
            .is_some_and(|n| n.contains("ran no stage")),
        "{:?}",
        d.app.notice_text()
    );
    goto(&mut d, busy);
    let fx = d.app.update(key(KeyCode::Char('F')));
    match fx.as_slice() {
        [Effect::Work(Work::Analysis(AnalysisWork::ReplayForgot { config, call, .. }))] => {
            assert_eq!(config.strategy, Strategy::S08);
            assert_eq!(*call, number);
        }
        other => panic!("not a replay forgot job: {other:?}"),
    }
    settle(&mut d.app, fx);
    let (title, lines) = viewer(&d);
    assert_eq!(title, format!("what s08 forgot at call {number}"));
    let text = lines.join("\n");
    // A report per stage of s08's before that call, named by the call (a summary would
    // carry its compaction label too).
    assert!(
        lines
            .iter()
            .any(|l| l.contains("s08 ") && l.ends_with(&format!("before call {number}"))),
        "{text}"
    );
    assert!(text.contains("rule:"), "{text}");
    assert!(text.contains("A check of mentions, not of meaning"));
}
