//! Item 2: no provider key reaches a child process, the history or a file. The real binary
//! against an Anthropic stub: the model runs `env` and prints a file holding the key; the
//! next request (what the model reads), the JSON events and the transcript the compaction
//! writes carry neither the key nor a secret-named variable, while ordinary variables and
//! an `env_passthrough` one are still there.

use crate::common::scratch::Scratch;
use crate::common::stub_server::{bash_once, start};

const KEY: &str = "sk-ant-stub-key-0123456789abcdef";
const TOKEN: &str = "tok-service-secret-98765";

#[test]
fn bash_gets_no_keys_and_the_key_value_is_redacted_everywhere() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    // A file in the workspace that happens to hold the key (a `.env` the model prints).
    std::fs::write(s.ws().join("leak.txt"), format!("key={KEY}\n")).unwrap();
    s.write_config("env_passthrough = [\"KEEP_ME_TOKEN\"]\nenv_deny = [\"CTXLAB_TEST_DENIED\"]\n");
    let stub = start(bash_once("env | sort; cat leak.txt"));
    let out = s
        .ctxlab_anthropic(&stub.url, KEY)
        .env("MY_SERVICE_TOKEN", TOKEN)
        .env("other_api_key", "lowercase-secret-value")
        .env("KEEP_ME_TOKEN", "kept-on-purpose")
        .env("CTXLAB_TEST_DENIED", "denied-by-config")
        .env("CTXLAB_TEST_VISIBLE", "visible-value")
        .env("CTXLAB_TEST_PADDING", "p".repeat(1500))
        // The env output is well over this: the next call compacts and writes a transcript.
        .args([
            "run",
            "--json",
            "--set",
            "context_limit=1000",
            "--workspace",
        ])
        .arg(s.ws())
        .arg("show me the environment")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = stub.requests.lock().unwrap().clone();
    let after_tool = requests
        .iter()
        .map(|r| r.to_string())
        .find(|r| r.contains("tool_result"))
        .expect("a request carrying the tool result");
    // What the command saw.
    assert!(
        after_tool.contains("CTXLAB_TEST_VISIBLE=visible-value"),
        "{after_tool}"
    );
    assert!(
        after_tool.contains("KEEP_ME_TOKEN=kept-on-purpose"),
        "{after_tool}"
    );
    for gone in [
        "ANTHROPIC_API_KEY=",
        "MY_SERVICE_TOKEN",
        "other_api_key",
        "CTXLAB_TEST_DENIED",
    ] {
        assert!(
            !after_tool.contains(gone),
            "{gone} reached bash: {after_tool}"
        );
    }
    // The file's copy of the key is redacted, not sent.
    assert!(
        after_tool.contains("key=[redacted ANTHROPIC_API_KEY]"),
        "{after_tool}"
    );
    let transcripts: Vec<_> = std::fs::read_dir(s.ws().join(".transcripts"))
        .expect("the compaction wrote a transcript")
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(!transcripts.is_empty());
    for (what, text) in requests
        .iter()
        .map(|r| ("a request", r.to_string()))
        .chain(std::iter::once(("stdout", stdout.to_string())))
        .chain(transcripts.iter().map(|t| ("a transcript", t.clone())))
    {
        for secret in [KEY, TOKEN, "lowercase-secret-value", "denied-by-config"] {
            assert!(!text.contains(secret), "{what} holds {secret}");
        }
    }
}
