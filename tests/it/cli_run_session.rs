//! `ctxlab run` with several prompts: one session, one history, `/compact [focus]` as a
//! manual compaction, the run stopping at the first step that fails. And where the model's
//! context window comes from (`--set`, the environment, `config.toml`).

use std::collections::HashMap;

use ctxlab::startup::{LaunchOptions, prepare_with};
use ctxlab::user_config::{FileSettings, Lookup, ProviderKind};
use serde_json::Value;

use crate::common::cli::sealed as ctxlab;

#[test]
fn several_prompts_run_in_one_session_with_a_compact_between() {
    let (cwd, home, ws) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let out = ctxlab(cwd.path(), home.path())
        .args(["run", "--provider", "scripted", "--pace-ms", "0", "--json"])
        .arg("--workspace")
        .arg(ws.path())
        .args(["Fix the CSV parser", "/compact the parser fix", "what now?"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let started: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "turn_started")
        .map(|e| e["request"].as_str().unwrap())
        .collect();
    assert_eq!(started, ["Fix the CSV parser", "what now?"]);
    assert_eq!(
        events.iter().filter(|e| e["event"] == "ready").count(),
        1,
        "one agent, one session"
    );
    // The manual compaction ran between the two turns, with its focus.
    let position = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred).unwrap();
    let first_done = position(&|e| e["event"] == "turn_done");
    let manual = position(&|e| {
        e["event"] == "stage_ran"
            && e["report"]["stage"] == "compact_history"
            && e["report"]["changes"][0]["focus"] == "the parser fix"
    });
    let second = position(&|e| e["event"] == "turn_started" && e["request"] == "what now?");
    assert!(first_done < manual && manual < second);
    // The second turn's request went out on the compacted history: one summary message
    // and the new request.
    let sent = events[second..]
        .iter()
        .find(|e| e["event"] == "request_sent" && e["summary"] == false)
        .unwrap();
    assert_eq!(sent["messages"], 2);
    assert_eq!(events.last().unwrap()["event"], "turn_done");
}

#[test]
fn a_failed_step_ends_the_run_with_an_error() {
    let (cwd, home, ws) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    // Nothing to compact yet: the compaction fails and the request after it never runs.
    let out = ctxlab(cwd.path(), home.path())
        .args(["run", "--provider", "scripted", "--pace-ms", "0"])
        .arg("--workspace")
        .arg(ws.path())
        .args(["/compact", "hello"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("> /compact"), "{stdout}");
    assert!(stdout.contains("nothing to compact yet"), "{stdout}");
    assert!(!stdout.contains("> hello"), "{stdout}");
}

#[test]
fn the_context_window_comes_from_set_then_environment_then_config_file() {
    let ws = tempfile::tempdir().unwrap();
    let options = |sets: &[&str]| LaunchOptions {
        provider: Some(ProviderKind::Scripted),
        workspace: Some(ws.path().to_path_buf()),
        pace_ms: Some(0),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..LaunchOptions::default()
    };
    let dotenv = HashMap::new();
    let env_with = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let file = FileSettings {
        context_window_tokens: Some(4_096),
        ..FileSettings::default()
    };
    let window = |sets: &[&str], env: &dyn Fn(&str) -> Option<String>, file: &FileSettings| {
        let lookup = Lookup {
            env,
            dotenv: &dotenv,
        };
        prepare_with(&options(sets), &lookup, file)
            .unwrap()
            .setup
            .context_window_tokens
    };
    let no_env = env_with(&[]);
    let env = env_with(&[("CTXLAB_CONTEXT_WINDOW_TOKENS", "2048")]);
    assert_eq!(window(&[], &no_env, &FileSettings::default()), None);
    assert_eq!(window(&[], &no_env, &file), Some(4_096));
    assert_eq!(window(&[], &env, &file), Some(2_048));
    assert_eq!(
        window(&["context_window_tokens=512"], &env, &file),
        Some(512)
    );
    // 0 means unknown, whatever the environment says.
    assert_eq!(window(&["context_window_tokens=0"], &env, &file), None);
    // Other keys still reach the pipeline.
    let lookup = Lookup {
        env: &no_env,
        dotenv: &dotenv,
    };
    let launch = prepare_with(
        &options(&["context_window_tokens=512", "context_limit=9000"]),
        &lookup,
        &FileSettings::default(),
    )
    .unwrap();
    assert_eq!(launch.setup.config.context_limit, 9_000);
    let bad = prepare_with(&options(&["context_window_tokens=lots"]), &lookup, &file);
    let message = bad.err().unwrap().to_string();
    assert!(message.contains("context_window_tokens"), "{message}");
}
