//! One identity per compaction and per call (issue 33, item 3): the tour's run, recorded by
//! the recorder from the same stream the workbench folds, names each compaction `#N at
//! message M` (`session::numbers::compaction_label`) in `inspect` and `forgot` on the
//! recording, in the workbench's `F` (the timeline's reports) and in the export's page, and
//! counts its calls, the refused one included, alike on each.

use std::process::Command;

use crate::common::tour::tour;
use ctxlab::forgot::text::headline;
use ctxlab::session::numbers::compaction_label;
use ctxlab::timeline::forgot_inputs::{compaction_ids, timeline_reports};
use ctxlab::timeline::{Source, Timeline};

/// The tour recorded as `ctxlab run` records it.
fn recording() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut recorder = ctxlab::record::Recorder::create(
        dir.path(),
        ctxlab::session::recorded::format::FrontEnd::Run,
    )
    .unwrap();
    for ev in &tour().events {
        recorder.record(ev);
    }
    let path = recorder.path().to_path_buf();
    (dir, path)
}

fn cli(args: &[&str], path: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(args)
        .arg(path)
        .env(
            "CTXLAB_DATA_DIR",
            std::env::temp_dir().join("ctxlab-it-ident"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The labels the recording's reader gives: what `inspect` and `forgot` read.
fn recorded_labels(path: &std::path::Path) -> Vec<String> {
    let s = ctxlab::session::load_session(path).unwrap();
    s.compactions
        .iter()
        .enumerate()
        .map(|(i, c)| compaction_label(i + 1, Some(c.at)))
        .collect()
}

/// The workbench's compactions (its `F` and the export read `timeline_reports`) are the
/// recording's, label for label: before, `F` said "#30 ... at message 34" (every stage that
/// forgot something counted, and a call number given as the message).
#[test]
fn the_workbench_and_the_recording_name_each_compaction_alike() {
    let (_dir, path) = recording();
    let want = recorded_labels(&path);
    assert_eq!(want.len(), 3, "the tour compacts three times");
    let t = Timeline::from_events(Source::Live, 0, &tour().events);
    let ids: Vec<String> = compaction_ids(&t)
        .iter()
        .map(|c| compaction_label(c.number, Some(c.at_message)))
        .collect();
    assert_eq!(ids, want);
    // F's first line: the reports of the summarizing steps carry the label.
    let summarized: Vec<String> = timeline_reports(&t)
        .iter()
        .filter(|(_, r)| r.index > 0)
        .map(|(_, r)| headline(r))
        .collect();
    assert_eq!(summarized.len(), want.len());
    for (line, label) in summarized.iter().zip(&want) {
        assert!(line.starts_with(&format!("{label}: ")), "{line} / {label}");
    }
    // A stage that forgot without summarizing is no compaction: no number of its own.
    for (_, r) in timeline_reports(&t).iter().filter(|(_, r)| r.index == 0) {
        assert!(!headline(r).starts_with('#'), "{}", headline(r));
    }
}

/// Each text surface shows every label: `inspect` and `forgot` on the recording, the
/// export's page of the same run.
#[test]
fn inspect_forgot_and_the_export_show_the_same_labels() {
    let (_dir, path) = recording();
    let want = recorded_labels(&path);
    let inspect = cli(&["inspect"], &path);
    let forgot = cli(&["forgot"], &path);
    let page =
        ctxlab::timeline::html::page(&Timeline::from_events(Source::Live, 0, &tour().events));
    for label in &want {
        for (name, text) in [
            ("inspect", &inspect),
            ("forgot", &forgot),
            ("export", &page),
        ] {
            assert!(
                text.contains(&format!("{label} ")) || text.contains(&format!("{label}:")),
                "{name} lacks {label}:\n{text}"
            );
        }
    }
}

/// The tour's calls, the one the API refused included, are as many on every surface: the
/// timeline (and so the export) numbers the refused call, and `inspect` and `sessions` on
/// the recording count it too and say it was refused (they said 37 to the timeline's 38).
#[test]
fn every_surface_counts_the_refused_call() {
    let (_dir, path) = recording();
    let t = Timeline::from_events(Source::Live, 0, &tour().events);
    let refused = t
        .calls
        .iter()
        .filter(|c| c.outcome == ctxlab::timeline::CallOutcome::PromptTooLong)
        .count();
    assert_eq!(refused, 1, "the tour's API refuses once");
    let inspect: serde_json::Value =
        serde_json::from_str(&cli(&["inspect", "--json"], &path)).unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&cli(&["sessions", "--json"], &path)).unwrap();
    let row = &listed.as_array().expect("a list")[0];
    for (name, calls) in [("inspect", &inspect["calls"]), ("sessions", &row["calls"])] {
        assert_eq!(calls.as_u64(), Some(t.calls.len() as u64), "{name}");
    }
    assert_eq!(inspect["refused_calls"].as_u64(), Some(1));
    let text = cli(&["inspect"], &path);
    assert!(
        text.contains(&format!(
            "{} model calls (1 refused as too long,",
            t.calls.len()
        )),
        "{text}"
    );
    let page = ctxlab::timeline::html::page(&t);
    assert!(
        page.contains(&format!("{} model calls", t.calls.len())),
        "the export"
    );
}

/// The compare view's forgot view replays the recorded session under the strategy that
/// ran it (`forgot::from_replay::replay_inputs_by_call`): its summaries sit where the
/// recording lists the run's, so they carry the recording's message (it said 65 where the
/// recording said 67: the replay counted its conversation messages, not the summaries).
#[test]
fn the_compare_replay_places_each_summary_where_the_recording_does() {
    use ctxlab::forgot::from_replay::{replay_inputs_by_call, summarizes};
    let (_dir, path) = recording();
    let want: Vec<usize> = ctxlab::session::load_session(&path)
        .unwrap()
        .compactions
        .iter()
        .map(|c| c.at)
        .collect();
    let file = ctxlab::session::load_history(&path).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let store = ctxlab::store::Store::new(scratch.path()).dry_run();
    let options = ctxlab::pipeline_replay::ReplayOptions {
        config: ctxlab::compact::PipelineConfig::default(),
        summary_text: None,
        summarizer: None,
        now_secs: 0,
        recorded: file.recorded.clone(),
    };
    let inputs = replay_inputs_by_call(file.messages, "s", &store, &options).unwrap();
    let got: Vec<usize> = inputs
        .iter()
        .filter(|(_, i)| summarizes(i))
        .filter_map(|(_, i)| i.at)
        .collect();
    assert_eq!(got, want);
}
