//! `ctxlab fork --summary STRATEGY` with a provider configured: the strategy's own summary
//! request goes to the configured model (a wiremock server on 127.0.0.1 standing in for the
//! Anthropic API, named by `ANTHROPIC_BASE_URL`) and its answer is the summary the fork
//! holds; `--summary-text` still replaces the call (tests, the harness); a failed call
//! writes no fork.

use std::path::{Path, PathBuf};

use serde_json::Value;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::cli::sealed;
use crate::common::http::anthropic::{KEY, error_body, simple_answer};
use crate::common::http::ok_sse;

const CLAUDE: &str = "tests/fixtures/fork/claude_compacted.jsonl";
const ANSWER: &str = "MODEL-SUMMARY: the scripted steps ran twice; run them again.";

/// `ctxlab fork CLAUDE --before 1 --summary s08 --json` (and `extra`) with the Anthropic
/// provider pointed at `server`, in fresh folders; the output and the home.
async fn fork(server: &MockServer, extra: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(CLAUDE);
    let mut cmd = sealed(&cwd, home.path());
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.uri())
        .env("CTXLAB_MAX_ATTEMPTS", "1")
        .env_remove("CLAUDE_CONFIG_DIR")
        .arg("fork")
        .arg(&src)
        .args(["--before", "1", "--summary", "s08", "--json"])
        .args(extra);
    // The server answers on this runtime's other threads while the command runs.
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    (out, home)
}

fn written(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::read_to_string(PathBuf::from(v["path"].as_str().unwrap())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strategy_fork_asks_the_configured_model_for_its_summary() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .respond_with(ok_sse(simple_answer(ANSWER)))
        .expect(1)
        .mount(&server)
        .await;
    let (out, _home) = fork(&server, &[]).await;
    let text = written(&out);
    assert!(text.contains(ANSWER), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("asked of anthropic"), "{err}");
    // The request is s08's summary request of the history before the compaction: its
    // instructions as the system text, the history in its one user message, no tools.
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert!(body["tools"].as_array().is_none_or(Vec::is_empty), "{body}");
    assert!(
        !body["system"].to_string().trim_matches('"').is_empty(),
        "{body}"
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{body}");
    assert!(
        messages[0].to_string().contains("Run the scripted steps"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summary_text_replaces_the_call_and_a_failed_call_writes_no_fork() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(error_body("invalid_request_error", "no summaries today")),
        )
        .mount(&server)
        .await;
    let (out, _home) = fork(&server, &["--summary-text", "GIVEN-SUMMARY"]).await;
    assert!(written(&out).contains("GIVEN-SUMMARY"));
    assert!(server.received_requests().await.unwrap().is_empty());

    let (out, home) = fork(&server, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the summary call to the configured model failed")
            && err.contains("no summaries today"),
        "{err}"
    );
    assert!(!err.contains(KEY), "the key never shows: {err}");
    assert!(
        !home.path().join(".claude/projects").exists(),
        "no fork written"
    );
}
