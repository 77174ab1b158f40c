//! The sessions browser and an opened session in the workbench, driven through
//! `App::update` with the jobs run in place (`support::settle`): snapshots of the browser
//! (fixture sessions under explicit roots, an unreadable path as an error row) and of an
//! opened Claude Code and Codex session with their recorded compactions, at 80x24 and
//! 120x40; the replay writes only into the scratch store; `ctxlab open FILE` in a pty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::common::files::{copy_dir, session_fixture as fixture};
use crate::support::{Driver, press, screen, settle};
use crossterm::event::KeyCode;
use ctxlab::tui::app::Startup;
use ctxlab::tui::sessions::{BrowserRow, ViewRow};
use ctxlab::tui::{Effect, Msg};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// A Claude Code root and a Codex root with the fixture sessions, under `dir`.
fn roots(dir: &Path) -> (PathBuf, PathBuf) {
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
        codex.join("rollout-2025-11-02T09-00-00-0199a.jsonl"),
    )
    .unwrap();
    (dir.join("claude/projects"), dir.join("codex/sessions"))
}

fn masked(text: String, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "/tmp")
        .replace(env!("CARGO_MANIFEST_DIR"), "/repo")
}

fn snap_all(name: &str, d: &mut Driver, dir: &Path) {
    for (w, h) in SIZES {
        let text = masked(screen(&mut d.app, w, h), dir);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
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

/// Opens the browser on `paths` with every listing and counting job done.
fn browse(d: &mut Driver, paths: Vec<PathBuf>) {
    let fx = crate::support::open_sessions(&mut d.app, paths);
    let rest = settle(&mut d.app, fx);
    assert!(rest.is_empty(), "{rest:?}");
}

fn open(d: &mut Driver, path: PathBuf) {
    let fx = crate::support::open_session(&mut d.app, path);
    assert_eq!(fx.len(), 2, "the head and the whole file: {fx:?}");
    settle(&mut d.app, fx);
    assert!(d.app.loading().is_none(), "opened");
}

fn select_compaction(d: &mut Driver, k: usize) {
    let open = d.app.sessions().open().unwrap();
    let row = open
        .rows()
        .iter()
        .position(|r| *r == ViewRow::Compaction(k))
        .expect("a compaction row");
    press(&mut d.app, KeyCode::Char('g'));
    for _ in 0..row {
        press(&mut d.app, KeyCode::Char('j'));
    }
    assert_eq!(d.app.sessions().open().unwrap().list().selected, row);
}

#[test]
fn the_browser_lists_sessions_by_project_with_counts_and_an_error_row() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, codex) = roots(dir.path());
    let mut d = driver(dir.path());
    browse(&mut d, vec![claude, codex, dir.path().join("gone")]);
    let rows = d.app.sessions().rows();
    assert!(matches!(&rows[0], BrowserRow::Error { path, .. } if path.ends_with("gone")));
    let projects: Vec<&str> = rows
        .iter()
        .filter_map(|r| match r {
            BrowserRow::Project { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        projects,
        ["/home/dev/site", "/home/dev/api", "/home/dev/parser"],
        "projects, the newest session's first"
    );
    // Every session got its counts from the background jobs.
    for r in rows {
        if let BrowserRow::Session(s) = r {
            let stats = s.stats().as_ref().expect("counted").as_ref().unwrap();
            assert!(stats.calls > 0, "{s:?}");
        }
    }
    let codex_row = rows
        .iter()
        .find_map(|r| match r {
            BrowserRow::Session(s) if s.entry().path.to_string_lossy().contains("rollout") => {
                Some(s)
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        codex_row
            .stats()
            .as_ref()
            .unwrap()
            .as_ref()
            .unwrap()
            .compactions,
        2
    );
    snap_all("sessions_browser", &mut d, dir.path());
}

/// The browser's hint line keeps its own keys and `?` help at 80 columns: `b transcripts`
/// had been dropped since `w follow live` joined it; `R refresh` (also in `?` help) is the
/// key it spares when short.
#[test]
fn the_browsers_hint_line_fits_its_keys_and_help_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, codex) = roots(dir.path());
    let mut d = driver(dir.path());
    browse(&mut d, vec![claude, codex]);
    for (w, h) in SIZES {
        let text = screen(&mut d.app, w, h);
        let hint = text.lines().rfind(|l| !l.trim().is_empty()).unwrap();
        for key in [
            "Enter open/fold",
            "/ filter",
            "w follow live",
            "b transcripts",
            "? help",
            "q quit",
        ] {
            assert!(hint.contains(key), "{w}x{h}: {key:?} missing in {hint:?}");
        }
        if w >= 120 {
            assert!(hint.contains("R refresh"), "{hint:?}");
        }
    }
}

#[test]
fn the_listing_shows_before_the_counts_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, _) = roots(dir.path());
    let mut d = driver(dir.path());
    let fx = crate::support::open_sessions(&mut d.app, vec![claude]);
    let [Effect::Work(w)] = fx.as_slice() else {
        panic!("one listing job: {fx:?}");
    };
    let counting = d.app.update(ctxlab::tui::Msg::Done(w.clone().run()));
    assert_eq!(counting.len(), 1, "a counting job follows: {counting:?}");
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("s-main"), "{text}");
    assert!(
        text.contains("…      …          …"),
        "counts pending: {text}"
    );
    settle(&mut d.app, counting);
    let text = screen(&mut d.app, 120, 40);
    assert!(!text.contains("…      …          …"), "counted: {text}");
}

