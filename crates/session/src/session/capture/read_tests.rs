//! A capture read from its file: a chunk at a time, as the same session the whole text
//! gives (issue 36: a capture repeats the whole history in every request, so a read that
//! held the file's parsed lines cost about ten times the file).

use super::test_captures::thread_capture;
use crate::session::chunked::read_in_chunks;
use crate::session::parse_session_text;

/// A capture of `calls` calls that starts again from a summary every ten, with a line that
/// is no capture line in the middle.
fn capture_text(calls: u64) -> String {
    let mut lines = thread_capture(calls, 20, 0);
    lines.insert(calls as usize / 2 + 1, "{not a capture line".to_string());
    lines.join("\n") + "\n"
}

#[test]
fn a_capture_is_read_a_chunk_at_a_time_as_the_session_its_whole_text_gives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.jsonl");
    let text = capture_text(200);
    std::fs::write(&path, &text).unwrap();
    let whole = parse_session_text(&text).unwrap();
    assert_eq!(whole.calls.len(), 200);
    assert!(whole.compactions.len() >= 19, "{}", whole.compactions.len());
    assert_eq!(whole.warnings.len(), 1, "{:?}", whole.warnings);
    let longest = text.lines().map(str::len).max().unwrap();
    for chunk in [7, 1000, 64 << 10] {
        let (session, most) = read_in_chunks(&path, chunk).unwrap();
        assert_eq!(
            format!("{session:?}"),
            format!("{whole:?}"),
            "chunks of {chunk}"
        );
        // One read's lines at a time, never the file (it was read whole before).
        assert!(
            most <= chunk + longest + 1,
            "chunks of {chunk}: {most} bytes at once"
        );
        assert!(
            most < text.len() / 4,
            "chunks of {chunk}: {most} of {}",
            text.len()
        );
    }
}

#[test]
fn a_cut_last_line_is_still_the_last_line_when_read_in_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.jsonl");
    let mut text = capture_text(20);
    text.push_str(r#"{"type":"exchange","n":21,"request":{"#);
    std::fs::write(&path, &text).unwrap();
    let whole = parse_session_text(&text).unwrap();
    let (session, _) = read_in_chunks(&path, 1000).unwrap();
    assert_eq!(format!("{session:?}"), format!("{whole:?}"));
    let last = session.warnings.last().unwrap();
    assert_eq!(last.line, text.lines().count());
    assert!(last.message.contains("cut off"), "{}", last.message);
}

/// The requests view's reader hands over one exchange at a time, in file order with its
/// line, from one read's lines at a time (it held every exchange of the file: 737 MB for a
/// 36 MB capture); the header, the foreign line and a cut last line are as the fold reads
/// them.
#[test]
fn each_exchange_hands_over_one_exchange_at_a_time_from_a_chunk_of_lines() {
    use super::read::each_exchange_of;
    use crate::session::chunked::open_in_chunks;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.jsonl");
    let mut text = capture_text(200);
    text.push_str(r#"{"type":"exchange","n":201,"request":{"#);
    std::fs::write(&path, &text).unwrap();
    let longest = text.lines().map(str::len).max().unwrap();
    let mut file = open_in_chunks(&path, 1000).unwrap();
    let mut seen = Vec::new();
    let head = each_exchange_of(&mut || file.next_text(&mut false), &mut |line, e| {
        seen.push((line, e.n))
    })
    .unwrap();
    // Line 1 is the header; the foreign line follows exchange 100.
    let want: Vec<(usize, u64)> = (1..=200u64)
        .map(|n| (n as usize + 1 + usize::from(n > 100), n))
        .collect();
    assert_eq!(seen, want);
    assert_eq!(head.exchanges, 200);
    assert_eq!(head.version.as_deref(), Some("0"));
    assert_eq!(head.skipped, 2);
    let lines: Vec<(usize, bool)> = head
        .warnings
        .iter()
        .map(|w| (w.line, w.message.contains("cut off")))
        .collect();
    assert_eq!(lines, vec![(102, false), (text.lines().count(), true)]);
    let most = file.most_handed();
    assert!(most <= 1000 + longest + 1, "{most} bytes at once");
    assert!(most < text.len() / 4, "{most} of {}", text.len());
}

/// An exchange's line parsed straight into its struct is the line the tagged enum gives,
/// and a line that is not one fails with the same error, for the real agents' captures
/// and lines cut or changed to fail.
#[test]
fn a_line_parsed_the_quick_way_is_the_line_or_the_error_the_general_way_gives() {
    use super::format::CaptureLine;
    use super::read::parse_line;
    let general = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line)
            .and_then(serde_json::from_value::<CaptureLine>)
            .map_err(|e| e.to_string())
    };
    let mut lines: Vec<String> = [
        include_str!("../../../../../tests/fixtures/captures/claude_code_compact.jsonl"),
        include_str!("../../../../../tests/fixtures/captures/codex_compactions.jsonl"),
    ]
    .iter()
    .flat_map(|t| t.lines().map(str::to_string))
    .collect();
    let whole = lines.len();
    let first = lines[1].clone();
    lines.push(first.replace(r#""n":1,"#, r#""n":"one","#));
    lines.push(first.replace(r#""request":"#, r#""request2":"#));
    lines.push(first[..first.len() / 2].to_string());
    lines.push(format!(r#"{first} "#));
    lines.push(r#"{"type":"exchange","n":1}"#.to_string());
    let mut quick_ok = 0;
    for line in &lines {
        let quick = parse_line(line).map_err(|e| e.to_string());
        assert_eq!(quick, general(line), "{line:.200}");
        quick_ok += usize::from(quick.is_ok());
    }
    // Every whole line reads; the changed ones that break a field do not.
    assert!(quick_ok >= whole, "{quick_ok} of {whole}");
    assert!(quick_ok < lines.len());
}
