//! The binary records `ctxlab run` into the data dir (`CTXLAB_DATA_DIR`), the file is a
//! ctxlab session that `ctxlab sessions` lists beside the other tools' and `ctxlab replay`
//! replays with its recorded refusal and compact tool call.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::cli::{ctxlab, json_out, scratch};

/// `ctxlab run` of the tour with the data dir in `data`; the one recording it made.
fn recorded_run(data: &std::path::Path) -> PathBuf {
    let s = scratch();
    let out = s
        .scripted_run()
        .env("CTXLAB_DATA_DIR", data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let files: Vec<PathBuf> = std::fs::read_dir(data.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        stderr.contains(&format!("recording this session to {}", files[0].display())),
        "{stderr}"
    );
    files[0].clone()
}

#[test]
fn ctxlab_run_records_the_session_and_it_lists_and_replays_like_the_others() {
    let data = tempfile::tempdir().unwrap();
    let path = recorded_run(data.path());

    // The file: 0600, a header first, every line one JSON object with a type.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "header");
    assert_eq!(lines[0]["format"], "ctxlab-session");
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines[0]["front_end"], "run");
    assert_eq!(lines[0]["config"]["strategy"], "s08");
    let count = |t: &str| lines.iter().filter(|l| l["type"] == t).count();
    assert!(count("appended") > 70);
    assert_eq!(count("prompt_too_long"), 1);
    assert_eq!(count("compact_tool"), 1);
    assert_eq!(count("turn_done"), 1);
    assert!(count("usage") >= 38);
    let refusal = lines
        .iter()
        .find(|l| l["type"] == "prompt_too_long")
        .unwrap();
    assert_eq!(refusal["call"], 30);
    let summaries: Vec<(u64, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "stage" && l["history"].is_array())
        .map(|l| (l["call"].as_u64().unwrap(), l["stage"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summaries,
        vec![
            (31, "reactive_compact"),
            (32, "compact_history"),
            (34, "compact_history")
        ]
    );

    // `ctxlab sessions` lists it among the default roots, as ctxlab's.
    let listed = json_out(
        ctxlab()
            .arg("sessions")
            .arg("--json")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("HOME", "/nonexistent-ctxlab-home")
            .env("CTXLAB_DATA_DIR", data.path()),
    );
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(rows[0]["tool"], "ctxlab");
    assert_eq!(rows[0]["format"], "ctxlab-session");
    assert_eq!(rows[0]["path"], path.display().to_string());

    // `inspect` reads its calls with their usage and its three summaries.
    let inspected = json_out(ctxlab().arg("inspect").arg("--json").arg(&path));
    assert_eq!(inspected["format"], "ctxlab-session", "{inspected}");

    // `ctxlab replay` under its own strategy: the refused call, then reactive at 31.
    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .arg("replay")
        .arg(&path)
        .arg("--workspace")
        .arg(ws.path())
        .args(["--now", "1700000000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("call 30: refused as too long (recorded: prompt is too long"),
        "{printed}"
    );
    assert!(printed.contains("call 31: reactive_compact"), "{printed}");
    assert!(printed.contains("call 32: compact_history"), "{printed}");
    assert!(printed.contains("call 34: compact_history"), "{printed}");
    assert!(!printed.contains("not applied"), "{printed}");

    // Under s06 it says what it could not follow.
    let ws = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .arg("replay")
        .arg(&path)
        .arg("--workspace")
        .arg(ws.path())
        .args(["--strategy", "s06", "--now", "1700000000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(
            "recorded call 30: the API refused the request as too long: not applied (s06 has no reactive compaction)"
        ),
        "{printed}"
    );
}