/// The first screen of a cold listing: every row in its place, the counts pending as `…`
/// (never 0) until a batch fills them in.
#[test]
fn a_browser_with_its_counts_pending() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, codex) = roots(dir.path());
    let mut d = driver(dir.path());
    let fx = crate::support::open_sessions(&mut d.app, vec![claude, codex]);
    let [Effect::Work(w)] = fx.as_slice() else {
        panic!("one listing job: {fx:?}");
    };
    d.app.update(ctxlab::tui::Msg::Done(w.clone().run()));
    assert!(d.app.sessions().rows().iter().all(|r| match r {
        BrowserRow::Session(s) => s.stats().is_none(),
        _ => true,
    }));
    snap_all("sessions_browser_pending", &mut d, dir.path());
}

#[test]
fn an_opened_claude_session_shows_its_compaction_usage_and_curve() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, vec![fixture("claude_code.jsonl")]);
    open(&mut d, fixture("claude_code.jsonl"));
    let open_view = d.app.sessions().open().unwrap();
    assert!(open_view.complete());
    assert!(!open_view.compactions().is_empty());
    assert!(
        open_view
            .rows()
            .iter()
            .any(|r| matches!(r, ViewRow::Message { dimmed: true, .. })),
        "what came before the compaction is dimmed, not gone"
    );
    let (label, messages) = d.app.opened_messages().unwrap();
    assert_eq!(label, "claude_code.jsonl");
    assert!(!messages.is_empty());
    select_compaction(&mut d, 0);
    let text = screen(&mut d.app, 120, 40);
    assert!(
        text.contains("compaction #1 at message 5 full manual 2,150->900 tok 12.0 s"),
        "{text}"
    );
    assert!(text.contains("cache read"), "{text}");
    snap_all("session_claude", &mut d, dir.path());
}

/// Each compaction row of the opened session and the viewer it opens name the compaction
/// as `inspect` on the same file does, `#N at message M` (`numbers::compaction_label`),
/// not a "compaction N" of their own.
#[test]
fn an_opened_session_names_each_compaction_as_inspect_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("claude_code.jsonl");
    let inspect = std::process::Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .arg("inspect")
        .arg(&path)
        .env("CTXLAB_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    let inspect = String::from_utf8_lossy(&inspect.stdout).to_string();
    let mut d = driver(dir.path());
    browse(&mut d, vec![path.clone()]);
    open(&mut d, path);
    let ats: Vec<usize> = d
        .app
        .sessions()
        .open()
        .unwrap()
        .compactions()
        .iter()
        .map(|c| c.at)
        .collect();
    assert_eq!(ats.len(), 3);
    for (k, at) in ats.into_iter().enumerate() {
        let label = ctxlab::session::numbers::compaction_label(k + 1, Some(at));
        assert!(
            inspect.contains(&format!("{label} (line")),
            "{label}:\n{inspect}"
        );
        select_compaction(&mut d, k);
        let text = screen(&mut d.app, 200, 50);
        assert!(text.contains(&format!("⟳ compaction {label} ")), "{text}");
        // The viewer (Enter) is titled and headed with it too.
        d.app.update(crate::support::key(KeyCode::Enter));
        let viewer = screen(&mut d.app, 200, 50);
        assert!(viewer.contains(&format!("compaction {label}")), "{viewer}");
        assert!(viewer.contains(&format!("{label} · ")), "{viewer}");
        d.app.update(crate::support::key(KeyCode::Esc));
    }
}

