//! Issue 19 §3: an opened session's peak memory is at most three times its file's size.
//! `ctxlab inspect` (the same loader as the workbench's open) runs on a Claude Code and a
//! Codex file of 24 MB, and its peak resident memory is read from /proc while it runs.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The peak resident memory of `ctxlab inspect FILE`, in bytes: the child's own VmHWM,
/// read until it exits. (`wait4`'s ru_maxrss would count this test process too: a child
/// started by vfork or fork keeps the parent's high-water mark through its exec.) The mark
/// only grows and inspect runs on well after the parse, so the last reading is its peak.
fn peak_of_inspect(file: &Path) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .arg("inspect")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            peak = peak.max(kib * 1024);
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return peak;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Lines of tool output, as a JSON string's inside.
fn output(i: usize) -> String {
    let line = format!("src/parser.rs:{i}: let token = lexer.next()?; // 解析器 ✅\\n");
    line.repeat(20 + i % 300)
}

fn claude_session(path: &Path, bytes: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0;
    let mut i = 0;
    while written < bytes {
        let meta = format!(
            r#""sessionId":"s1","cwd":"/home/dev/p","version":"2.0.30","timestamp":"2025-12-01T00:00:{:02}.000Z""#,
            i % 60
        );
        let lines = [
            format!(
                r#"{{"type":"assistant","uuid":"a{i}",{meta},"requestId":"r{i}","message":{{"id":"m{i}","type":"message","role":"assistant","model":"claude-x","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"cargo test"}}}}],"usage":{{"input_tokens":{i},"output_tokens":9}}}}}}"#
            ),
            format!(
                r#"{{"type":"user","uuid":"u{i}",{meta},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{}"}}]}}}}"#,
                output(i)
            ),
        ];
        for l in lines {
            writeln!(f, "{l}").unwrap();
            written += l.len() + 1;
        }
        i += 1;
    }
    f.flush().unwrap();
}

fn codex_session(path: &Path, bytes: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let head = r#"{"timestamp":"2025-12-01T00:00:00.000Z","type":"session_meta","payload":{"id":"c1","cwd":"/home/dev/p"}}"#;
    writeln!(f, "{head}").unwrap();
    let mut written = head.len();
    let mut i = 0;
    while written < bytes {
        let ts = r#""timestamp":"2025-12-01T00:00:01.000Z""#;
        let lines = [
            format!(
                r#"{{{ts},"type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"ls\"]}}","call_id":"c{i}"}}}}"#
            ),
            format!(
                r#"{{{ts},"type":"response_item","payload":{{"type":"function_call_output","call_id":"c{i}","output":"{}"}}}}"#,
                output(i)
            ),
            format!(
                r#"{{{ts},"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{i}}},"last_token_usage":{{"input_tokens":{i},"output_tokens":5}}}}}}}}"#
            ),
        ];
        for l in lines {
            writeln!(f, "{l}").unwrap();
            written += l.len() + 1;
        }
        i += 1;
    }
    f.flush().unwrap();
}

#[test]
fn opening_a_session_peaks_under_three_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    for (name, write) in [
        ("claude.jsonl", claude_session as fn(&Path, usize)),
        ("codex.jsonl", codex_session),
    ] {
        let path = dir.path().join(name);
        write(&path, 24 << 20);
        let size = std::fs::metadata(&path).unwrap().len();
        let peak = peak_of_inspect(&path);
        assert!(
            peak <= 3 * size,
            "{name}: peak {peak} bytes is {:.2}x the file's {size}",
            peak as f64 / size as f64
        );
    }
}
