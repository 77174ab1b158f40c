//! Item 12: `ctxlab pipeline` writes its report as it goes instead of building a JSON tree.
//! The streamed text must keep the key order the tree printed (with `preserve_order` the
//! tree kept insertion order for free; a writer has to get it right by hand), for every
//! strategy, and be compact JSON as `serde_json::to_string` of the tree was. (The values
//! themselves are checked against the recorded cases by `conformance*`.)

use std::path::Path;

use ctxlab::commands::pipeline::{parse_history_input, write_pipeline_report};
use ctxlab::compact::{PipelineConfig, Strategy};
use serde_json::Value;

use crate::conformance::{NOW, SUMMARY, expand};

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_streamed_report_keeps_the_key_order_of_the_tree_for_every_strategy() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 12);
    let mut checked = 0;
    for path in &paths {
        let case = expand(&serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap());
        for strategy in [Strategy::S08, Strategy::S08Latest, Strategy::S06] {
            let want = match strategy {
                Strategy::S08 => case["expected"].clone(),
                other => case["expected_by_strategy"][other.name()].clone(),
            };
            if !want.is_object() {
                continue;
            }
            let ws = tempfile::tempdir().unwrap();
            for f in case["input"]["files"].as_array().unwrap() {
                let p = ws.path().join(f["path"].as_str().unwrap());
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, f["content"].as_str().unwrap()).unwrap();
            }
            let input =
                parse_history_input(&serde_json::to_string(&case["input"]).unwrap()).unwrap();
            let mut bytes = Vec::new();
            write_pipeline_report(
                input,
                ws.path(),
                PipelineConfig::for_strategy(strategy),
                Some(NOW),
                Some(SUMMARY),
                &mut bytes,
            )
            .unwrap();
            let out: Value = serde_json::from_slice(&bytes).unwrap();
            // Compact JSON, as `serde_json::to_string` of the tree printed it.
            assert_eq!(
                String::from_utf8(bytes).unwrap(),
                serde_json::to_string(&out).unwrap(),
                "{path:?} {strategy:?}"
            );
            let id = path.display();
            // The order the tree printed (`preserve_order`, keys in insertion order).
            let (size, stage_order): (&str, &[&str]) = match strategy {
                Strategy::S08 => (
                    "estimate_size",
                    &["changed", "messages", "estimate_size", "files_written"],
                ),
                Strategy::S08Latest => (
                    "estimate_chars",
                    &[
                        "ran",
                        "changed",
                        "messages",
                        "files_written",
                        "estimate_chars",
                    ],
                ),
                _ => (
                    "estimate_tokens",
                    &["changed", "messages", "files_written", "estimate_tokens"],
                ),
            };
            let mut top = vec![
                "strategy".to_string(),
                format!("{size}_input"),
                "stages".into(),
            ];
            if strategy == Strategy::S08Latest {
                top.push("probe_micro_no_target".into());
            }
            top.push("auto_compact_triggered".into());
            assert_eq!(
                keys(&out)[..top.len()],
                top[..],
                "{id} {strategy:?}: top-level order"
            );
            for (stage, got) in out["stages"].as_object().unwrap() {
                if got.get("ran") == Some(&Value::Bool(false)) {
                    assert_eq!(keys(got), ["ran"], "{id} {strategy:?}: {stage}");
                    continue;
                }
                assert_eq!(
                    keys(got),
                    stage_order,
                    "{id} {strategy:?}: stage {stage} key order"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} recorded reports compared");
}