#[test]
fn an_opened_codex_session_says_its_summary_is_encrypted() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, vec![fixture("codex_rollout.jsonl")]);
    open(&mut d, fixture("codex_rollout.jsonl"));
    let n = d.app.sessions().open().unwrap().compactions().len();
    assert_eq!(n, 2);
    select_compaction(&mut d, 1);
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("encrypted by the provider"), "{text}");
    assert!(text.contains("┄"), "the recorded window as a line: {text}");
    snap_all("session_codex", &mut d, dir.path());
}

/// Names, sizes and mtimes of every file under `dir`.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.insert(e.path(), (m.len(), m.modified().unwrap()));
        }
    }
    out
}

#[test]
fn a_replay_writes_only_into_its_scratch_store_and_closing_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("src");
    std::fs::create_dir_all(&source).unwrap();
    let file = source.join("claude_code.jsonl");
    std::fs::copy(fixture("claude_code.jsonl"), &file).unwrap();
    let mut d = driver(dir.path());
    // Small thresholds: the pipeline persists results and compacts this short session.
    let small = ctxlab::compact::PipelineConfig {
        persist_threshold: 20,
        budget_chars: 50,
        context_limit: 100,
        ..*d.app.config()
    };
    crate::support::set_config(&mut d.app, small);
    let ws = d.app.workspace().to_path_buf();
    let (source_before, ws_before) = (listing(&source), listing(&ws));
    browse(&mut d, vec![source.clone()]);
    open(&mut d, file);
    press(&mut d.app, KeyCode::Char('r'));
    let open_view = d.app.sessions().open().unwrap();
    let replay = open_view.replay().expect("replayed");
    assert!(
        replay.replay().error.is_none(),
        "{:?}",
        replay.replay().error
    );
    let scratch = open_view.scratch().unwrap().to_path_buf();
    assert!(scratch.starts_with(dir.path().join("data/scratch")));
    assert!(
        !replay.persisted().is_empty() || !replay.transcripts().is_empty(),
        "the pipeline wrote something, into the scratch store"
    );
    assert!(scratch.is_dir());
    assert_eq!(
        listing(&source),
        source_before,
        "nothing new or touched beside the source"
    );
    assert_eq!(listing(&ws), ws_before, "nothing in the workspace");
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("Replay"), "{text}");
    assert!(text.contains("agent compacted before calls"), "{text}");
    assert!(
        text.contains("pipeline compact_history before calls"),
        "{text}"
    );
    snap_all("session_replay", &mut d, dir.path());
    // Esc closes the session and its scratch store goes.
    press(&mut d.app, KeyCode::Esc);
    assert!(d.app.sessions().open().is_none());
    assert!(!scratch.exists(), "scratch removed on close");
}

