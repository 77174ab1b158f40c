//! Browsing fits the screen (issue 22): while the sessions browser or an opened session
//! has focus it takes the full width; the file column shows what tells sessions apart and
//! a title column their first request; groups fold; `/` filters the browser and searches
//! an opened session, `n` / `N` move; the header says what is open; the replay stands
//! beside the recording from 120 columns. Driven through `App::update` with the jobs run in
//! place, and `ctxlab open FILE` in a pty. Also the Ctrl-C notice that outlived its second.

use std::path::{Path, PathBuf};

use crate::common::files::{copy_dir, session_fixture as fixture};
use crate::support::{Driver, press, screen, settle};
use crossterm::event::KeyCode;
use ctxlab::tui::Msg;
use ctxlab::tui::app::{Pane, Startup};
use ctxlab::tui::sessions::{BrowserRow, ViewRow};

/// A Claude Code root (two projects' worth) and a Codex root, under `dir`.
fn roots(dir: &Path) -> Vec<PathBuf> {
    let claude = dir.join("claude/projects");
    copy_dir(&fixture("claude_project"), &claude.join("-home-dev-site"));
    std::fs::copy(
        fixture("claude_code.jsonl"),
        claude.join("-home-dev-site/s-other.jsonl"),
    )
    .unwrap();
    let codex = dir.join("codex/sessions/2025/11/02");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::copy(
        fixture("codex_rollout.jsonl"),
        codex.join("rollout-2025-11-02T09-00-00-0199a7c4-5e1f-7b20-9d3c-2f6a8e1b4d90.jsonl"),
    )
    .unwrap();
    vec![claude, dir.join("codex/sessions")]
}

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/tmp")
        .replace(env!("CARGO_MANIFEST_DIR"), "/repo")
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

fn browse(d: &mut Driver, paths: Vec<PathBuf>) {
    let fx = crate::support::open_sessions(&mut d.app, paths);
    let rest = settle(&mut d.app, fx);
    assert!(rest.is_empty(), "{rest:?}");
}

fn selected(d: &Driver) -> Option<BrowserRow> {
    d.app.sessions().selected_row().cloned()
}

fn selected_name(d: &Driver) -> String {
    match selected(d) {
        Some(BrowserRow::Session(s)) => s
            .entry()
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned(),
        other => panic!("not on a session: {other:?}"),
    }
}

fn visible_sessions(d: &Driver) -> usize {
    let s = d.app.sessions();
    s.view()
        .visible()
        .iter()
        .filter(|&&i| matches!(s.rows()[i], BrowserRow::Session(_)))
        .count()
}

#[test]
fn the_browser_and_an_opened_session_take_the_full_width() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    for (w, h) in [(120, 40), (80, 24)] {
        let text = screen(&mut d.app, w, h);
        let a = d.app.areas().unwrap();
        assert_eq!(a.main.width, w, "the browser spans the screen at {w}x{h}");
        assert_eq!((a.gauge.width, a.events.width), (0, 0));
        assert!(!text.contains("Context (limit"), "no gauge: {text}");
        assert!(!text.contains("2 Events"), "no events: {text}");
    }
    // An opened session too.
    press(&mut d.app, KeyCode::Enter);
    assert!(d.app.sessions().open().is_some());
    screen(&mut d.app, 120, 40);
    assert_eq!(d.app.areas().unwrap().main.width, 120);
    // Another pane in focus: the live run's panes come back.
    d.app.update(crate::support::key(KeyCode::Char('2')));
    assert_eq!(d.app.focus(), Pane::Events);
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("2 Events"), "{text}");
    assert!(d.app.areas().unwrap().main.width < 120);
}

#[test]
fn rows_show_the_rollout_id_and_the_first_request_and_the_cursor_starts_on_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    // The first row is a project's heading; the cursor starts on the session under it.
    let first = d.app.sessions().view().visible()[0];
    assert!(matches!(
        d.app.sessions().rows()[first],
        BrowserRow::Project { .. }
    ));
    assert!(matches!(selected(&d), Some(BrowserRow::Session(_))));
    assert_eq!(d.app.sessions().list().selected, 1);
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("first request"), "{text}");
    // Codex's injected context is no request: the first typed one is the title.
    assert!(text.contains("Why does login fail?"), "{text}");
    // The date is the start column's: the file column shows the rollout's id.
    assert!(text.contains("0199a7c4-5e1f"), "{text}");
    assert!(!text.contains("rollout-202"), "{text}");
    // At 80 columns the first request still has a column.
    let text = screen(&mut d.app, 80, 24);
    assert!(text.contains("first req"), "{text}");
    assert!(text.contains("Why does"), "{text}");
}

