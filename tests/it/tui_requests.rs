//! The requests view of an opened capture (`R`): offered on the hint line of an opened
//! capture only, made by a job (the rows `ctxlab inspect --requests` prints), one row per
//! request with its change label, and the selected request's detail; snapshots at 80x24
//! and 120x40. A session that is no capture says so instead.

use std::path::Path;

use crossterm::event::KeyCode;
use ctxlab::tui::analysis::AnalysisWork;
use ctxlab::tui::app::Startup;
use ctxlab::tui::work::Work;
use ctxlab::tui::{Effect, Msg};

use crate::capture_view::write_fixture;
use crate::support::{Driver, key, press, screen, settle};

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

fn opened_capture(dir: &Path) -> Driver {
    let path = dir.join("capture-1-1.jsonl");
    write_fixture(&path);
    let mut d = driver(dir);
    let fx = crate::support::open_session(&mut d.app, path);
    settle(&mut d.app, fx);
    assert!(d.app.sessions().open().unwrap().complete());
    d
}

/// `R`: the job it asks for, run in place.
fn press_r(d: &mut Driver) {
    let fx = d.app.update(key(KeyCode::Char('R')));
    assert!(
        matches!(
            fx.as_slice(),
            [Effect::Work(Work::Analysis(AnalysisWork::Requests { .. }))]
        ),
        "{fx:?}"
    );
    assert!(d.app.requests_view().is_none(), "nothing before the job");
    settle(&mut d.app, fx);
}

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/tmp")
}

#[test]
fn r_in_an_opened_capture_lists_its_requests_with_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = opened_capture(dir.path());
    let hints = screen(&mut d.app, 120, 40);
    let last = hints.lines().last().unwrap_or_default().to_string();
    assert!(last.contains("R requests"), "{last}");
    press_r(&mut d);
    let v = d.app.requests_view().expect("the requests view");
    assert_eq!(v.requests().rows.len(), 6);
    let text = screen(&mut d.app, 120, 40);
    for label in [
        "first request",
        "side request",
        "cleared tool result",
        "dropped system reminder",
        "summary replacing history",
    ] {
        assert!(text.contains(label), "{label}:\n{text}");
    }
    // The selected request's detail: move to the cleared one (row 4).
    press(&mut d.app, KeyCode::Char('g'));
    for _ in 0..3 {
        press(&mut d.app, KeyCode::Char('j'));
    }
    assert_eq!(d.app.requests_view().unwrap().selected(), 3);
    let text = screen(&mut d.app, 120, 40);
    assert!(
        text.contains("cleared tool result: read_file t1 (message 2), 30,800 -> 33 chars"),
        "{text}"
    );
    insta::assert_snapshot!("requests_120x40", masked(text, dir.path()));
    // J scrolls the detail to the strategies.
    for _ in 0..3 {
        press(&mut d.app, KeyCode::Char('J'));
    }
    let text = screen(&mut d.app, 80, 24);
    insta::assert_snapshot!("requests_80x24", masked(text, dir.path()));
    press(&mut d.app, KeyCode::Esc);
    assert!(d.app.requests_view().is_none());
    assert!(
        d.app.sessions().open().is_some(),
        "Esc closes the view only"
    );
}

#[test]
fn r_in_a_session_that_is_no_capture_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    let mut d = driver(dir.path());
    let fx = crate::support::open_session(&mut d.app, path);
    settle(&mut d.app, fx);
    let fx = d.app.update(key(KeyCode::Char('R')));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(d.app.requests_view().is_none());
    let notice = d.app.notice_text().unwrap_or_default();
    assert!(notice.contains("only a ctxlab proxy capture"), "{notice}");
}

/// The selected request's detail is wrapped, never cut, at 80 and 120 columns (before, at
/// 80 columns "…(the agent sent 31,770 chars, 5 m…" and each strategy's change were cut at
/// the edge): no detail line ends in `…`, and every detail row's words are on screen.
#[test]
fn the_requests_detail_wraps_instead_of_cutting() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = opened_capture(dir.path());
    press_r(&mut d);
    let rows = d.app.requests_view().unwrap().requests().rows.len();
    let mut wrapped = 0;
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        press(&mut d.app, KeyCode::Char('g'));
        for _ in 0..rows {
            // Every page of the detail.
            for _ in 0..8 {
                let text = screen(&mut d.app, w, h);
                let detail: Vec<&str> = text
                    .lines()
                    .skip_while(|l| !l.contains("──────"))
                    .skip(1)
                    .collect();
                for line in &detail {
                    let inside = line.trim_end_matches('┃').trim_end();
                    assert!(!inside.ends_with('…'), "cut at {w}: {line}\n{text}");
                }
                wrapped += detail
                    .iter()
                    .filter(|l| l.starts_with("┃    ") && !l.contains("  ~"))
                    .count();
                press(&mut d.app, KeyCode::Char('J'));
            }
            press(&mut d.app, KeyCode::Char('j'));
        }
    }
    assert!(
        wrapped > 0,
        "no line needed wrapping: the test proves nothing"
    );
}
