//! `r` in the sessions browser on a ctxlab recording goes through the replay loop the CLI
//! and the compare view use, with the recording's events: the tour's refusal at call 30
//! makes the replay's reactive stage run at call 31, as it did live. It used to replay
//! the messages alone, so no reactive stage ran at all.

use std::path::Path;

use crate::common::tour::tour;
use crate::support::{Driver, press, settle};
use crossterm::event::KeyCode;
use ctxlab::compact::{PipelineConfig, Stage, Strategy};
use ctxlab::record::Recorder;
use ctxlab::tui::Msg;
use ctxlab::tui::app::Startup;

fn recorded_tour(dir: &Path) -> std::path::PathBuf {
    let mut recorder =
        Recorder::create(dir, ctxlab::session::recorded::format::FrontEnd::Run).unwrap();
    for e in &tour().events {
        recorder.record(e);
    }
    recorder.path().to_path_buf()
}

/// The recording opened in the browser and replayed with `r` under `config`.
fn replayed(dir: &Path, config: PipelineConfig) -> Driver {
    let path = recorded_tour(&dir.join("data/sessions"));
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut d = Driver::new(&ws, true);
    d.app.update(Msg::Start(Box::new(Startup {
        scratch_root: Some(dir.join("data/scratch")),
        ..Startup::default()
    })));
    crate::support::set_config(&mut d.app, config);
    let fx = crate::support::open_session(&mut d.app, path);
    settle(&mut d.app, fx);
    assert!(d.app.loading().is_none(), "opened");
    let rest = press(&mut d.app, KeyCode::Char('r'));
    assert!(rest.is_empty(), "{rest:?}");
    d
}

#[test]
fn the_browser_s_replay_of_a_recording_follows_its_refusal_and_compact_tool() {
    let dir = tempfile::tempdir().unwrap();
    let d = replayed(dir.path(), PipelineConfig::default());
    let open = d.app.sessions().open().expect("opened");
    let r = open.replay().expect("replayed").replay();
    assert!(r.error.is_none(), "{:?}", r.error);
    let summaries: Vec<(usize, Stage)> = r
        .stages
        .iter()
        .filter(|(_, s)| s.changed && s.stage.summarizes())
        .map(|(call, s)| (*call, s.stage))
        .collect();
    assert!(
        summaries.contains(&(31, Stage::ReactiveCompact)),
        "the recorded refusal of call 30 is followed at call 31: {summaries:?}"
    );
    assert!(
        summaries.iter().any(|(_, s)| *s == Stage::CompactHistory),
        "{summaries:?}"
    );
    assert!(r.not_applied().is_empty(), "{:?}", r.not_applied());
}

#[test]
fn under_another_strategy_the_browser_s_replay_says_what_it_could_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = replayed(dir.path(), PipelineConfig::for_strategy(Strategy::S06));
    let r = d
        .app
        .sessions()
        .open()
        .and_then(|o| o.replay())
        .expect("replayed")
        .replay()
        .clone();
    assert_eq!(
        r.not_applied(),
        [
            "call 30: the API refused the request as too long: not applied (s06 has no reactive compaction)"
        ]
    );
    let text = crate::support::screen(&mut d.app, 200, 50);
    assert!(
        text.contains("recorded call 30: the API refused the request"),
        "{text}"
    );
}
