//! The chunked read: the same session as a whole read, whatever the chunk size, with long
//! lines skipped and never the whole file held.

use super::*;
use std::cell::Cell;

fn opened(path: &Path, chunk: usize) -> ChunkedFile<'static> {
    let mut f = ChunkedFile::open(path, &|_| {}, &|| false).unwrap();
    f.chunk = chunk;
    f
}

/// A Claude Code file: a prompt, then per call a text block, a tool_use and its
/// result (a long output), with a malformed line and a line type to skip in between.
fn claude_text(calls: usize) -> String {
    let mut out = String::new();
    out.push_str(r#"{"type":"user","sessionId":"s1","uuid":"u0","cwd":"/p","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"Fix it"}}"#);
    out.push('\n');
    for i in 0..calls {
        let body = "output line é \\u00e9\\n".repeat(i % 7 * 40 + 1);
        out.push_str(&format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"a{i}","requestId":"r{i}","message":{{"id":"m{i}","role":"assistant","model":"claude-x","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls {i}"}}}}],"usage":{{"input_tokens":{i},"output_tokens":3}}}}}}"#
        ));
        out.push('\n');
        if i % 5 == 2 {
            out.push_str("{not json\n\n");
            out.push_str(r#"{"type":"progress","data":{}}"#);
            out.push('\n');
        }
        out.push_str(&format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"r{i}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{body}"}}]}},"toolUseResult":{{"stdout":"{body}"}}}}"#
        ));
        out.push('\n');
    }
    out
}

fn codex_text(calls: usize) -> String {
    let mut out = String::new();
    out.push_str(r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/p"}}"#);
    out.push('\n');
    out.push_str(r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]}}"#);
    out.push('\n');
    for i in 0..calls {
        let body = "x".repeat(i % 9 * 300 + 1);
        out.push_str(&format!(
            r#"{{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"ls\"]}}","call_id":"c{i}"}}}}"#
        ));
        out.push('\n');
        if i % 4 == 1 {
            out.push_str("not json at all\n");
        }
        out.push_str(&format!(
            r#"{{"timestamp":"2025-01-01T00:00:03Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{i}","output":"{body}"}}}}"#
        ));
        out.push('\n');
    }
    out
}

/// Everything a reader produced, in one comparable text.
fn shape(s: &Session) -> String {
    format!("{s:?}")
}

#[test]
fn a_file_read_in_small_chunks_is_the_session_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("c.jsonl", claude_text(300)), ("x.jsonl", codex_text(300))] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let whole = super::super::parse_session_text(&text).unwrap();
        assert!(whole.messages.len() > 300, "{name}");
        assert!(
            !whole.warnings.is_empty(),
            "{name}: malformed lines are warned"
        );
        // Chunks far smaller than a line, about a line, and many lines: line numbers,
        // warnings and messages are the same as the whole file's.
        for chunk in [7, 1000, 64 << 10] {
            let (session, given, lossy) =
                read_chunked(&mut opened(&path, chunk), Detail::Full).unwrap();
            assert_eq!(shape(&session), shape(&whole), "{name}, chunks of {chunk}");
            assert!(given.is_none() && lossy.is_none());
        }
    }
}

/// A line over the cap is skipped with a warning, whatever the format (Claude Code, a
/// capture) and whatever the chunk size: the session
/// is the file's with that line blank. Issue 39, item 2: the whole file was refused.
#[test]
fn a_line_over_the_cap_is_skipped_and_the_rest_read() {
    let dir = tempfile::tempdir().unwrap();
    let claude: Vec<String> = claude_text(30).lines().map(str::to_string).collect();
    let longest = claude.iter().map(String::len).max().unwrap();
    let max_line = longest.max(6_000) + 100;
    let long_claude = format!(
        r#"{{"type":"user","sessionId":"s1","uuid":"big","message":{{"role":"user","content":"{}"}}}}"#,
        "y".repeat(max_line)
    );
    let capture = [
        r#"{"type":"header","format":"ctxlab-capture","version":1,"ctxlab":"0","started":"2026-12-01T00:00:00Z","listen":"127.0.0.1:1"}"#.to_string(),
        r#"{"type":"exchange","n":1,"started":"2026-12-01T00:00:01.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{"headers":[],"bytes":1,"sha256":"0","body":{"model":"m","messages":[{"role":"user","content":"hi"}]}},"response":{"status":200,"text":"ok"},"timing":{}}"#.to_string(),
        format!(
            r#"{{"type":"exchange","n":2,"started":"2026-12-01T00:00:02.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{{"headers":[],"bytes":1,"sha256":"0","body":{{"model":"m","messages":[{{"role":"user","content":"{}"}}]}}}},"response":{{"status":200}},"timing":{{}}}}"#,
            "z".repeat(max_line)
        ),
        r#"{"type":"exchange","n":3,"started":"2026-12-01T00:00:03.000Z","method":"POST","path":"/v1/messages","api":"anthropic_messages","upstream":"u","request":{"headers":[],"bytes":1,"sha256":"0","body":{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}},"response":{"status":200,"text":"done"},"timing":{}}"#.to_string(),
    ]
    .join("\n")
        + "\n";
    let mut with_long = claude.clone();
    with_long.insert(7, long_claude);
    let claude = with_long.join("\n") + "\n";
    for (name, text, long_line) in [("c.jsonl", claude, 8), ("cap.jsonl", capture, 3)] {
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let mut blanked: Vec<String> = text.lines().map(str::to_string).collect();
        blanked[long_line - 1] = String::new();
        let whole = super::super::parse_session_text(&(blanked.join("\n") + "\n")).unwrap();
        for chunk in [7, 1000, 64 << 10] {
            let mut f = opened(&path, chunk);
            f.max_line = max_line;
            let (mut session, _, _) = read_chunked(&mut f, Detail::Full).unwrap();
            let at = session
                .warnings
                .iter()
                .position(|w| w.message.contains("over the cap"))
                .unwrap_or_else(|| panic!("{name}: {:?}", session.warnings));
            let warning = session.warnings.remove(at);
            assert_eq!(warning.line, long_line, "{name}, chunks of {chunk}");
            assert!(
                warning
                    .message
                    .contains(&format!("over the cap of {max_line} bytes")),
                "{}",
                warning.message
            );
            assert_eq!(shape(&session), shape(&whole), "{name}, chunks of {chunk}");
        }
    }
}

