//! The recorded cases' `expected_by_strategy`: what the lesson's newest s08 (`s08-latest`)
//! and its older s06 did with the same inputs, checked through the same function `ctxlab
//! pipeline --strategy NAME` prints. Transcript names come from the counter `--now` turns
//! on, in the order snip archive, compact probe, reactive probe, as the cases were made.

use std::path::{Path, PathBuf};

use ctxlab::commands::pipeline::{parse_history_input, pipeline_report};
use ctxlab::compact::{PipelineConfig, Strategy};
use serde_json::Value;

use crate::conformance::{NOW, SUMMARY, expand, files};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 12);
    paths
}

/// Runs one case under `strategy`; returns (id, what ctxlab printed, what was recorded).
fn run(path: &Path, strategy: Strategy) -> (String, Value, Value) {
    let case =
        expand(&serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()).unwrap());
    let id = case["id"].as_str().unwrap().to_string();
    let ws = tempfile::tempdir().unwrap();
    for f in case["input"]["files"].as_array().unwrap() {
        let p = ws.path().join(f["path"].as_str().unwrap());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, f["content"].as_str().unwrap()).unwrap();
    }
    let input = parse_history_input(&serde_json::to_string(&case["input"]).unwrap()).unwrap();
    let out = pipeline_report(
        input,
        ws.path(),
        PipelineConfig::for_strategy(strategy),
        Some(NOW),
        Some(SUMMARY),
    )
    .unwrap();
    let want = match strategy {
        Strategy::S08 => case["expected"].clone(),
        other => case["expected_by_strategy"][other.name()].clone(),
    };
    assert!(want.is_object(), "{id}: no recorded {strategy}");
    (id, out, want)
}

/// The summarizing probe's history, files and exact requests (`model` is a placeholder in
/// the recordings; s06's have no `system`).
fn check_probe(id: &str, name: &str, got: &Value, want: &Value) {
    assert_eq!(got["messages"], want["messages"], "{id}: {name}.messages");
    assert_eq!(
        files(&got["files_written"]),
        files(&want["files_written"]),
        "{id}: {name}.files"
    );
    let (g, w) = (
        got["summarizer_requests"].as_array().unwrap(),
        want["summarizer_requests"].as_array().unwrap(),
    );
    assert_eq!(g.len(), w.len(), "{id}: {name} request count");
    for (g, w) in g.iter().zip(w) {
        for key in ["system", "messages", "max_tokens"] {
            assert_eq!(
                g.get(key),
                w.get(key),
                "{id}: {name}.summarizer_requests.{key}"
            );
        }
    }
}

/// The printed object has exactly the recorded keys (plus `strategy`), at the top and in
/// every stage: the shape, not only the values.
fn check_shape(id: &str, out: &Value, want: &Value) {
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.retain(|k| k != "strategy");
        k.sort();
        k
    };
    assert_eq!(keys(out), keys(want), "{id}: top-level keys");
    assert_eq!(keys(&out["stages"]), keys(&want["stages"]), "{id}: stages");
    for (name, stage) in want["stages"].as_object().unwrap() {
        let mut got: Vec<&String> = out["stages"][name].as_object().unwrap().keys().collect();
        let mut rec: Vec<&String> = stage.as_object().unwrap().keys().collect();
        got.sort();
        rec.sort();
        assert_eq!(got, rec, "{id}: keys of stage {name}");
    }
}

fn check_stage(id: &str, name: &str, got: &Value, want: &Value, size_key: &str) {
    assert!(want.is_object(), "{id}: {name} not recorded");
    for key in ["ran", "changed", "messages", size_key] {
        assert_eq!(got.get(key), want.get(key), "{id}: {name}.{key}");
    }
    if want.get("files_written").is_some() {
        assert_eq!(
            files(&got["files_written"]),
            files(&want["files_written"]),
            "{id}: {name}.files_written"
        );
    }
}

#[test]
fn every_recorded_case_matches_s08_latest() {
    for path in cases() {
        let (id, out, want) = run(&path, Strategy::S08Latest);
        assert_eq!(out["strategy"], "s08-latest");
        check_shape(&id, &out, &want);
        assert_eq!(
            out["estimate_chars_input"], want["estimate_chars_input"],
            "{id}: estimate_chars_input"
        );
        for stage in ["budget", "snip", "micro", "fit"] {
            check_stage(
                &id,
                stage,
                &out["stages"][stage],
                &want["stages"][stage],
                "estimate_chars",
            );
        }
        check_stage(
            &id,
            "probe_micro_no_target",
            &out["probe_micro_no_target"],
            &want["probe_micro_no_target"],
            "estimate_chars",
        );
        assert_eq!(
            out["auto_compact_triggered"], want["auto_compact_triggered"],
            "{id}: trigger"
        );
        for probe in ["compact_history", "reactive_compact"] {
            check_probe(&id, probe, &out[probe], &want[probe]);
        }
    }
}

#[test]
fn every_recorded_case_matches_s06() {
    for path in cases() {
        let (id, out, want) = run(&path, Strategy::S06);
        assert_eq!(out["strategy"], "s06");
        check_shape(&id, &out, &want);
        assert_eq!(
            out["estimate_tokens_input"], want["estimate_tokens_input"],
            "{id}: estimate_tokens_input"
        );
        check_stage(
            &id,
            "micro",
            &out["stages"]["micro"],
            &want["stages"]["micro"],
            "estimate_tokens",
        );
        assert_eq!(
            out["stages"].as_object().unwrap().len(),
            1,
            "{id}: s06 has micro only"
        );
        assert_eq!(
            out["auto_compact_triggered"], want["auto_compact_triggered"],
            "{id}: trigger"
        );
        check_probe(
            &id,
            "auto_compact",
            &out["auto_compact"],
            &want["auto_compact"],
        );
        assert!(
            out.get("reactive_compact").is_none(),
            "{id}: s06 has no reactive stage"
        );
    }
}

/// The s08 answer (`expected`) stays byte for byte what it was before the other versions
/// were recorded next to it: the s08 runner in `conformance.rs` checks it, and the keys of
/// its shape are those of docs/pipeline.md "`ctxlab pipeline`".
#[test]
fn the_s08_shape_is_unchanged_by_the_other_strategies() {
    let path = &cases()[0];
    let (id, out, want) = run(path, Strategy::S08);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let recorded: Vec<&str> = want
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // The recording's own key is `estimate_size_input` as well; only `strategy` is ours.
    assert_eq!(&keys[1..], &recorded[..], "{id}");
    assert_eq!(
        keys,
        [
            "strategy",
            "estimate_size_input",
            "stages",
            "auto_compact_triggered",
            "compact_history",
            "reactive_compact"
        ],
        "{id}"
    );
    assert_eq!(out["strategy"], "s08");
}
