//! The browser's first screen on a cold listing cache (issue 22, "Listing speed": "first
//! screen under 300 ms ..., counts filled in as they come"): the listing job places every
//! row from the files' first lines with its counts pending, then batches fill the rows in,
//! top of the screen first, without moving them or the cursor; a batch for an older
//! listing is dropped, and none is asked for while the browser is not shown.

use std::path::{Path, PathBuf};

use crate::support::{Driver, key};
use crossterm::event::KeyCode;
use ctxlab::session::discover::entry_or_reason;
use ctxlab::tui::app::Startup;
use ctxlab::tui::sessions::listing::{FILL_FILES_PER_JOB, first_look};
use ctxlab::tui::sessions::{BrowserRow, SessionDone, SessionWork};
use ctxlab::tui::work::{Done, Work};
use ctxlab::tui::{Effect, Msg};

/// A Claude Code line (written from the format).
fn line(cwd: &str, at: &str, uuid: &str, kind: &str, content: serde_json::Value) -> String {
    let mut message = serde_json::json!({"role": kind, "content": content});
    if kind == "assistant" {
        message["usage"] = serde_json::json!({"input_tokens": 120, "output_tokens": 3});
        message["id"] = format!("m-{uuid}").into();
    }
    serde_json::json!({"parentUuid": null, "isSidechain": false, "sessionId": "s",
        "cwd": cwd, "type": kind, "uuid": uuid, "timestamp": at, "message": message})
    .to_string()
}

/// One request and its answer.
fn session(path: &Path, cwd: &str, at: &str, request: &str) {
    let text = [
        line(cwd, at, "u1", "user", request.into()),
        line(
            cwd,
            at,
            "a1",
            "assistant",
            serde_json::json!([{"type": "text", "text": "done"}]),
        ),
    ]
    .join("\n");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text + "\n").unwrap();
}

