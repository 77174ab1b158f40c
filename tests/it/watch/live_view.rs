//! The workbench's live view, folded by `App::update` from the follower's events
//! (`Msg::Live`): the events are what `session::watch` makes of real-format lines (read
//! with `LiveSession`, as the follower reads them). Rows in file order, each compaction
//! once (updated in place), the bell as an effect only for a compaction written while
//! following and only when it is on, a truncation's restart, `w` in the sessions
//! browser, Esc, and the view drawn at 80x24 and 120x40.

use std::path::PathBuf;

use crossterm::event::KeyCode;
use ctxlab::session::watch::{Chosen, FileEvent, LiveItem, LiveSession, WatchEvent};
use ctxlab::tui::live::{LiveMsg, LiveOptions, LiveRow};
use ctxlab::tui::{App, Effect, Msg};

use super::fixtures::*;
use crate::support::{app, key, screen, settle};

const PATH: &str = "/tmp/project/s1.jsonl";

fn chosen() -> Chosen {
    Chosen {
        path: PathBuf::from(PATH),
        why: "the file named on the command line".into(),
        scope: None,
    }
}

/// An app following `PATH` (as `ctxlab watch PATH` starts), and its follower's id.
pub(super) fn following(bell: bool) -> (App, u64) {
    let mut a = app();
    a.update(Msg::Live(LiveMsg::Setup(
        LiveOptions::new(bell).following(chosen()),
    )));
    let fx = a.update(Msg::LoopStarted);
    let fx = settle(&mut a, fx);
    let request = fx
        .iter()
        .find_map(|e| match e {
            Effect::Follow(r) => Some(r.clone()),
            _ => None,
        })
        .expect("the loop is asked to follow");
    assert_eq!(request.chosen().path, PathBuf::from(PATH));
    (a, request.id())
}

/// What the follower sends for these lines (numbered from `first`).
pub(super) fn items(live: &mut LiveSession, first: usize, lines: &[String]) -> Vec<LiveItem> {
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        live.push_line(first + k, l, &mut out);
    }
    out
}

pub(super) fn send(a: &mut App, id: u64, event: WatchEvent) -> Vec<Effect> {
    a.update(Msg::Live(LiveMsg::Event { id, event }))
}

pub(super) fn send_items(
    a: &mut App,
    id: u64,
    items: Vec<LiveItem>,
    caught_up: bool,
) -> Vec<Effect> {
    let mut fx = Vec::new();
    for item in items {
        fx.extend(send(
            a,
            id,
            WatchEvent::Item {
                item,
                caught_up,
                offset: 0,
                end: 0,
            },
        ));
    }
    fx
}

fn bells(fx: &[Effect]) -> usize {
    fx.iter().filter(|e| matches!(e, Effect::Bell)).count()
}

pub(super) fn start(a: &mut App, id: u64) {
    send(
        a,
        id,
        WatchEvent::Following {
            path: PATH.into(),
            why: "the file named on the command line".into(),
            waiting: "file-change notifications, and a look every 1000 ms".into(),
        },
    );
}

fn caught_up(a: &mut App, id: u64, lines: usize) {
    send(
        a,
        id,
        WatchEvent::CaughtUp {
            path: PATH.into(),
            format: Some(ctxlab::session::SessionFormat::ClaudeCode),
            lines,
            bytes: 1000,
            skipped: 0,
            sidechain_lines: 0,
            unknown_format: false,
        },
    );
}

/// The session there at start (one call), then written while followed: two calls, an
/// automatic compaction with its summary line, one more call.
fn before() -> Vec<String> {
    vec![
        claude_user(1, "list the files"),
        claude_call(2, 1000),
        claude_result(2),
    ]
}

fn written() -> Vec<String> {
    vec![
        claude_call(3, 5000),
        claude_result(3),
        claude_boundary(160_000),
        claude_summary(),
        claude_call(4, 2000),
        claude_result(4),
    ]
}

