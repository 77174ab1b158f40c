//! `--strategy` on the real binary: `ctxlab run` plays the tour under s06, `ctxlab
//! pipeline` prints each strategy's shape, `ctxlab replay` reports in the strategy's unit,
//! config.toml names a strategy, and a bad name exits 2. Each run happens in scratch
//! folders with HOME and XDG_CONFIG_HOME pointing at an empty (or prepared) config.

use std::path::Path;

use crate::common::cli::{SCRIPTED_RUN, example};
use assert_cmd::Command;
use serde_json::Value;

/// The binary sealed off in `home` (its working directory too).
fn ctxlab(home: &Path) -> Command {
    crate::common::cli::sealed(home, home)
}

fn run_tour(home: &Path, ws: &Path, strategy: Option<&str>) -> (bool, String) {
    let mut cmd = ctxlab(home);
    cmd.args(SCRIPTED_RUN).arg(ws);
    if let Some(s) = strategy {
        cmd.args(["--strategy", s]);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn run_plays_the_tour_under_s06() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (ok, out) = run_tour(home.path(), ws.path(), Some("s06"));
    assert!(ok, "{out}");
    assert!(out.contains("[stage] micro_compact "), "{out}");
    assert!(out.contains(" tokens: "), "sizes in tokens: {out}");
    assert!(out.contains("[stage] auto_compact "), "{out}");
    assert!(out.trim_end().ends_with("[done] compacted"), "{out}");
    assert!(!out.contains("[error]"), "{out}");
}

#[test]
fn the_config_file_chooses_the_strategy_and_the_flag_wins() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config/ctxlab");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "strategy = \"s08-latest\"\n").unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (ok, out) = run_tour(home.path(), ws.path(), None);
    assert!(ok, "{out}");
    assert!(out.contains("[stage] fit_tool_results "), "{out}");
    assert!(out.contains(" JSON chars: "), "{out}");
    let ws = tempfile::tempdir().unwrap();
    let (ok, out) = run_tour(home.path(), ws.path(), Some("guarded"));
    assert!(ok, "{out}");
    assert!(
        out.contains("archived 2 messages -> .transcripts/archive.jsonl"),
        "{out}"
    );
    assert!(!out.contains("fit_tool_results"), "{out}");
}

#[test]
fn pipeline_prints_the_shape_of_each_strategy() {
    let home = tempfile::tempdir().unwrap();
    let shape = |strategy: &str| -> Value {
        let ws = tempfile::tempdir().unwrap();
        let out = ctxlab(home.path())
            .args(["pipeline", "--strategy", strategy, "--input"])
            .arg(example())
            .arg("--workspace")
            .arg(ws.path())
            .args(["--now", "1700000000", "--summary-text", "facts"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let s06 = shape("s06");
    assert_eq!(
        keys(&s06),
        [
            "strategy",
            "estimate_tokens_input",
            "stages",
            "auto_compact_triggered",
            "auto_compact"
        ]
    );
    assert!(
        s06["auto_compact"]["summarizer_requests"][0]
            .get("system")
            .is_none()
    );
    let latest = shape("s08-latest");
    assert_eq!(latest["strategy"], "s08-latest");
    assert!(latest["probe_micro_no_target"].is_object());
    assert_eq!(keys(&latest["stages"]), ["budget", "snip", "micro", "fit"]);
    let guarded = shape("guarded");
    assert!(guarded["stages"]["snip"]["reason"].is_string());
    assert_eq!(shape("lesson"), shape("s08"));
}

#[test]
fn an_unknown_strategy_exits_2_naming_the_valid_ones() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab(home.path())
        .args(["pipeline", "--strategy", "s07", "--input"])
        .arg(example())
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s08-latest") && err.contains("guarded"),
        "{err}"
    );
}

#[test]
fn replay_reports_in_the_strategy_s_unit_and_counts_its_stages() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab(home.path())
        .args([
            "replay",
            "--strategy",
            "s06",
            "--json",
            "--summary-text",
            "s",
        ])
        .arg(example())
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let fired: Vec<&String> = last["fired"].as_object().unwrap().keys().collect();
    assert_eq!(fired, ["auto_compact", "micro_compact"]);
}
