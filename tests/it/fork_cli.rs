//! `ctxlab fork` end to end on the fixtures cut from the real agents' files: the fork goes
//! into the agent's own folder under HOME, the original is untouched, the resume command
//! is printed, `--edit` runs the editor on the summary, `--summary none` refuses a history
//! over the window with exit 2, and `forgot --against` reads the fork. (The real agents
//! resuming forks is the harness's check: scripts/real_agents/forks.py.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cli::ctxlab;

const CLAUDE: &str = "tests/fixtures/fork/claude_compacted.jsonl";
const CODEX: &str = "tests/fixtures/fork/codex_two_compactions.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn fork_in(home: &Path, args: &[&str]) -> std::process::Output {
    ctxlab()
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .arg("fork")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_claude_fork_lands_in_the_project_folder_and_prints_how_to_resume_it() {
    let home = tempfile::tempdir().unwrap();
    let original = std::fs::read(fixture(CLAUDE)).unwrap();
    let src = fixture(CLAUDE);
    let out = fork_in(
        home.path(),
        &[src.to_str().unwrap(), "--before", "1", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["session_id"].as_str().unwrap();
    let path = PathBuf::from(v["path"].as_str().unwrap());
    assert_eq!(
        path,
        home.path()
            .join(".claude/projects/-tmp-ra1-proj")
            .join(format!("{id}.jsonl"))
    );
    assert!(path.is_file());
    assert_eq!(
        v["resume"].as_str().unwrap(),
        format!("cd /tmp/ra1/proj && claude --resume {id}")
    );
    assert_eq!(std::fs::read(fixture(CLAUDE)).unwrap(), original);
    // inspect reads it: the history before the compaction, no compaction.
    let inspect = ctxlab()
        .args(["inspect", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(doc["compactions"].as_array().unwrap().len(), 0);
}

/// `forgot --against`: a whole-history fork of the planted evaluation session (facts the
/// summary lost, docs/forgot.md) carries every one of them. The fork fixtures above hold
/// only the scripted steps, with nothing a summary could lose.
#[test]
fn a_whole_history_fork_carries_every_fact_the_summary_lost() {
    let home = tempfile::tempdir().unwrap();
    let eval = fixture("tests/fixtures/forgot/eval_claude.jsonl");
    let out = fork_in(
        home.path(),
        &[eval.to_str().unwrap(), "--before", "1", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let against = ctxlab()
        .arg("forgot")
        .arg(&eval)
        .arg("--against")
        .arg(v["path"].as_str().unwrap())
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        against.status.success(),
        "{}",
        String::from_utf8_lossy(&against.stderr)
    );
    let a: Value = serde_json::from_slice(&against.stdout).unwrap();
    let c = &a["compactions"][0];
    assert!(c["lost"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(c["carried_by_fork"], c["lost"], "{a}");
}

#[test]
fn edit_runs_the_editor_on_the_original_summary_and_the_facts_it_lost() {
    let home = tempfile::tempdir().unwrap();
    let src = fixture(CODEX);
    // The "editor" keeps a copy of what it was given and writes the summary the user wants.
    let seen = home.path().join("seen.txt");
    let editor = format!(
        "sh -c 'cp \"$1\" {} && printf \"# note\\nEDITED SUMMARY\\n\" > \"$1\"' sh",
        seen.display()
    );
    let out = ctxlab()
        .env("HOME", home.path())
        .env("CODEX_HOME", home.path().join("codex"))
        .env("EDITOR", &editor)
        .env_remove("VISUAL")
        .args([
            "fork",
            src.to_str().unwrap(),
            "--before",
            "1",
            "--edit",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let given = std::fs::read_to_string(&seen).unwrap();
    assert!(given.contains("Summary of the session so far"), "{given}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = v["path"].as_str().unwrap();
    assert!(path.starts_with(home.path().join("codex/sessions/").to_str().unwrap()));
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("EDITED SUMMARY"));
    assert!(!text.contains("# note"));
    assert!(!text.contains("Summary of the session so far"));
}

#[test]
fn a_history_over_the_window_is_refused_with_the_overshoot() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let text = std::fs::read_to_string(fixture(CLAUDE))
        .unwrap()
        .replace("\"preTokens\":23994", "\"preTokens\":250000");
    std::fs::write(&big, text).unwrap();
    let out = fork_in(dir.path(), &[big.to_str().unwrap(), "--before", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("250,000 tokens, 50,000 more than the 200,000-token window"),
        "{err}"
    );
    assert!(!dir.path().join(".claude").exists());
}

/// The workbench with `CLAUDE` opened and its first compaction row selected, in a data
/// folder of the test's own: the driver, the session's path and the temp folder.
fn opened_at_first_compaction() -> (crate::support::Driver, PathBuf, tempfile::TempDir) {
    use crate::support::{Driver, press, settle};
    use crossterm::event::KeyCode;
    use ctxlab::tui::Msg;
    use ctxlab::tui::app::Startup;
    use ctxlab::tui::sessions::ViewRow;

    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut d = Driver::new(&ws, false);
    d.app.update(Msg::Start(Box::new(Startup {
        scratch_root: Some(dir.path().join("data/scratch")),
        ..Startup::default()
    })));
    let path = fixture(CLAUDE);
    let fx = crate::support::open_session(&mut d.app, path.clone());
    settle(&mut d.app, fx);
    let at = d
        .app
        .sessions()
        .open()
        .unwrap()
        .rows()
        .iter()
        .position(|r| *r == ViewRow::Compaction(0))
        .unwrap();
    press(&mut d.app, KeyCode::Char('g'));
    for _ in 0..at {
        press(&mut d.app, KeyCode::Char('j'));
    }
    (d, path, dir)
}

/// `B` on an opened session's compaction row: the fork job for that compaction; done, the
/// viewer says where the fork went and how to resume it. The job is run here with HOME
/// folders of the test's own (the key takes the user's, as the agents would look).
#[test]
fn b_on_a_compaction_row_forks_the_opened_session() {
    use crate::support::key;
    use crossterm::event::KeyCode;
    use ctxlab::fork::AgentHomes;
    use ctxlab::tui::analysis::AnalysisWork;
    use ctxlab::tui::app::Layer;
    use ctxlab::tui::work::Work;
    use ctxlab::tui::{Effect, Msg};

    let (mut d, path, dir) = opened_at_first_compaction();
    let fx = d.app.update(key(KeyCode::Char('B')));
    let (id, compaction) = match fx.as_slice() {
        [
            Effect::Work(Work::Analysis(AnalysisWork::Fork {
                id,
                path: p,
                compaction,
                ..
            })),
        ] => {
            assert_eq!(p, &path);
            (*id, *compaction)
        }
        other => panic!("not a fork job: {other:?}"),
    };
    assert_eq!(compaction, 1);
    let homes = AgentHomes {
        claude: Some(dir.path().join("claude")),
        codex: Some(dir.path().join("codex")),
    };
    let work = Work::Analysis(AnalysisWork::Fork {
        id,
        path: path.clone(),
        compaction,
        homes,
    });
    d.app.update(Msg::Done(work.run()));
    let lines = match d.app.top_layer() {
        Some(Layer::Viewer(v)) => v.lines().to_vec(),
        other => panic!("no viewer: {other:?}"),
    };
    let text = lines.join("\n");
    assert!(text.contains("claude --resume "), "{text}");
    let folder = dir.path().join("claude/projects/-tmp-ra1-proj");
    let written: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(written.len(), 1);
    assert!(text.contains(&folder.display().to_string()), "{text}");
}

/// `B` in the forgot view (`F` on an opened session's compaction row): the fork job for
/// the compaction that view shows.
#[test]
fn b_in_the_forgot_view_forks_before_the_compaction_it_shows() {
    use crate::support::{key, settle};
    use crossterm::event::KeyCode;
    use ctxlab::tui::Effect;
    use ctxlab::tui::analysis::AnalysisWork;
    use ctxlab::tui::app::Layer;
    use ctxlab::tui::work::Work;

    let (mut d, path, _dir) = opened_at_first_compaction();
    let fx = d.app.update(key(KeyCode::Char('F')));
    settle(&mut d.app, fx);
    match d.app.top_layer() {
        Some(Layer::Viewer(v)) => {
            assert!(v.title().contains("forgot"), "{}", v.title());
            assert_eq!(v.fork_source(), Some(&(path.clone(), 1)));
        }
        other => panic!("no forgot view: {other:?}"),
    }
    let fx = d.app.update(key(KeyCode::Char('B')));
    match fx.as_slice() {
        [
            Effect::Work(Work::Analysis(AnalysisWork::Fork {
                path: p,
                compaction,
                ..
            })),
        ] => {
            assert_eq!(p, &path);
            assert_eq!(*compaction, 1);
        }
        other => panic!("not a fork job: {other:?}"),
    }
}

/// `--edit` puts the facts the summary lost under the summary, for the user to take in:
/// on the planted evaluation session, its lost constraint and lint error.
#[test]
fn edit_gives_the_editor_the_facts_the_summary_lost() {
    let home = tempfile::tempdir().unwrap();
    let seen = home.path().join("seen.txt");
    let editor = format!("sh -c 'cp \"$1\" {}' sh", seen.display());
    let eval = fixture("tests/fixtures/forgot/eval_codex.jsonl");
    let out = ctxlab()
        .env("HOME", home.path())
        .env("CODEX_HOME", home.path().join("codex"))
        .env("EDITOR", &editor)
        .env_remove("VISUAL")
        .args(["fork", eval.to_str().unwrap(), "--before", "1", "--edit"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let given = std::fs::read_to_string(&seen).unwrap();
    assert!(
        given.contains("Facts from before the compaction that the summary did not carry"),
        "{given}"
    );
    assert!(given.contains("server-authoritative"), "{given}");
    assert!(given.contains("E501"), "{given}");
}