fn kinds(a: &App) -> Vec<&'static str> {
    a.live_view()
        .unwrap()
        .rows()
        .iter()
        .map(|r| match r {
            LiveRow::Message(_) => "message",
            LiveRow::Call {
                number: Some(_), ..
            } => "call",
            LiveRow::Call { number: None, .. } => "summary call",
            LiveRow::Tool { .. } => "tool",
            LiveRow::Compaction { .. } => "compaction",
            LiveRow::Skipped { .. } => "skipped",
            LiveRow::Notice(_) => "notice",
        })
        .collect()
}

/// The view after the whole story, and the effects of what was written while following.
fn story(bell: bool) -> (App, u64, Vec<Effect>) {
    let (mut a, id) = following(bell);
    let mut live = LiveSession::new();
    start(&mut a, id);
    let old = items(&mut live, 1, &before());
    assert!(send_items(&mut a, id, old, false).is_empty());
    caught_up(&mut a, id, 3);
    let new = items(&mut live, 4, &written());
    let fx = send_items(&mut a, id, new, true);
    (a, id, fx)
}

#[test]
fn rows_arrive_in_file_order_and_a_compaction_is_one_row_with_its_summary() {
    let (a, _, _) = story(true);
    let v = a.live_view().expect("the live view is open");
    assert!(v.caught_up());
    assert_eq!(v.calls(), 3);
    let k = kinds(&a);
    let compaction = k.iter().position(|k| *k == "compaction").unwrap();
    assert_eq!(
        k.iter().filter(|k| **k == "compaction").count(),
        1,
        "one row per compaction, however many lines describe it: {k:?}"
    );
    // Calls 1 and 2 before it, call 3 after it.
    let calls: Vec<usize> = k
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "call")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(calls.len(), 3, "{k:?}");
    assert!(calls[1] < compaction && compaction < calls[2], "{k:?}");
    // The summary line after the boundary updated the row in place.
    let Some(LiveRow::Compaction { compaction: c, .. }) = v.rows().get(compaction) else {
        panic!("{k:?}");
    };
    assert!(
        matches!(&c.summary, ctxlab::session::Summary::Text(t) if t.contains("listed the files")),
        "{:?}",
        c.summary
    );
    let h = v.headroom();
    assert_eq!(h.compactions, 1);
    assert!(
        h.text().contains("auto-compacts at 160,000"),
        "{}",
        h.text()
    );
    // The curve: the main calls' context (input + cache read + cache write), in order.
    let curve: Vec<u64> = v.curve().iter().copied().collect();
    assert_eq!(curve, vec![1110, 5110, 2110]);
}

#[test]
fn a_compaction_written_while_following_rings_once_and_only_when_the_bell_is_on() {
    let (_, _, fx) = story(true);
    assert_eq!(bells(&fx), 1, "{fx:?}");
    let (_, _, fx) = story(false);
    assert_eq!(bells(&fx), 0, "{fx:?}");
    // A compaction already in the file when it was opened is history: no bell.
    let (mut a, id) = following(true);
    let mut live = LiveSession::new();
    start(&mut a, id);
    let all: Vec<String> = before().into_iter().chain(written()).collect();
    let old = items(&mut live, 1, &all);
    assert_eq!(bells(&send_items(&mut a, id, old, false)), 0);
}

#[test]
fn events_of_a_replaced_follower_are_not_folded() {
    let (mut a, id) = following(true);
    start(&mut a, id);
    let mut live = LiveSession::new();
    let old = items(&mut live, 1, &before());
    let fx = send_items(&mut a, id + 1, old, true);
    assert!(fx.is_empty());
    assert!(a.live_view().unwrap().rows().is_empty());
}

#[test]
fn a_truncated_file_starts_again_and_says_so() {
    let (mut a, id, _) = story(true);
    send(
        &mut a,
        id,
        WatchEvent::File {
            path: PATH.into(),
            event: FileEvent::Truncated { was: 4000, now: 0 },
        },
    );
    start(&mut a, id);
    let v = a.live_view().unwrap();
    assert_eq!(kinds(&a), vec!["notice"]);
    assert!(matches!(&v.rows()[0], LiveRow::Notice(t) if t.contains("truncated")));
    assert_eq!(v.calls(), 0);
    assert!(v.curve().is_empty());
    assert_eq!(v.headroom().compactions, 0);
    assert!(v.notice().unwrap().contains("started again"));
    // What is written after it is the new session.
    let mut live = LiveSession::new();
    let new = items(&mut live, 1, &before());
    send_items(&mut a, id, new, true);
    assert_eq!(a.live_view().unwrap().calls(), 1);
}

