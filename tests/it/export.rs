//! The exported page: one self-contained, well-formed HTML file holding the timeline plot,
//! every stage event with its reason and diff, the summaries and the final history; all
//! text escaped. Checked with the parser-level check in `common::html` (no browser in CI).

use std::path::Path;

use crate::common::html::check;
use crate::common::tour::tour;
use assert_cmd::Command;
use ctxlab::agent::AgentEvent;
use ctxlab::message::{Message, block};
use ctxlab::timeline::html::{escape, page};
use ctxlab::timeline::{Source, Timeline};
use serde_json::{Value, json};

fn tour_page() -> String {
    let t = Timeline::from_events(Source::Live, 0, &tour().events);
    page(&t)
}

#[test]
fn the_tour_page_holds_every_stage_event_of_the_tour() {
    let html = tour_page();
    check(&html).unwrap();
    let mut changed = 0;
    for ev in &tour().events {
        let AgentEvent::StageRan { report, .. } = ev else {
            continue;
        };
        // Every stage that ran is on the page with its reason; a changed one also with
        // its one-line summary and its diff.
        let line = escape(&format!("{}: {}", report.stage.name(), report.reason));
        assert!(html.contains(&line), "missing {line}");
        if report.changed {
            changed += 1;
            assert!(
                html.contains(&escape(&report.summary())),
                "{}",
                report.summary()
            );
        }
    }
    assert_eq!(html.matches("<details class=\"stage\"").count(), changed);
    assert_eq!(html.matches("<table class=\"diff\">").count(), changed);
    // The tour runs s08: all five of its stages are on the page.
    use ctxlab::compact::Stage;
    for stage in [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
        Stage::CompactHistory,
        Stage::ReactiveCompact,
    ] {
        assert!(html.contains(stage.name()), "{}", stage.name());
    }
    assert!(html.contains("<svg"), "the plot");
    assert!(html.contains("<h2 id=\"summaries\">"));
    // Each summary the tour made is on the page (the [Compacted] and [Reactive compact]).
    assert!(html.contains("[Compacted]") && html.contains("[Reactive compact]"));
    assert!(html.contains("<h2 id=\"final\">"));
    assert!(html.contains("unchanged rows"), "unchanged runs are folded");
}