/// A numbers-only read (`inspect`, the listings) gives the summary a full read gives,
/// for the generated files and the real agents' fixtures, while the messages it holds
/// carry no text (issue 36: memory bounded by the numbers, not by the file).
#[test]
fn a_numbers_only_read_sums_up_as_the_full_read_without_the_text() {
    use crate::session::summary::SessionSummary;
    let dir = tempfile::tempdir().unwrap();
    let fixtures = [
        include_str!("../../../../tests/fixtures/sessions/claude_code_2_1_332.jsonl"),
        include_str!("../../../../tests/fixtures/sessions/claude_code.jsonl"),
        include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl"),
        include_str!("../../../../tests/fixtures/sessions/codex_rollout.jsonl"),
    ];
    let texts = [claude_text(300), codex_text(300)];
    for (i, text) in texts.iter().map(String::as_str).chain(fixtures).enumerate() {
        let path = dir.path().join(format!("{i}.jsonl"));
        std::fs::write(&path, text).unwrap();
        let (full, _, _) = read_chunked(&mut opened(&path, 1000), Detail::Full).unwrap();
        let (lean, _, _) = read_chunked(&mut opened(&path, 1000), Detail::Numbers).unwrap();
        assert_eq!(
            SessionSummary::of(&lean),
            SessionSummary::of(&full),
            "file {i}"
        );
        assert_eq!(lean.messages.len(), full.messages.len());
        let text_of =
            |s: &Session| -> usize { s.messages.iter().map(|m| m.joined_text().len()).sum() };
        assert!(text_of(&full) > 0, "file {i}");
        assert_eq!(text_of(&lean), 0, "file {i}");
    }
}

#[test]
fn chunks_are_whole_lines_numbered_from_where_they_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let text = claude_text(50);
    std::fs::write(&path, &text).unwrap();
    let mut f = opened(&path, 500);
    let mut joined = Vec::new();
    let mut largest = 0;
    while let Some((first, bytes)) = f.next_lines().unwrap() {
        assert_eq!(first, joined.iter().filter(|&&b| b == b'\n').count() + 1);
        assert!(bytes.ends_with(b"\n"));
        largest = largest.max(bytes.len());
        joined.extend_from_slice(&bytes);
    }
    assert_eq!(joined, text.as_bytes());
    // Never the whole file at once: a chunk is about the read size plus one line.
    let longest_line = text.lines().map(str::len).max().unwrap();
    assert!(largest <= 500 + longest_line + 1, "{largest}");
    assert!(largest < text.len() / 4);
}

#[test]
fn cancel_progress_bad_utf8_and_other_formats() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let mut bytes = claude_text(40).into_bytes();
    // An invalid byte inside a tool result's text, far from the start.
    let at = bytes.len() - 40;
    bytes[at] = 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let seen = Cell::new(0);
    let progress = |n| seen.set(n);
    let mut f = ChunkedFile::open(&path, &progress, &|| false).unwrap();
    f.chunk = 256;
    let (session, _, lossy) = read_chunked(&mut f, Detail::Full).unwrap();
    assert!(lossy.is_some(), "invalid UTF-8 is replaced with a warning");
    assert_eq!(seen.get(), bytes.len() as u64);
    assert!(session.messages.len() > 40);
    let asked = Cell::new(0);
    let cancel = || {
        asked.set(asked.get() + 1);
        asked.get() > 3
    };
    let mut f = ChunkedFile::open(&path, &|_| {}, &cancel).unwrap();
    f.chunk = 256;
    assert!(matches!(
        read_chunked(&mut f, Detail::Full),
        Err(SessionError::Cancelled)
    ));
    // An array, an input object and an empty file are read whole, as before.
    for (text, want) in [
        ("[{\"role\":\"user\",\"content\":\"hi\"}]", Some(1)),
        (
            "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\n\"active_request\":\"hi\"}",
            Some(1),
        ),
        ("", None),
        ("  \n\n", None),
    ] {
        std::fs::write(&path, text).unwrap();
        match read_chunked(&mut opened(&path, 3), Detail::Full) {
            Ok((s, _, _)) => assert_eq!(Some(s.messages.len()), want, "{text}"),
            Err(e) => assert!(want.is_none() && matches!(e, SessionError::Empty), "{e}"),
        }
    }
}