#[test]
fn project_groups_fold_and_open_with_enter_space_and_the_arrows() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    let all = visible_sessions(&d);
    assert_eq!(all, 3);
    // Up to the heading, Enter folds it.
    press(&mut d.app, KeyCode::Char('k'));
    let Some(BrowserRow::Project { name, sessions }) = selected(&d) else {
        panic!("on the heading");
    };
    press(&mut d.app, KeyCode::Enter);
    assert!(d.app.sessions().view().is_folded(&name));
    assert_eq!(
        visible_sessions(&d),
        all - sessions,
        "its sessions are hidden"
    );
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains(&format!("▸ {name} (1 session)")), "{text}");
    assert!(matches!(selected(&d), Some(BrowserRow::Project { .. })));
    // Space opens it again, ← folds, → opens.
    press(&mut d.app, KeyCode::Char(' '));
    assert_eq!(visible_sessions(&d), all);
    assert!(screen(&mut d.app, 120, 40).contains(&format!("▾ {name}")));
    press(&mut d.app, KeyCode::Left);
    assert_eq!(visible_sessions(&d), all - sessions);
    press(&mut d.app, KeyCode::Right);
    assert_eq!(visible_sessions(&d), all);
}

#[test]
fn slash_filters_the_browser_n_moves_and_esc_clears() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    press(&mut d.app, KeyCode::Char('/'));
    for c in "LOGIN".chars() {
        press(&mut d.app, KeyCode::Char(c));
    }
    // Typed live, case-insensitive, by the first request.
    assert_eq!(visible_sessions(&d), 1);
    assert!(selected_name(&d).starts_with("rollout-"));
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("filter /LOGIN"), "{text}");
    assert!(text.contains("/home/dev/api (1 of 1)"), "{text}");
    assert!(!text.contains("/home/dev/site"), "{text}");
    press(&mut d.app, KeyCode::Enter);
    assert!(!d.app.sessions().view().typing());
    // Esc clears the filter (and leaves the browser open).
    press(&mut d.app, KeyCode::Esc);
    assert_eq!(visible_sessions(&d), 3);
    assert!(d.app.sessions().active());
    assert!(
        selected_name(&d).starts_with("rollout-"),
        "the cursor stays"
    );
    // By project name, then by file name.
    press(&mut d.app, KeyCode::Char('/'));
    for c in "dev/site".chars() {
        press(&mut d.app, KeyCode::Char(c));
    }
    press(&mut d.app, KeyCode::Enter);
    assert_eq!(visible_sessions(&d), 1);
    assert_eq!(selected_name(&d), "s-main.jsonl");
    press(&mut d.app, KeyCode::Esc);
    // n / N move from session to session over the headings, round the end.
    press(&mut d.app, KeyCode::Char('g'));
    press(&mut d.app, KeyCode::Char('n'));
    let a = selected_name(&d);
    press(&mut d.app, KeyCode::Char('n'));
    let b = selected_name(&d);
    assert_ne!(a, b);
    press(&mut d.app, KeyCode::Char('N'));
    assert_eq!(selected_name(&d), a);
    press(&mut d.app, KeyCode::Char('N'));
    press(&mut d.app, KeyCode::Char('N'));
    assert_eq!(
        selected_name(&d),
        b,
        "N from the first goes round to the last"
    );
    press(&mut d.app, KeyCode::Char('/'));
    for c in "s-oth".chars() {
        press(&mut d.app, KeyCode::Char(c));
    }
    assert_eq!(visible_sessions(&d), 1);
    assert_eq!(selected_name(&d), "s-other.jsonl");
    // Esc while typing clears too.
    press(&mut d.app, KeyCode::Esc);
    assert_eq!(visible_sessions(&d), 3);
    assert_eq!(d.app.sessions().view().query(), "");
}

#[test]
fn slash_searches_an_opened_session_and_n_moves_between_hits() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let fx = crate::support::open_session(&mut d.app, fixture("codex_rollout.jsonl"));
    settle(&mut d.app, fx);
    let row_text = |d: &Driver| {
        let open = d.app.sessions().open().unwrap();
        match open.rows()[open.list().selected] {
            ViewRow::Message { index, .. } => open.infos()[index].full_text().to_lowercase(),
            ViewRow::Compaction(_) => String::new(),
        }
    };
    press(&mut d.app, KeyCode::Char('/'));
    let prompt = screen(&mut d.app, 120, 40);
    assert!(prompt.contains("Enter search the session"), "{prompt}");
    for c in "TEST".chars() {
        press(&mut d.app, KeyCode::Char(c));
    }
    press(&mut d.app, KeyCode::Enter);
    let hits = d.app.search().unwrap().hits.clone();
    assert!(hits.len() >= 2, "{hits:?}");
    let first = d.app.sessions().open().unwrap().list().selected;
    assert!(row_text(&d).contains("test"), "{}", row_text(&d));
    press(&mut d.app, KeyCode::Char('n'));
    let second = d.app.sessions().open().unwrap().list().selected;
    assert!(second > first);
    assert!(row_text(&d).contains("test"));
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("hit 2/"), "{text}");
    press(&mut d.app, KeyCode::Char('N'));
    assert_eq!(d.app.sessions().open().unwrap().list().selected, first);
    // Still the session: the conversation pane did not take the focus.
    assert_eq!(d.app.focus(), Pane::Transcripts);
}