#[test]
fn text_is_escaped_everywhere() {
    let hostile = "<script>alert('x')</script> & \"quotes\"";
    let mut t = Timeline::new(
        Source::Replay {
            name: "<b>x</b>.jsonl".into(),
        },
        50_000,
    );
    t.appended(Message::user_text(hostile));
    t.request_sent(None);
    t.appended(Message::assistant_blocks(vec![
        block::text(hostile),
        block::tool_use("t1", "bash", json!({"command": hostile})),
    ]));
    let html = page(&t);
    check(&html).unwrap();
    assert!(!html.contains("<script>"));
    assert!(!html.contains("<b>x</b>"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
}

fn replay_json(file: &Path) -> Vec<Value> {
    replay_json_with(file, "s08")
}

/// `ctxlab COMMAND` with a fixed clock and summary text, so two runs write the same.
fn fixed(command: &str) -> Command {
    let mut cmd = Command::cargo_bin("ctxlab").unwrap();
    cmd.args([command, "--now", "1700000000", "--summary-text", "facts"]);
    cmd
}

fn replay_json_with(file: &Path, strategy: &str) -> Vec<Value> {
    let ws = tempfile::tempdir().unwrap();
    let out = fixed("replay")
        .args(["--json", "--strategy", strategy])
        .arg(file)
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn ctxlab_export_writes_a_page_with_every_stage_the_replay_finds() {
    let example = crate::common::cli::example();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("every-stage.html");
    fixed("export")
        .arg("--out")
        .arg(&out)
        .arg(&example)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    check(&html).unwrap();
    assert!(html.contains("replay of every-stage.json"));
    let records = replay_json(&example);
    let mut stages = 0;
    for record in &records[..records.len() - 1] {
        for report in record["reports"].as_array().unwrap() {
            stages += 1;
            let line = format!(
                "{}: {}",
                report["stage"].as_str().unwrap(),
                report["reason"].as_str().unwrap()
            );
            assert!(html.contains(&escape(&line)), "missing {line}");
        }
    }
    assert!(stages > 0);
    assert_eq!(html.matches("<details class=\"stage\"").count(), stages);
    // Nothing was written next to the session.
    assert!(!example.parent().unwrap().join(".transcripts").exists());
    assert!(!example.parent().unwrap().join(".task_outputs").exists());
}

#[test]
fn a_session_that_is_not_one_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    let out = dir.path().join("x.html");
    Command::cargo_bin("ctxlab")
        .unwrap()
        .args(["export", "--out"])
        .arg(&out)
        .arg(&bad)
        .assert()
        .code(2);
    assert!(!out.exists());
}

#[test]
fn ctxlab_export_reads_every_session_format_and_strategy_the_replay_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sessions = root.join("tests/fixtures/sessions");
    let every = crate::common::cli::example();
    let cases = [
        (sessions.join("claude_code.jsonl"), "s08"),
        (sessions.join("codex_rollout.jsonl"), "s08"),
        (every.clone(), "s08-latest"),
        (every.clone(), "guarded"),
        (every, "s06"),
    ];
    for (file, strategy) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("page.html");
        fixed("export")
            .args(["--strategy", strategy, "--out"])
            .arg(&out)
            .arg(&file)
            .assert()
            .success();
        let html = std::fs::read_to_string(&out).unwrap();
        check(&html).unwrap_or_else(|e| panic!("{} {strategy}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(html.contains(&format!("replay of {name}")), "{name}");
        // The same stages as `ctxlab replay` with that strategy, each with its reason.
        let records = replay_json_with(&file, strategy);
        let reports: Vec<&Value> = records[..records.len() - 1]
            .iter()
            .flat_map(|r| r["reports"].as_array().unwrap())
            .collect();
        for report in &reports {
            let line = format!(
                "{}: {}",
                report["stage"].as_str().unwrap(),
                report["reason"].as_str().unwrap()
            );
            assert!(
                html.contains(&escape(&line)),
                "{name} {strategy}: missing {line}"
            );
        }
        assert_eq!(
            html.matches("<details class=\"stage\"").count(),
            reports.len(),
            "{name} {strategy}"
        );
    }
}

/// The tour's live run written by the recorder (as `ctxlab run` records it) into `dir`.
fn recorded_tour(dir: &Path) -> std::path::PathBuf {
    let mut recorder =
        ctxlab::record::Recorder::create(dir, ctxlab::session::recorded::format::FrontEnd::Run)
            .unwrap();
    for e in &tour().events {
        recorder.record(e);
    }
    recorder.path().to_path_buf()
}

/// `ctxlab export FILE` (more `args` first), the page it wrote.
fn exported(file: &Path, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    fixed("export")
        .args(args)
        .arg("--out")
        .arg(&out)
        .arg(file)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    check(&html).unwrap();
    html
}

/// The page's table row of call `n`.
fn call_row(html: &str, n: usize) -> &str {
    let start = html
        .find(&format!("<tr id=\"call-{n}\">"))
        .unwrap_or_else(|| panic!("no row for call {n}"));
    let end = start + html[start..].find("</tr>").unwrap();
    &html[start..end]
}

/// The live tour's API input tokens per call (the last count of each), calls counted as
/// the timeline counts them; and its stage events that changed the history.
fn live_usage_and_stages() -> (Vec<(usize, u64)>, Vec<&'static str>) {
    let mut calls = 0;
    let mut summary = false;
    let mut usage: Vec<(usize, u64)> = Vec::new();
    let mut stages = Vec::new();
    for e in &tour().events {
        match e {
            AgentEvent::RequestSent { summary: s, .. } => {
                summary = *s;
                if !s {
                    calls += 1;
                }
            }
            AgentEvent::Usage {
                input_tokens: Some(t),
                ..
            } if !summary => match usage.last_mut() {
                Some(last) if last.0 == calls => last.1 = *t,
                _ => usage.push((calls, *t)),
            },
            AgentEvent::StageRan { report, .. } if report.changed => {
                stages.push(report.stage.name())
            }
            _ => {}
        }
    }
    (usage, stages)
}

fn named_counts(names: &[&str]) -> String {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match out.iter_mut().find(|(k, _)| k == n) {
            Some(e) => e.1 += 1,
            None => out.push((n, 1)),
        }
    }
    let parts: Vec<String> = out.iter().map(|(n, c)| format!("{n} {c}")).collect();
    parts.join(", ")
}

#[test]
fn the_export_of_a_recording_holds_its_recorded_usage_and_stage_events() {
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_tour(dir.path());
    let (usage, stages) = live_usage_and_stages();
    assert!(
        usage.len() > 30 && stages.len() > 20,
        "{usage:?} {stages:?}"
    );
    // Under its own strategy and settings: the replay is the live run, and every call shows
    // the API's input tokens the live run recorded for it.
    let html = exported(&file, &[]);
    assert!(html.contains("API input tokens (live run, recorded)"));
    for (call, tokens) in &usage {
        let cell = format!(
            "<td class=\"n\">{}</td>",
            ctxlab::util::group_digits(*tokens as usize)
        );
        assert!(
            call_row(&html, *call).contains(&cell),
            "call {call}: {tokens}"
        );
    }
    let recorded = format!(
        "recorded {} stage events that changed the history ({})",
        stages.len(),
        named_counts(&stages)
    );
    assert!(html.contains(&escape(&recorded)), "{recorded}");
    assert!(html.contains("fired the same stage events at the same calls"));

    // Under another strategy the replay's stages are its own; the recorded figures stay on
    // the page, said to be the live run's, with what the replay could not follow.
    let html = exported(&file, &["--strategy", "s06"]);
    assert!(html.contains(&escape(&recorded)), "{recorded}");
    assert!(!html.contains("fired the same stage events at the same calls"));
    assert!(html.contains("the API input tokens in the table are the live run's"));
    assert!(html.contains("not applied (s06 has no reactive compaction)"));
    let (call, tokens) = usage[0];
    let cell = format!(
        "<td class=\"n\">{}</td>",
        ctxlab::util::group_digits(tokens as usize)
    );
    assert!(call_row(&html, call).contains(&cell));
}

#[test]
fn the_export_of_a_claude_code_session_holds_its_usage_and_compactions_as_inspect_counts_them() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/claude_code.jsonl");
    let html = exported(&file, &[]);
    // Each call's recorded tokens, as `inspect --calls` reads them, on the replay's call
    // that produced the same answer (here one replayed call per recorded one).
    let out = Command::cargo_bin("ctxlab")
        .unwrap()
        .args(["inspect", "--calls", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let calls: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = calls["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 5);
    for c in calls {
        let n = c["call"].as_u64().unwrap() as usize;
        let tokens = c["recorded_tokens"].as_u64().unwrap() as usize;
        let cell = format!(
            "<td class=\"n\">{}</td>",
            ctxlab::util::group_digits(tokens)
        );
        assert!(call_row(&html, n).contains(&cell), "call {n}: {tokens}");
    }
    // Its three compactions, each line as `inspect` writes it.
    let out = Command::cargo_bin("ctxlab")
        .unwrap()
        .arg("inspect")
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  #"))
        .map(str::trim)
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    for line in lines {
        assert!(html.contains(&escape(line)), "{line}");
    }
    assert!(html.contains("Recorded by claude-code: 5 model calls (5 with the API's usage)"));
    assert!(html.contains("The live run compacted as claude-code does"));
}

#[test]
fn inspect_gives_a_recordings_compactions_their_tokens_from_the_calls_around_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_tour(dir.path());
    let (usage, _) = live_usage_and_stages();
    let recorded: Vec<u64> = usage.iter().map(|(_, t)| *t).collect();
    let inspect = || {
        let mut cmd = Command::cargo_bin("ctxlab").unwrap();
        cmd.arg("inspect");
        cmd
    };
    let out = inspect().arg("--json").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let compactions = doc["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 3, "{doc}");
    for c in compactions {
        // Every call's usage is in the file, so no compaction is left at `?`: the calls on
        // either side give its sizes, marked as theirs.
        let before = c["tokens_before"]["tokens"]
            .as_u64()
            .expect("tokens before");
        let after = c["tokens_after"]["tokens"].as_u64().expect("tokens after");
        assert!(
            recorded.contains(&before) && recorded.contains(&after),
            "{c}"
        );
        assert_eq!(c["tokens_before"]["source"], "last_call_before", "{c}");
        assert_eq!(c["tokens_after"]["source"], "first_call_after", "{c}");
    }
    let text = inspect().arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(!text.contains("? -> ?"), "{text}");
}
