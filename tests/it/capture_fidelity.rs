//! Captures of the real agents (Claude Code 2.1.332, Codex 0.171.0) run through `ctxlab
//! proxy` against `scripts/real_agents/scripted_upstream.py`, one proxy per agent, trimmed
//! (long strings cut the same way in every request, tool schemas and system prompts
//! shortened): `ctxlab inspect CAPTURE --json` gives the calls, tool pairs and compactions
//! the scripted server's own record of the run says (docs/capture.md, "A capture as a
//! session"). The server's record, per run:
//! - Claude Code: 13 requests: 9 answered with a tool call, 3 with text, 1 summary (its
//!   `/compact`, sent with tools), so 12 calls of the thread and 1 compaction;
//! - Codex: 18 requests: 13 tool calls, 3 answers, 2 summaries (mid-turn auto compactions,
//!   `request_kind` `compaction` in `x-codex-turn-metadata`), so 16 calls and 2 compactions.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cli::{homeless, json_out};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/captures")
        .join(name)
}

pub fn inspect(path: &Path) -> Value {
    json_out(homeless().arg("inspect").arg(path).arg("--json"))
}

/// The exchanges of a capture file, in order.
pub fn exchanges(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "exchange")
        .collect()
}

/// The prompt tokens an exchange's response recorded.
fn context_of(e: &Value) -> u64 {
    let u = &e["response"]["usage"];
    ["input_tokens", "cache_read_tokens", "cache_creation_tokens"]
        .iter()
        .map(|k| u[k].as_u64().unwrap_or(0))
        .sum()
}

fn compaction_request_numbers(s: &Value, path: &Path) -> Vec<usize> {
    // The compactions' lines are their requests' lines (the header is line 1).
    let exchanges = exchanges(path);
    s["compactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let line = c["line"].as_u64().unwrap() as usize;
            exchanges[line - 2]["n"].as_u64().unwrap() as usize
        })
        .collect()
}

#[test]
fn claude_codes_compact_is_one_compaction_and_its_summary_request_no_call() {
    let path = fixture("claude_code_compact.jsonl");
    let s = inspect(&path);
    assert_eq!(s["calls"], 12, "{s:#}");
    assert_eq!(s["calls_with_usage"], 12);
    assert_eq!(s["tool_pairs"], 9);
    let compactions = s["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1, "{compactions:#?}");
    // At the summary request (the 9th), between the 8th call and the 10th.
    assert_eq!(compaction_request_numbers(&s, &path), [9]);
    let all = exchanges(&path);
    let c = &compactions[0];
    assert_eq!(c["tokens_before"]["tokens"], context_of(&all[7]));
    // The tokens after: the next call's recorded usage, never `?`.
    assert_eq!(c["tokens_after"]["tokens"], context_of(&all[9]));
    assert_eq!(c["tokens_after"]["source"], "first_call_after");
    assert_eq!(
        s["skipped"]["compaction request (the agent asking for its summary)"],
        1
    );
}

#[test]
fn codex_compaction_requests_are_no_calls_and_each_one_compaction() {
    let path = fixture("codex_compactions.jsonl");
    let s = inspect(&path);
    assert_eq!(s["calls"], 16, "{s:#}");
    assert_eq!(s["calls_with_usage"], 16);
    // Each tool call and its output, those sent only in the compaction request included.
    assert_eq!(s["tool_pairs"], 13);
    assert_eq!(compaction_request_numbers(&s, &path), [7, 14]);
    let all = exchanges(&path);
    for (c, (before, after)) in s["compactions"]
        .as_array()
        .unwrap()
        .iter()
        .zip([(5, 7), (12, 14)])
    {
        assert_eq!(c["kind"], "full");
        // Only the header says so.
        assert_eq!(c["trigger"], "auto");
        assert_eq!(c["tokens_before"]["tokens"], context_of(&all[before]));
        assert_eq!(c["tokens_after"]["tokens"], context_of(&all[after]));
    }
}

/// Codex re-sends the prompts and the environment in the same user message as the
/// summary: the summary's length is the summary's, the block that holds the compaction
/// request's answer.
#[test]
fn a_codex_summary_is_measured_without_the_prompts_and_environment_resent_with_it() {
    let path = fixture("codex_compactions.jsonl");
    let s = inspect(&path);
    let all = exchanges(&path);
    let answer = all[6]["response"]["text"].as_str().unwrap();
    let after = all[7]["request"]["body"]["input"].as_array().unwrap();
    let texts: Vec<&str> = after
        .iter()
        .filter(|i| i["role"] == "user")
        .flat_map(|i| i["content"].as_array().unwrap())
        .filter_map(|b| b["text"].as_str())
        .collect();
    let summary = texts.iter().find(|t| t.contains(answer)).unwrap();
    assert!(texts.len() > 1, "the summary comes with other user text");
    assert_eq!(
        s["compactions"][0]["summary_chars"],
        summary.chars().count(),
        "{:#}",
        s["compactions"][0]
    );
}