#[test]
fn the_header_says_what_is_open_and_the_replay_is_beside_from_120_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    let text = screen(&mut d.app, 120, 40);
    let header = text.lines().next().unwrap();
    assert!(header.contains("sessions browser"), "{header}");
    assert!(
        !header.contains("/ws") && !header.contains("scripted"),
        "not the agent's: {header}"
    );
    let fx = crate::support::open_session(&mut d.app, fixture("codex_rollout.jsonl"));
    settle(&mut d.app, fx);
    press(&mut d.app, KeyCode::Char('r'));
    let text = screen(&mut d.app, 120, 40);
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("session codex_rollout.jsonl · codex"),
        "{header}"
    );
    // Side by side: both boxes' titles on the pane's first line.
    let top = text.lines().nth(1).unwrap();
    assert!(top.contains("Session") && top.contains("Replay"), "{text}");
    // Below 120 columns, the replay is under the recording.
    let text = screen(&mut d.app, 110, 40);
    let top = text.lines().nth(1).unwrap();
    assert!(top.contains("Session") && !top.contains("Replay"), "{text}");
    assert!(text.contains("Replay"), "{text}");
}

#[test]
fn snapshots_of_a_folded_and_filtered_browser() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, roots(dir.path()));
    press(&mut d.app, KeyCode::Char('k'));
    press(&mut d.app, KeyCode::Enter);
    press(&mut d.app, KeyCode::Char('/'));
    for c in "dev".chars() {
        press(&mut d.app, KeyCode::Char(c));
    }
    for (w, h) in [(80, 24), (120, 40)] {
        let text = masked(screen(&mut d.app, w, h), dir.path());
        insta::assert_snapshot!(format!("browser_folded_filtered_{w}x{h}"), text);
    }
}

#[test]
fn ctxlab_open_file_starts_no_tour_makes_no_workspace_and_records_nothing() {
    use crate::common::pty::Pty;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let data = home.join("data/ctxlab");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("legend-seen"), "").unwrap();
    let file = fixture("codex_rollout.jsonl");
    let mut s = Pty::start(
        &crate::common::scratch::binary(),
        &["open", file.to_str().unwrap()],
        dir.path(),
        &home,
        &[],
    );
    let screen = s.wait_for("compaction #1 at message");
    let header = screen.lines().next().unwrap_or("");
    assert!(
        header.contains("session codex_rollout.jsonl"),
        "the header says what is open: {screen}"
    );
    assert!(!screen.contains("No API key"), "{screen}");
    assert!(!screen.contains("scripted tour"), "{screen}");
    s.send(b"q");
    assert_eq!(s.wait_exit(), 0);
    assert!(
        !data.join("workspaces").exists(),
        "no demo workspace in the data dir"
    );
    let recorded: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        !data.join("sessions").exists(),
        "opening is not recorded: {recorded:?}"
    );
}

#[test]
fn the_ctrl_c_notice_goes_when_its_second_has_passed() {
    use crossterm::event::KeyModifiers;
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    d.app.update(crate::support::key_mod(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    ));
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("Ctrl-C again within 1 s quits"), "{text}");
    d.ticks(ctxlab::tui::app::TICKS_PER_SECOND as usize);
    assert!(d.app.notice_text().is_some(), "still within the second");
    d.ticks(1);
    let text = screen(&mut d.app, 120, 40);
    assert!(!text.contains("within 1 s quits"), "{text}");
    // And a Ctrl-C now is a first one again: it cancels, it does not quit.
    let fx = d.app.update(crate::support::key_mod(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    ));
    assert!(!fx.contains(&ctxlab::tui::Effect::Quit), "{fx:?}");
}

#[test]
fn a_title_is_one_line_and_its_control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("claude/projects/-home-dev-esc");
    std::fs::create_dir_all(&project).unwrap();
    // Written from the format: an injected command line first, then the typed request
    // with a newline, a tab and a terminal escape in it.
    let line = |uuid: &str, parent: &str, content: &str| {
        serde_json::json!({
            "parentUuid": if parent.is_empty() { serde_json::Value::Null } else { parent.into() },
            "isSidechain": false, "type": "user", "cwd": "/home/dev/esc", "sessionId": "s-esc",
            "message": {"role": "user", "content": content},
            "uuid": uuid, "timestamp": "2026-01-05T08:00:00.000Z"
        })
        .to_string()
    };
    let text = [
        line(
            "e1",
            "",
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>",
        ),
        line("e2", "e1", "Clean\nup\tthe \u{1b}[2Jlogs please"),
    ]
    .join("\n");
    std::fs::write(project.join("s-esc.jsonl"), text + "\n").unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, vec![dir.path().join("claude/projects")]);
    let Some(BrowserRow::Session(s)) = selected(&d) else {
        panic!("a session row");
    };
    assert_eq!(
        s.entry().title.as_deref(),
        Some("Clean up the \u{1b}[2Jlogs please")
    );
    let text = screen(&mut d.app, 120, 40);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("Clean up the \\e[2Jlogs please"), "{text}");
}
