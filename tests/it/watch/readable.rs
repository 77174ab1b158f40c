//! `ctxlab watch FILE` for people: a compaction written while it follows rings the
//! terminal bell (the byte itself, not its escaped form), and a message carrying an escape
//! sequence is printed harmless.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const USER: &str = r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"a","sessionId":"s","cwd":"/x","timestamp":"2026-01-01T00:00:00Z"}"#;
const HOSTILE: &str = r#"{"type":"user","message":{"role":"user","content":"red \u001b[31mtext\u001b[0m"},"uuid":"c","parentUuid":"b","sessionId":"s","cwd":"/x","timestamp":"2026-01-01T00:02:00Z"}"#;
const BOUNDARY: &str = r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":1000},"uuid":"b","parentUuid":"a","sessionId":"s","timestamp":"2026-01-01T00:01:00Z"}"#;

#[test]
fn a_compaction_rings_the_bell_and_file_text_is_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, format!("{USER}\n")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(["watch", "--poll-ms", "50"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&got);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let shows = |needle: &str| String::from_utf8_lossy(&got.lock().unwrap()).contains(needle);
    let deadline = Instant::now() + Duration::from_secs(20);
    // Once the follower says it is at the file's end, write as an agent would.
    while !shows("from now on") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(format!("{BOUNDARY}\n{HOSTILE}\n").as_bytes())
        .unwrap();
    drop(f);
    // The hostile message is the last line written: once it shows, everything has.
    while !shows("text") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let out = got.lock().unwrap().clone();
    let text = String::from_utf8_lossy(&out);
    assert_eq!(
        out.iter().filter(|&&b| b == 0x07).count(),
        1,
        "one bell for one compaction:\n{text}"
    );
    assert!(
        !text.contains("\\a"),
        "the bell is not printed escaped:\n{text}"
    );
    assert!(text.contains("COMPACTION"), "{text}");
    assert!(
        !out.contains(&0x1b),
        "no raw escape byte from the file:\n{text}"
    );
    assert!(text.contains("red \\e[31mtext"), "{text}");
}
