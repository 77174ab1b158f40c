//! `ctxlab proxy` as a user runs it: a non-loopback address is refused (exit 2) before
//! anything is bound; at start it prints the lines to type for Claude Code and Codex; with
//! `--watch` it prints a line per exchange; and no key value reaches its output or the
//! capture.

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::Duration;

use crate::common::cli::ctxlab;
use crate::proxy_upstream::{Reply, Upstream, capture_lines, client};

#[test]
fn a_non_loopback_address_is_refused_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctxlab()
        .args(["proxy", "--listen", "0.0.0.0:0", "--capture"])
        .arg(dir.path().join("c.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0.0.0.0:0 is not a loopback address"), "{err}");
    assert!(err.contains("--allow-non-loopback"), "{err}");
    assert!(
        !dir.path().join("c.jsonl").exists(),
        "nothing is opened before the check"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_lines_watch_lines_and_no_key_anywhere() {
    const KEY: &str = "sk-ant-api03-SECRETVALUE-abcdef";
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("c.jsonl");
    let upstream = Upstream::start(|_| {
        Reply::full(
            200,
            "application/json",
            br#"{"model":"claude-test","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#,
        )
    })
    .await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--watch",
            "--upstream",
            &upstream.url,
            "--capture",
        ])
        .arg(&capture)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("RUST_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut head = String::new();
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no start lines: {head}"
        );
        head.push_str(&line);
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split(',').next().unwrap().trim().to_string();
        }
    };
    // The rest of the start lines.
    for _ in 0..5 {
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        head.push_str(&line);
    }
    assert!(
        head.contains(&format!("ANTHROPIC_BASE_URL=http://{addr} claude")),
        "{head}"
    );
    assert!(
        head.contains(&format!("codex -c openai_base_url=http://{addr}/v1")),
        "{head}"
    );

    let resp = client()
        .post(format!("http://{addr}/v1/messages?beta=true"))
        .header("x-api-key", KEY)
        .header("authorization", format!("Bearer {KEY}"))
        .header("cookie", format!("session={KEY}"))
        .body(r#"{"model":"claude-test","messages":[{"role":"user","content":"hi"}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let _ = resp.bytes().await.unwrap();
    capture_lines(&capture, 1).await;
    assert_eq!(upstream.requests()[0].header("x-api-key"), Some(KEY));

    // Give the watch line a moment, then stop the proxy as a person would (Ctrl-C).
    tokio::time::sleep(Duration::from_millis(200)).await;
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "Ctrl-C ends the proxy cleanly");
    assert!(stdout.contains("#1 POST /v1/messages -> 200"), "{stdout}");
    assert!(stdout.contains(" · 1 message · "), "{stdout}");
    assert!(
        !stdout.contains("beta=true"),
        "the query is not printed: {stdout}"
    );
    for (what, text) in [
        ("stderr", format!("{head}{rest}")),
        ("stdout", stdout),
        ("capture", std::fs::read_to_string(&capture).unwrap()),
    ] {
        assert!(
            !text.contains("SECRETVALUE"),
            "a key value in the {what}: {text}"
        );
    }
}
