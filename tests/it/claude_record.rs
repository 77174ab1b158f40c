//! Claude Code 2.1.332's own record of its requests (issue 31, "the real agents as the
//! oracle"): the fixture `claude_code_2_1_332.jsonl` is the file the real CLI wrote in our
//! harness (three turns, a /compact, persisted outputs), trimmed by
//! `scripts/real_agents/trim_claude_session.py`. Every line type it writes is known; the
//! breakdown takes the system prompt and the tool schemas from the file's request shape and
//! the reminders from its rendered attachments, so little is "not in the file"; the
//! compaction's numbers are the file's `compactMetadata`.

use assert_cmd::Command;

use serde_json::Value;

use crate::common::cli::{homeless, json_out};
use crate::common::files::session_fixture;

const FIXTURE: &str = "claude_code_2_1_332.jsonl";

fn fixture_lines() -> Vec<Value> {
    std::fs::read_to_string(session_fixture(FIXTURE))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text_out(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_line_type_of_2_1_332_is_known() {
    let lines = fixture_lines();
    let types: std::collections::BTreeSet<&str> =
        lines.iter().filter_map(|l| l["type"].as_str()).collect();
    for t in [
        "api-request-shape",
        "api-request",
        "api-request-blob",
        "attachment",
        "cost-state",
    ] {
        assert!(types.contains(t), "the fixture holds {t}");
    }
    let v = json_out(
        homeless()
            .args(["inspect", "--json"])
            .arg(session_fixture(FIXTURE)),
    );
    assert_eq!(v["unknown_types"], serde_json::json!({}), "{v}");
    for key in v["skipped"].as_object().unwrap().keys() {
        assert!(!key.starts_with("unknown"), "{key}");
    }
    let record = &v["request_record"];
    assert_eq!(record["requests"], 12);
    assert_eq!(record["requests_matched"], 12);
    assert_eq!(record["calls_with_shape"], v["calls_with_usage"]);
    assert_eq!(record["shapes"], 1);
    assert_eq!(
        record["context_edits"],
        serde_json::json!({"clear_thinking_20251015": 12})
    );
    let text = text_out(homeless().arg("inspect").arg(session_fixture(FIXTURE)));
    assert!(text.contains("\nunknown types: none\n"), "{text}");
}

#[test]
fn an_unknown_line_type_is_named_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut text = std::fs::read_to_string(session_fixture(FIXTURE)).unwrap();
    text.push_str("{\"type\":\"brand-new-record\",\"sessionId\":\"x\"}\n");
    std::fs::write(&path, text).unwrap();
    let v = json_out(homeless().args(["inspect", "--json"]).arg(&path));
    assert_eq!(
        v["unknown_types"],
        serde_json::json!({"brand-new-record": 1})
    );
    let out = text_out(homeless().arg("inspect").arg(&path));
    assert!(
        out.contains("\nunknown types: brand-new-record 1\n"),
        "{out}"
    );
}

/// The call's tokens of one category.
fn tokens(call: &Value, key: &str) -> u64 {
    call["categories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["category"] == key)
        .map(|c| c["tokens"].as_u64().unwrap())
        .sum()
}

#[test]
fn the_breakdown_takes_the_prompt_tools_and_reminders_from_the_file() {
    let lines = fixture_lines();
    let shape = &lines
        .iter()
        .find(|l| l["type"] == "api-request-shape")
        .unwrap()["shape"];
    let system_chars: usize = shape["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap().chars().count())
        .sum::<usize>()
        + 2 * (shape["system"].as_array().unwrap().len() - 1);
    let tools_chars = serde_json::to_string(&shape["tools"])
        .unwrap()
        .chars()
        .count();
    let v = json_out(
        homeless()
            .args(["inspect", "--calls", "--json"])
            .arg(session_fixture(FIXTURE)),
    );
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 12);
    let first = &calls[0];
    let (system, tools) = (
        tokens(first, "system_prompt"),
        tokens(first, "tool_definitions"),
    );
    assert!(system > 0 && tools > 0, "{first}");
    // Both are the shape's characters over one ratio: their ratio is the characters'.
    let want = tools_chars as f64 / system_chars as f64;
    let got = tools as f64 / system as f64;
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "tools/system {got} vs {want}"
    );
    assert!(tokens(first, "reminders") > 0, "{first}");
    for call in calls {
        let recorded = call["recorded_tokens"].as_u64().unwrap();
        let missing = tokens(call, "not_in_file");
        assert!(
            missing * 100 <= 5 * recorded,
            "call {}: {missing} of {recorded} not in the file",
            call["call"]
        );
    }
    // Claude Code's persisted-output stage is named as such.
    assert!(tokens(&calls[1], "claude_code_persisted_output") > 0);
    assert_eq!(tokens(&calls[1], "persisted_previews"), 0);
    let table = text_out(
        homeless()
            .args(["inspect", "--calls"])
            .arg(session_fixture(FIXTURE)),
    );
    assert!(table.contains("Claude Code persisted output"), "{table}");
    let inspect = text_out(homeless().arg("inspect").arg(session_fixture(FIXTURE)));
    assert!(
        inspect.contains("persisted outputs: 3 tool results (Claude Code's persisted-output stage"),
        "{inspect}"
    );
}

#[test]
fn the_compaction_has_the_files_compact_metadata() {
    let lines = fixture_lines();
    let meta = &lines
        .iter()
        .find(|l| l["subtype"] == "compact_boundary")
        .unwrap()["compactMetadata"];
    let v = json_out(
        homeless()
            .args(["inspect", "--json"])
            .arg(session_fixture(FIXTURE)),
    );
    let compactions = v["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1);
    let c = &compactions[0];
    assert_eq!(c["trigger"], "manual");
    assert_eq!(c["tokens_before"]["tokens"], meta["preTokens"]);
    assert_eq!(c["tokens_before"]["source"], "recorded");
    assert_eq!(c["tokens_after"]["tokens"], meta["postTokens"]);
    assert_eq!(c["duration_ms"], meta["durationMs"]);
    assert_eq!(c["kept_messages"], 1);
}