#[test]
fn ctxlab_open_file_shows_the_session_in_a_pty() {
    use crate::common::pty::Pty;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // The legend was seen: the session is the first screen.
    let data = home.join("data/ctxlab");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("legend-seen"), "").unwrap();
    let file = fixture("codex_rollout.jsonl");
    let ws = dir.path().join("ws");
    let mut s = Pty::start(
        &crate::common::scratch::binary(),
        &[
            "open",
            file.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
        ],
        dir.path(),
        &home,
        &[],
    );
    let screen = s.wait_for("compaction #1 at message");
    assert!(screen.contains("codex_rollout.jsonl"), "{screen}");
    s.send(b"q");
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn b_opens_the_browser_on_the_default_roots_and_b_again_goes_back() {
    use ctxlab::tui::sessions::SessionWork;
    use ctxlab::tui::work::Work;
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    crate::support::focus(&mut d.app, '1');
    let fx = d.app.update(crate::support::key(KeyCode::Char('b')));
    assert_eq!(
        fx,
        vec![Effect::Work(Work::Session(SessionWork::Discover {
            paths: Vec::new(),
            data_dir: Some(dir.path().join("data")),
        }))]
    );
    assert!(d.app.sessions().active());
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("4 Sessions"), "{text}");
    assert!(text.contains("looking for sessions"), "{text}");
    assert!(
        text.contains("b transcripts"),
        "the hint line says how back: {text}"
    );
    d.app.update(crate::support::key(KeyCode::Char('b')));
    assert!(!d.app.sessions().active());
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("4 Transcripts"), "{text}");
    assert!(text.contains("b sessions"), "{text}");
}

#[test]
fn start_clears_stale_scratch_lists_and_opens_the_file_given() {
    use ctxlab::tui::sessions::SessionWork;
    use ctxlab::tui::work::Work;
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let stale = dir.path().join("data/scratch/4294967290-1");
    std::fs::create_dir_all(&stale).unwrap();
    let file = fixture("codex_rollout.jsonl");
    // `ctxlab open FILE`: the loop's caller says so in `Msg::Start`; the jobs follow
    // `Msg::LoopStarted`.
    let scratch_root = d.app.sessions().scratch_root().cloned();
    let fx = d.app.update(ctxlab::tui::Msg::Start(Box::new(
        ctxlab::tui::app::Startup {
            scratch_root,
            sessions: Some(ctxlab::tui::app::StartSessions::File {
                path: file.clone(),
                bytes: Some(7),
            }),
            ..Default::default()
        },
    )));
    assert!(fx.is_empty(), "no job before the loop runs");
    let fx = d.app.update(ctxlab::tui::Msg::LoopStarted);
    let kinds: Vec<&str> = fx
        .iter()
        .map(|e| match e {
            Effect::Work(Work::Session(SessionWork::CleanScratch { .. })) => "clean",
            Effect::Work(Work::Session(SessionWork::Discover { .. })) => "list",
            Effect::Work(Work::Session(SessionWork::Open { head: true, .. })) => "head",
            Effect::Work(Work::Session(SessionWork::Open { head: false, .. })) => "full",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["clean", "list", "head", "full"]);
    settle(&mut d.app, fx);
    assert!(!stale.exists(), "a dead process's scratch store is removed");
    assert_eq!(
        d.app.sessions().open().map(|o| o.label()),
        Some("codex_rollout.jsonl")
    );
}

#[test]
fn c_compares_the_opened_session_under_the_strategies() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, vec![fixture("codex_rollout.jsonl")]);
    open(&mut d, fixture("codex_rollout.jsonl"));
    let (label, messages) = d.app.opened_messages().expect("an opened session");
    let (label, messages) = (label.to_string(), messages.len());
    press(&mut d.app, KeyCode::Char('C'));
    let view = d.app.compare().expect("the compare view is open");
    assert_eq!(view.label(), label, "the opened session, not the live one");
    assert_eq!(view.session().len(), messages);
    assert!(
        view.runs().len() >= 2,
        "every strategy replayed: {}",
        view.runs().len()
    );
}

