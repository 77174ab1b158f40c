//! The recorded cases of the lesson's own pipeline (`tests/conformance/*.json`, produced by the
//! lesson's code), run through the same function `ctxlab pipeline` prints.

use std::path::Path;

use ctxlab::commands::pipeline::{parse_history_input, pipeline_report};
use ctxlab::compact::PipelineConfig;
use serde_json::Value;

pub(crate) const NOW: u64 = 1_700_000_000;
pub(crate) const SUMMARY: &str =
    "Goal: fix the \"parser\" bug in src\\lib.rs\nFiles: 解析器.rs ✅\nNext: run tests";

/// Expands `{"$text": [...]}` compact strings everywhere in a value.
pub(crate) fn expand(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$text") => {
            let mut s = String::new();
            for seg in m["$text"].as_array().unwrap() {
                match seg {
                    Value::String(t) => s.push_str(t),
                    Value::Object(r) => {
                        let unit = r["repeat"].as_str().unwrap();
                        let times = r["times"].as_u64().unwrap() as usize;
                        s.push_str(&unit.repeat(times));
                    }
                    other => panic!("bad segment {other}"),
                }
            }
            Value::String(s)
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), expand(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(expand).collect()),
        other => other.clone(),
    }
}

pub(crate) fn files(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn check_case(path: &Path) {
    let case =
        expand(&serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()).unwrap());
    let id = case["id"].as_str().unwrap().to_string();
    let ws = tempfile::tempdir().unwrap();
    for f in case["input"]["files"].as_array().unwrap() {
        let p = ws.path().join(f["path"].as_str().unwrap());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, f["content"].as_str().unwrap()).unwrap();
    }
    let input_text = serde_json::to_string(&case["input"]).unwrap();
    let input = parse_history_input(&input_text).unwrap();
    let out = pipeline_report(
        input,
        ws.path(),
        PipelineConfig::default(),
        Some(NOW),
        Some(SUMMARY),
    )
    .unwrap();
    let exp = &case["expected"];
    assert_eq!(
        out["estimate_size_input"], exp["estimate_size_input"],
        "{id}: estimate_size_input"
    );
    for stage in ["budget", "snip", "micro"] {
        let (got, want) = (&out["stages"][stage], &exp["stages"][stage]);
        assert_eq!(got["changed"], want["changed"], "{id}: {stage}.changed");
        assert_eq!(got["messages"], want["messages"], "{id}: {stage}.messages");
        assert_eq!(
            got["estimate_size"], want["estimate_size"],
            "{id}: {stage}.estimate_size"
        );
        assert_eq!(
            files(&got["files_written"]),
            files(&want["files_written"]),
            "{id}: {stage}.files_written"
        );
    }
    assert_eq!(
        out["auto_compact_triggered"], exp["auto_compact_triggered"],
        "{id}: trigger"
    );
    for probe in ["compact_history", "reactive_compact"] {
        let (got, want) = (&out[probe], &exp[probe]);
        assert_eq!(got["messages"], want["messages"], "{id}: {probe}.messages");
        assert_eq!(
            files(&got["files_written"]),
            files(&want["files_written"]),
            "{id}: {probe}.files"
        );
        let reqs = want["summarizer_requests"].as_array().unwrap();
        let got_reqs = got["summarizer_requests"].as_array().unwrap();
        assert_eq!(got_reqs.len(), reqs.len(), "{id}: {probe} request count");
        for (g, w) in got_reqs.iter().zip(reqs) {
            for key in ["system", "messages", "max_tokens"] {
                assert_eq!(g[key], w[key], "{id}: {probe}.summarizer_requests.{key}");
            }
        }
    }
}

#[test]
fn every_recorded_case_matches_the_lesson() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 12);
    for p in paths {
        check_case(&p);
    }
}