#[test]
fn gone_and_a_session_switch_are_rows_and_the_header_says_the_new_file() {
    let (mut a, id, _) = story(true);
    send(
        &mut a,
        id,
        WatchEvent::File {
            path: PATH.into(),
            event: FileEvent::Gone,
        },
    );
    assert!(
        a.live_view()
            .unwrap()
            .notice()
            .unwrap()
            .contains("disappeared")
    );
    assert!(
        a.live_view().unwrap().ended().is_none(),
        "gone is not fatal"
    );
    send(
        &mut a,
        id,
        WatchEvent::File {
            path: PATH.into(),
            event: FileEvent::Switched {
                from: PATH.into(),
                to: "/tmp/project/s2.jsonl".into(),
                why: "a newer session of the same project".into(),
            },
        },
    );
    send(
        &mut a,
        id,
        WatchEvent::Following {
            path: "/tmp/project/s2.jsonl".into(),
            why: "a newer session of the same project".into(),
            waiting: "polling every 1000 ms".into(),
        },
    );
    let v = a.live_view().unwrap();
    assert_eq!(v.path(), std::path::Path::new("/tmp/project/s2.jsonl"));
    assert!(v.why().contains("newer session"));
    let notices: Vec<&str> = v
        .rows()
        .iter()
        .filter_map(|r| match r {
            LiveRow::Notice(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(
        notices[1].contains("followed session changed"),
        "{notices:?}"
    );
}

/// Issue 38: Esc in `ctxlab watch` dropped into an idle scripted workbench where typing
/// replayed the tour. Its own view has nothing beneath it: Esc quits.
#[test]
fn esc_quits_watchs_own_view_and_o_shows_a_compaction_whole() {
    let (mut a, _, _) = story(true);
    // From the newest row up to the compaction: its full text in the viewer.
    let k = kinds(&a);
    let compaction = k.iter().position(|k| *k == "compaction").unwrap();
    for _ in compaction..k.len() - 1 {
        a.update(key(KeyCode::Char('k')));
    }
    assert_eq!(a.live_view().unwrap().selected(), Some(compaction));
    a.update(key(KeyCode::Char('o')));
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("listed the files"), "{text}");
    a.update(key(KeyCode::Esc));
    assert!(a.live_view().is_some(), "Esc closed the viewer first");
    assert!(screen(&mut a, 80, 24).contains("Esc quit"));
    let fx = a.update(key(KeyCode::Esc));
    assert_eq!(fx, vec![Effect::Quit]);
}

#[test]
fn w_on_a_sessions_browser_row_follows_that_session() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("s1.jsonl");
    std::fs::write(&file, before().join("\n") + "\n").unwrap();
    let mut a = app();
    let fx = crate::support::open_sessions(&mut a, vec![dir.path().to_path_buf()]);
    settle(&mut a, fx);
    // Down to the session's row (under its project's heading).
    let mut fx = Vec::new();
    for _ in 0..3 {
        fx = a.update(key(KeyCode::Char('w')));
        if !fx.is_empty() {
            break;
        }
        a.update(key(KeyCode::Char('j')));
    }
    let request = fx
        .iter()
        .find_map(|e| match e {
            Effect::Follow(r) => Some(r.clone()),
            _ => None,
        })
        .expect("w follows the selected session");
    assert_eq!(request.chosen().path, file);
    assert!(a.live_view().is_some());
    // Opened from the browser: Esc closes it, stops its follower, and the browser is back.
    assert!(screen(&mut a, 80, 24).contains("Esc close"));
    assert_eq!(a.update(key(KeyCode::Esc)), vec![Effect::StopFollowing]);
    assert!(a.live_view().is_none());
    // Keys are per pane: the sessions browser's hint line says what `w` does there.
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("w follow live"), "{text}");
}

#[test]
fn snapshot_live_view() {
    let (mut a, _, _) = story(true);
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen(&mut a, w, h);
        insta::assert_snapshot!(format!("live_view_{w}x{h}"), text);
    }
}
