//! What a class needs to find: the hint line and the legend name `t` (timeline) and `C`
//! (compare); `?` inside a view opens the help at that view's section; the legend lists
//! the stages and letters of the strategy in force (s06's under s06).

use crate::support::{app, key, screen, session};
use crossterm::event::KeyCode;
use ctxlab::compact::Strategy;
use ctxlab::compact::{PipelineConfig, Stage};
use ctxlab::tui::app::{EventKind, Layer};
use ctxlab::tui::keys::section;
use ctxlab::tui::{App, Msg};

/// The help's first body row on screen (the line under its title), and the whole screen.
fn help_top_line(a: &mut App) -> (String, String) {
    let text = screen(a, 120, 40);
    let lines: Vec<&str> = text.lines().collect();
    let title = lines
        .iter()
        .position(|l| l.contains(" Keys "))
        .unwrap_or_else(|| panic!("no help:\n{text}"));
    (lines[title + 1].to_string(), text)
}

fn assert_help_at(a: &mut App, heading: &str) {
    assert!(
        matches!(a.top_layer(), Some(Layer::Help(_))),
        "? opened no help"
    );
    let (first, text) = help_top_line(a);
    assert!(
        first.contains(&format!("── {heading}")),
        "the help opens at {heading:?}; first row {first:?}\n{text}"
    );
}

#[test]
fn question_mark_in_a_view_opens_the_help_at_that_view_s_section() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    let a = &mut d.app;
    crate::support::focus(a, '1');
    // The timeline.
    a.update(key(KeyCode::Char('t')));
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::TIMELINE);
    a.update(key(KeyCode::Esc));
    // The context view, from the timeline.
    a.update(key(KeyCode::Char('w')));
    assert!(a.context_view().is_some());
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::CONTEXT);
    a.update(key(KeyCode::Esc));
    assert!(a.context_view().is_some(), "the view is still there");
    a.update(key(KeyCode::Esc));
    // The compare view.
    a.update(key(KeyCode::Char('t')));
    crate::support::focus(a, '1');
    let fx = a.update(key(KeyCode::Char('C')));
    crate::support::settle(a, fx);
    assert!(a.compare().is_some());
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::COMPARE);
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Esc));
    assert!(a.compare().is_none());
    // The viewer, and back to it on Esc.
    crate::support::focus(a, '1');
    a.update(key(KeyCode::Char('o')));
    assert!(matches!(a.top_layer(), Some(Layer::Viewer(_))));
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::VIEWER);
    a.update(key(KeyCode::Esc));
    assert!(
        matches!(a.top_layer(), Some(Layer::Viewer(_))),
        "Esc returns to the viewer"
    );
    a.update(key(KeyCode::Esc));
    // The forgot view: F on the compaction's row.
    crate::support::focus(a, '2');
    a.update(key(KeyCode::Char('g')));
    let pos = a
        .visible_events()
        .iter()
        .position(|&i| {
            matches!(&a.events()[i].kind, EventKind::Stage { report, .. }
                if report.stage == Stage::CompactHistory && report.changed)
        })
        .unwrap();
    for _ in 0..pos {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Char('F')));
    assert!(
        matches!(a.top_layer(), Some(Layer::Viewer(_))),
        "forgot view"
    );
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::FORGOT);
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Esc));
    // A diff.
    a.update(key(KeyCode::Enter));
    assert!(matches!(a.top_layer(), Some(Layer::Diff(_))));
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::DIFF);
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Esc));
    // The config panel: `?` opens the help at its keys, over it.
    a.update(key(KeyCode::Char('i')));
    for c in "/config".chars() {
        a.update(key(KeyCode::Char(c)));
    }
    a.update(key(KeyCode::Enter));
    assert!(matches!(a.top_layer(), Some(Layer::Config(_))));
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::CONFIG);
    a.update(key(KeyCode::Esc));
    assert!(
        matches!(a.top_layer(), Some(Layer::Config(_))),
        "Esc leaves the help only"
    );
    a.update(key(KeyCode::Esc));
    // The sessions browser.
    let empty = dir.path().join("no-sessions");
    std::fs::create_dir_all(&empty).unwrap();
    let fx = crate::support::open_sessions(a, vec![empty]);
    crate::support::settle(a, fx);
    assert!(a.sessions().active());
    a.update(key(KeyCode::Char('?')));
    assert_help_at(a, section::SESSIONS);
}

#[test]
fn the_hint_line_and_the_legend_name_the_timeline_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    crate::support::focus(&mut d.app, '1');
    let text = screen(&mut d.app, 120, 40);
    let hint = text.lines().nth(39).unwrap();
    assert!(hint.contains("t timeline"), "{hint}");
    assert!(hint.contains("C compare"), "{hint}");
    let mut a = app();
    a.update(crate::support::key(crossterm::event::KeyCode::Char('l')));
    let legend = screen(&mut a, 120, 40);
    assert!(legend.contains("t timeline of every call"), "{legend}");
    assert!(legend.contains("C compare strategies"), "{legend}");
}

#[test]
fn the_legend_under_s06_lists_s06_s_stages_and_letters() {
    let mut a = App::new(
        "/workspace".into(),
        "test".into(),
        PipelineConfig::for_strategy(Strategy::S06),
        false,
    );
    a.update(Msg::Resize(120, 40));
    a.update(crate::support::key(crossterm::event::KeyCode::Char('l')));
    let text = screen(&mut a, 120, 40);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            Stage::ALL
                .iter()
                .any(|s| l.contains(&format!("  {}  ", s.name())))
        })
        .collect();
    assert_eq!(
        rows.len(),
        2,
        "micro and auto_compact only: {rows:?}\n{text}"
    );
    assert!(rows[0].contains("M  micro_compact"), "{rows:?}");
    assert!(
        rows[0].contains("older > 100 chars -> [Previous: …]"),
        "{rows:?}"
    );
    assert!(rows[1].contains("A  auto_compact"), "{rows:?}");
    assert!(
        rows[1].contains("> 50,000 tokens: summary replaces the history"),
        "{rows:?}"
    );
    for gone in ["tool_result_budget", "snip_compact", "reactive_compact"] {
        assert!(!rows.iter().any(|l| l.contains(gone)), "{gone}: {rows:?}");
    }
}
