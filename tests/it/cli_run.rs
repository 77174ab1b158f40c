//! `ctxlab run`, the real binary: the scripted tour end to end as readable lines and as
//! JSON lines, and the clear errors for a missing key and for bad configuration. Each run
//! happens in a scratch directory (no `.env` unless the test writes one) with HOME and
//! XDG_CONFIG_HOME pointed at an empty folder (no config.toml), and without provider
//! variables from the calling environment.

use std::path::Path;

use crate::common::cli::{scratch, sealed};
use serde_json::Value;

#[test]
fn run_plays_the_tour_through_every_stage() {
    let s = scratch();
    let out = sealed(s.cwd.path(), s.home.path())
        .args([
            "run",
            "--provider",
            "scripted",
            "--pace-ms",
            "0",
            "--workspace",
        ])
        .arg(s.ws.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}\nstdout: {stdout}");
    for stage in [
        "tool_result_budget",
        "snip_compact",
        "micro_compact",
        "compact_history",
        "reactive_compact",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("[stage] ") && l.contains(stage)),
            "no [stage] line for {stage}:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("[compact tool] focus: the parse_line bug"),
        "the compact tool call is not listed:\n{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("[stage] ") && l.contains("reactive: ")),
        "reactive compaction is not listed:\n{stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("[done] end_turn"));
    assert!(stderr.contains("Demo project copied into"), "{stderr}");
    // The demo project was copied into the workspace and the tour wrote its files there.
    assert!(s.ws.path().join("NOTES.md").is_file());
    assert!(
        s.ws.path()
            .join(".task_outputs/tool-results/toolu_tour_035.txt")
            .is_file()
    );
}

#[test]
fn run_json_prints_one_event_object_per_line() {
    let s = scratch();
    let out = sealed(s.cwd.path(), s.home.path())
        .args([
            "run",
            "--provider",
            "scripted",
            "--pace-ms",
            "0",
            "--json",
            "--workspace",
        ])
        .arg(s.ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events: Vec<Value> = stdout
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}: {l}", i + 1));
            assert!(v.is_object(), "line {} is not an object", i + 1);
            assert!(v["event"].is_string(), "line {} has no event tag", i + 1);
            v
        })
        .collect();
    assert_eq!(events.first().unwrap()["event"], "ready");
    let last = events.last().unwrap();
    assert_eq!(last["event"], "turn_done");
    assert_eq!(last["stop_reason"], "end_turn");
    for stage in [
        "tool_result_budget",
        "snip_compact",
        "micro_compact",
        "compact_history",
        "reactive_compact",
    ] {
        assert!(
            events.iter().any(|e| e["event"] == "stage_ran"
                && e["report"]["stage"] == stage
                && e["report"]["changed"] == true),
            "no changed stage_ran for {stage}"
        );
    }
    assert!(events.iter().any(|e| e["event"] == "compact_requested"));
}

#[test]
fn anthropic_without_a_key_exits_2_naming_the_variable() {
    let s = scratch();
    let out = sealed(s.cwd.path(), s.home.path())
        .args(["run", "--provider", "anthropic", "--workspace"])
        .arg(s.ws.path())
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(stderr.starts_with("ctxlab: "), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing should run");
}

#[test]
fn an_unknown_scenario_exits_2_naming_the_scenarios_folder() {
    let s = scratch();
    let out = sealed(s.cwd.path(), s.home.path())
        .args([
            "run",
            "--provider",
            "scripted",
            "--scenario",
            "no-such-scenario",
            "--workspace",
        ])
        .arg(s.ws.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no-such-scenario"), "{stderr}");
    // The folder searched is the repository's scenarios folder, where tour.json lives.
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios");
    assert!(folder.join("tour.json").is_file());
    assert!(
        stderr.contains(&format!("looked in {} and", folder.display())),
        "{stderr}"
    );
}

#[test]
fn a_malformed_dotenv_exits_2_naming_the_file_and_line_but_not_the_text() {
    let s = scratch();
    std::fs::write(
        s.cwd.path().join(".env"),
        "MODEL_ID=x\nOPENAI_API_KEY sk-proj-secret-1\n",
    )
    .unwrap();
    let out = sealed(s.cwd.path(), s.home.path())
        .args([
            "run",
            "--provider",
            "scripted",
            "--pace-ms",
            "0",
            "--workspace",
        ])
        .arg(s.ws.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "ctxlab: .env:2: not a KEY=VALUE setting (or an unclosed quote)\n"
    );
    assert!(out.stdout.is_empty(), "nothing should run");
}

#[test]
fn an_out_of_range_attempt_count_exits_2_naming_the_range() {
    let s = scratch();
    let out = sealed(s.cwd.path(), s.home.path())
        .env("CTXLAB_MAX_ATTEMPTS", "0")
        .args([
            "run",
            "--provider",
            "scripted",
            "--pace-ms",
            "0",
            "--workspace",
        ])
        .arg(s.ws.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "ctxlab: CTXLAB_MAX_ATTEMPTS is \"0\": must be a whole number from 1 to 20\n"
    );
}