/// The whole file fails to read after its first lines were shown (here: it was deleted in
/// between): the head stays, says so, and `r` explains instead of "still loading" forever.
#[test]
fn a_session_that_fails_after_its_first_lines_says_so_and_r_explains() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let path = dir.path().join("big.jsonl");
    let mut text = std::fs::read_to_string(fixture("claude_code.jsonl")).unwrap();
    let pad = "x".repeat(ctxlab::tui::sessions::HEAD_BYTES + 10);
    text.push_str(&format!("{{\"type\":\"progress\",\"data\":\"{pad}\"}}\n"));
    std::fs::write(&path, text).unwrap();
    let fx = crate::support::open_session(&mut d.app, path.clone());
    let mut fx = fx.into_iter();
    let (Some(Effect::Work(head)), Some(Effect::Work(whole))) = (fx.next(), fx.next()) else {
        panic!("two jobs: the head and the whole file");
    };
    settle(&mut d.app, vec![Effect::Work(head)]);
    assert!(!d.app.sessions().open().unwrap().complete(), "the head");
    std::fs::remove_file(&path).unwrap();
    settle(&mut d.app, vec![Effect::Work(whole)]);
    let open = d.app.sessions().open().expect("the head stays on screen");
    assert!(open.load_error().is_some());
    assert!(d.app.loading().is_none());
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("first lines only"), "{text}");
    press(&mut d.app, KeyCode::Char('r'));
    let notice = d
        .app
        .notice()
        .as_ref()
        .map(|n| n.0.to_string())
        .unwrap_or_default();
    assert!(
        notice.contains("only the first lines could be read"),
        "{notice}"
    );
}

/// Issue 38: no key went to the next compaction of an opened session. `]` and `[` select
/// the next and previous compaction row; past the last one the selection stays.
#[test]
fn brackets_go_to_the_next_and_previous_compaction_of_an_opened_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    let file = crate::common::files::session_fixture("codex_rollout.jsonl");
    browse(&mut d, vec![file.clone()]);
    open(&mut d, file);
    let at: Vec<usize> = d
        .app
        .sessions()
        .open()
        .unwrap()
        .rows()
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, ViewRow::Compaction(_)))
        .map(|(i, _)| i)
        .collect();
    assert!(at.len() >= 2, "the fixture has two compactions: {at:?}");
    let selected = |d: &Driver| d.app.sessions().open().unwrap().list().selected;
    press(&mut d.app, KeyCode::Char('g'));
    press(&mut d.app, KeyCode::Char(']'));
    assert_eq!(selected(&d), at[0]);
    press(&mut d.app, KeyCode::Char(']'));
    assert_eq!(selected(&d), at[1]);
    for _ in at.len()..3 {
        press(&mut d.app, KeyCode::Char(']'));
    }
    assert_eq!(selected(&d), *at.last().unwrap(), "stays at the last");
    press(&mut d.app, KeyCode::Char('['));
    assert_eq!(selected(&d), at[at.len() - 2]);
    let text = screen(&mut d.app, 80, 24);
    assert!(text.contains("compaction"), "{text}");
}

/// Issue 38: `t` in the sessions browser opened the timeline of the idle workbench, and
/// Esc then left the user there, where typing replays the scripted tour. Esc goes back to
/// the browser.
#[test]
fn esc_after_t_in_the_browser_returns_to_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    browse(&mut d, vec![fixture("claude_code.jsonl")]);
    assert!(d.app.browsing());
    press(&mut d.app, KeyCode::Char('t'));
    assert!(!d.app.browsing(), "t opened the timeline");
    press(&mut d.app, KeyCode::Esc);
    assert!(d.app.browsing(), "Esc returns to the browser");
    let text = screen(&mut d.app, 80, 24);
    assert!(text.contains("Sessions"), "{text}");
}

/// Issue 38: the browser had no tool column and gave the first request 9 characters at 80
/// columns. Each row names its tool, and at 80 columns the first request keeps 18 or more.
#[test]
fn the_browser_names_each_sessions_tool_and_gives_the_first_request_room_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, codex) = roots(dir.path());
    let mut d = driver(dir.path());
    browse(&mut d, vec![claude, codex]);
    let text = screen(&mut d.app, 80, 24);
    let head = text.lines().find(|l| l.contains("started")).unwrap();
    assert!(head.contains("tool"), "{text}");
    let title_w = head
        .split("first request")
        .nth(1)
        .map(|rest| rest.len() - rest.trim_start().len() - 2 + "first request".len())
        .unwrap_or(0);
    assert!(
        title_w >= 18,
        "the first request gets {title_w} columns: {text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().any(|l| l.contains(" Claude ")), "{text}");
    assert!(lines.iter().any(|l| l.contains(" Codex ")), "{text}");
    let wide = screen(&mut d.app, 120, 40);
    assert!(wide.contains("Claude Code"), "{wide}");
}