/// A session that starts with 48 KiB of a slash command's output (Claude Code writes it as
/// user lines): its first request is past what the first look reads.
fn late_request(path: &Path, cwd: &str, at: &str) {
    let mut lines = Vec::new();
    for i in 0..96 {
        let echo = format!(
            "<local-command-stdout>{}</local-command-stdout>",
            "x".repeat(480)
        );
        lines.push(line(cwd, at, &format!("c{i}"), "user", echo.into()));
    }
    lines.push(line(cwd, at, "u1", "user", "fix the late parser".into()));
    lines.push(line(
        cwd,
        at,
        "a1",
        "assistant",
        serde_json::json!([{"type": "text", "text": "done"}]),
    ));
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// More sessions than one batch fills, in three projects, and the late-request one.
fn home(dir: &Path) -> (PathBuf, PathBuf) {
    let root = dir.join("projects");
    for i in 0..(FILL_FILES_PER_JOB + 40) {
        let p = i % 3;
        session(
            &root.join(format!("-home-dev-p{p}/s{i:04}.jsonl")),
            &format!("/home/dev/p{p}"),
            &format!("2025-03-{:02}T10:{:02}:00.000Z", 1 + i % 28, i % 60),
            &format!("request {i}"),
        );
    }
    let late = root.join("-home-dev-p1/late.jsonl");
    late_request(&late, "/home/dev/p1", "2025-02-01T09:00:00.000Z");
    (root, late)
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

/// The only work in `fx`, run.
fn run_one(fx: &[Effect]) -> Done {
    let [Effect::Work(w)] = fx else {
        panic!("one job: {fx:?}");
    };
    w.clone().run()
}

/// The rows' identities in order: headings by name, sessions by path.
fn order(d: &Driver) -> Vec<String> {
    d.app
        .sessions()
        .rows()
        .iter()
        .map(|r| match r {
            BrowserRow::Project { name, .. } => format!("# {name}"),
            BrowserRow::Session(s) => s.entry().path.display().to_string(),
            BrowserRow::Error { path, .. } => format!("! {}", path.display()),
        })
        .collect()
}

/// Whether each session row has its counts, in order.
fn counted(d: &Driver) -> Vec<bool> {
    d.app
        .sessions()
        .rows()
        .iter()
        .filter_map(|r| match r {
            BrowserRow::Session(s) => Some(s.stats().is_some()),
            _ => None,
        })
        .collect()
}

fn title_of(d: &Driver, path: &Path) -> Option<String> {
    d.app.sessions().rows().iter().find_map(|r| match r {
        BrowserRow::Session(s) if s.entry().path == path => s.entry().title.clone(),
        _ => None,
    })
}

fn selected(d: &Driver) -> Option<PathBuf> {
    match d.app.sessions().selected_row() {
        Some(BrowserRow::Session(s)) => Some(s.entry().path.clone()),
        _ => None,
    }
}

#[test]
fn the_first_screen_comes_from_the_first_lines_and_batches_fill_it_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (root, late) = home(dir.path());
    let mut d = driver(dir.path());
    let fx = crate::support::open_sessions(&mut d.app, vec![root]);
    let fx = d.app.update(Msg::Done(run_one(&fx)));
    // The first screen: every session in its place, none counted, and the file whose first
    // request is far in was not read that far.
    let sessions = FILL_FILES_PER_JOB + 41;
    assert_eq!(counted(&d), vec![false; sessions]);
    assert_eq!(title_of(&d, &late), None, "only its first lines were read");
    let first = order(&d);
    d.app.update(key(KeyCode::Char('j')));
    d.app.update(key(KeyCode::Char('j')));
    let cursor = selected(&d).expect("a session under the cursor");
    let text = crate::support::screen(&mut d.app, 120, 40);
    assert!(text.contains("…      …          …"), "pending: {text}");

    // The first batch: the rows at the top of the listing, in their places.
    let Done::Session(SessionDone::Stats { results, rest, .. }) = run_one(&fx) else {
        panic!("a batch of filled rows");
    };
    assert_eq!(results.len(), FILL_FILES_PER_JOB);
    assert_eq!(rest.len(), sessions - FILL_FILES_PER_JOB);
    let fx = d.app.update(Msg::Done(Done::Session(SessionDone::Stats {
        listing: match &fx[0] {
            Effect::Work(Work::Session(SessionWork::Stats { listing, .. })) => *listing,
            other => panic!("{other:?}"),
        },
        results,
        rest,
    })));
    let mut want = vec![true; FILL_FILES_PER_JOB];
    want.extend(vec![false; sessions - FILL_FILES_PER_JOB]);
    assert_eq!(
        counted(&d),
        want,
        "the top rows first, the others still pending"
    );
    assert_eq!(order(&d), first, "no row moved");
    assert_eq!(selected(&d).as_ref(), Some(&cursor), "the cursor stayed");

    // The rest, and the title the first look did not reach.
    crate::support::settle(&mut d.app, fx);
    assert_eq!(counted(&d), vec![true; sessions]);
    assert_eq!(order(&d), first, "no row moved");
    assert_eq!(selected(&d), Some(cursor));
    assert_eq!(title_of(&d, &late).as_deref(), Some("fix the late parser"));
}

#[test]
fn the_first_look_places_a_row_where_the_whole_look_does() {
    let dir = tempfile::tempdir().unwrap();
    let (root, late) = home(dir.path());
    let mut files = vec![late, root.join("-home-dev-p0/s0000.jsonl")];
    // A first line longer than the first look reads: it looks further.
    let long = root.join("-home-dev-p2/long.jsonl");
    session(
        &long,
        "/home/dev/p2",
        "2025-01-05T08:00:00.000Z",
        &"a pasted log line\n".repeat(4_000),
    );
    files.push(long);
    let fixtures = crate::common::files::session_fixture("");
    for f in std::fs::read_dir(&fixtures).unwrap().flatten() {
        if f.path().extension().is_some_and(|e| e == "jsonl") {
            files.push(f.path());
        }
    }
    for f in files {
        let (quick, whole) = (first_look(&f), entry_or_reason(&f));
        match (quick, whole) {
            (Ok(q), Ok(w)) => {
                assert_eq!(
                    (&q.project, &q.started, q.format),
                    (&w.project, &w.started, w.format),
                    "{}",
                    f.display()
                );
            }
            (Err(q), Err(w)) => assert_eq!(q, w, "{}", f.display()),
            (q, w) => panic!("{}: {q:?} vs {w:?}", f.display()),
        }
    }
}

#[test]
fn a_batch_for_an_older_listing_is_dropped_and_none_is_asked_while_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = home(dir.path());
    let mut d = driver(dir.path());
    let fx = crate::support::open_sessions(&mut d.app, vec![root]);
    let old_batch = d.app.update(Msg::Done(run_one(&fx)));
    // R lists again; the batch asked for the first listing comes back after the new one.
    let relist = d.app.update(key(KeyCode::Char('R')));
    let new_batch = d.app.update(Msg::Done(run_one(&relist)));
    assert_eq!(new_batch.len(), 1, "the new listing's batch: {new_batch:?}");
    let fx = d.app.update(Msg::Done(run_one(&old_batch)));
    assert!(fx.is_empty(), "no batch follows a stale one: {fx:?}");
    assert!(
        counted(&d).iter().all(|c| !c),
        "a stale batch fills nothing"
    );

    // Hidden (b back to the transcripts): the batch on its way is taken, no next one.
    d.app.update(key(KeyCode::Char('b')));
    assert!(!d.app.sessions().active());
    let fx = d.app.update(Msg::Done(run_one(&new_batch)));
    assert!(fx.is_empty(), "nothing asked while hidden: {fx:?}");
    assert!(counted(&d).iter().any(|c| *c));
    assert!(counted(&d).iter().any(|c| !*c));
    // Shown again: the filling goes on where it stopped.
    let fx = d.app.update(key(KeyCode::Char('b')));
    assert!(
        matches!(
            fx.as_slice(),
            [Effect::Work(Work::Session(SessionWork::Stats { files, .. }))]
                if files.len() == counted(&d).iter().filter(|c| !**c).count()
        ),
        "{fx:?}"
    );
    crate::support::settle(&mut d.app, fx);
    assert!(counted(&d).iter().all(|c| *c));
}
