//! `ctxlab run`, the real binary: the scripted tour end to end as readable lines and as
//! JSON lines, and the clear errors for a missing key and for bad configuration. Each run
//! happens in a scratch directory (no `.env` unless the test writes one) with HOME and
//! XDG_CONFIG_HOME pointed at an empty folder (no config.toml), and without provider
//! variables from the calling environment.
use crate::common::cli::{scratch, sealed};
use serde_json::Value;

#[test]
fn run_plays_the_tour_through_every_stage() {
    let s = scratch();
    let out = s.scripted_run().output().unwrap();
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
fn an_unknown_scenario_exits_2_naming_the_built_in_scenarios() {
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
    // Scenarios are compiled in: the message lists them, and names no folder of the build
    // tree (an installed binary has none).
    assert!(stderr.contains("tour"), "{stderr}");
    assert!(
        !stderr.contains(env!("CARGO_MANIFEST_DIR")),
        "the build tree is named: {stderr}"
    );
}

/// Every stage says why, in text and in JSON; compact_history says why it did not run; the
/// API's "prompt is too long" is an event of its own, before the reactive compaction.
#[test]
fn run_says_why_each_stage_acted_and_when_the_api_refused() {
    let s = scratch();
    let run = |json: bool| {
        let mut cmd = sealed(s.cwd.path(), s.home.path());
        cmd.args(["run", "--provider", "scripted", "--pace-ms", "0"]);
        if json {
            cmd.arg("--json");
        }
        let ws = tempfile::tempdir().unwrap();
        let out = cmd.arg("--workspace").arg(ws.path()).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(false);
    let stage_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("[stage] ")).collect();
    assert!(stage_lines.len() > 10, "{text}");
    for l in &stage_lines {
        assert!(l.contains(" · why: "), "no reason: {l}");
    }
    assert!(
        stage_lines
            .iter()
            .any(|l| l.starts_with("[stage] snip_compact")
                && l.contains("messages > 50 (head 3, kept ")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("[api] prompt is too long:")),
        "{text}"
    );

    let events: Vec<Value> = run(true)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reports: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "stage_ran")
        .map(|e| &e["report"])
        .collect();
    for r in &reports {
        assert!(
            r["reason"].as_str().is_some_and(|s| !s.is_empty()),
            "a report without its reason: {r}"
        );
    }
    let within = reports
        .iter()
        .find(|r| r["stage"] == "compact_history" && r["changed"] == false)
        .expect("compact_history reports when it does not run");
    assert!(
        within["reason"].as_str().unwrap().ends_with(" <= 50,000"),
        "{within}"
    );
    let refusal = events
        .iter()
        .position(|e| e["event"] == "prompt_too_long")
        .expect("a prompt_too_long event");
    assert!(
        events[refusal]["message"]
            .as_str()
            .unwrap()
            .starts_with("prompt is too long")
    );
    let reactive = events
        .iter()
        .position(|e| e["event"] == "stage_ran" && e["report"]["stage"] == "reactive_compact")
        .unwrap();
    assert!(refusal < reactive, "the refusal comes first");
}

#[test]
fn a_malformed_dotenv_exits_2_naming_the_file_and_line_but_not_the_text() {
    let s = scratch();
    std::fs::write(
        s.cwd.path().join(".env"),
        "MODEL_ID=x\nOPENAI_API_KEY sk-proj-secret-1\n",
    )
    .unwrap();
    let out = s.scripted_run().output().unwrap();
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
    let out = s
        .scripted_run()
        .env("CTXLAB_MAX_ATTEMPTS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "ctxlab: CTXLAB_MAX_ATTEMPTS is \"0\": must be a whole number from 1 to 20\n"
    );
}

/// The first call of a run sends one message, and the line says so in the singular.
#[test]
fn a_one_message_request_is_counted_in_the_singular() {
    let s = scratch();
    let out = s.scripted_run().arg("hello there").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let first = stdout
        .lines()
        .find(|l| l.starts_with("[model call] "))
        .unwrap();
    assert!(first.starts_with("[model call] 1 message, "), "{first}");
    // (`9 -> 1 messages` in a stage's summary is a range, not a count.)
    for count in ["] 1 messages", "(1 messages"] {
        assert!(!stdout.contains(count), "{stdout}");
    }
}
