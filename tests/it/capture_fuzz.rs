//! The capture reader on random input (issue 39, the fuzzing asked for, bounded to
//! seconds): captures made of whole exchange lines, lines cut anywhere, random bytes and
//! blank lines, in any order. Reading never panics, every whole exchange is read, and a
//! line that is not one is skipped (with a warning), never the file.

use proptest::prelude::*;
use serde_json::json;

fn exchange(n: u64, text: &str) -> String {
    json!({"type": "exchange", "n": n, "started": "2026-12-01T10:00:00.000Z",
        "method": "POST", "path": "/v1/messages", "api": "anthropic_messages", "upstream": "u",
        "request": {"headers": [], "bytes": 1, "sha256": "0",
            "body": {"model": "m", "messages": [{"role": "user", "content": text}]}},
        "response": {"status": 200, "text": text, "usage": {"input_tokens": n, "output_tokens": 1}},
        "timing": {}})
    .to_string()
}

#[derive(Debug, Clone)]
enum Line {
    Whole(String),
    Cut(String, usize),
    Noise(Vec<u8>),
    Blank,
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => "\\PC{0,30}".prop_map(Line::Whole),
        1 => ("\\PC{0,30}", 0usize..400).prop_map(|(t, at)| Line::Cut(t, at)),
        1 => proptest::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..60)
            .prop_map(Line::Noise),
        1 => Just(Line::Blank),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_capture_reads_its_whole_exchanges_and_skips_the_rest(
        lines in proptest::collection::vec(line(), 0..20),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let mut bytes = br#"{"type":"header","format":"ctxlab-capture","version":1,"ctxlab":"0","started":"2026-12-01T00:00:00Z","listen":"127.0.0.1:1"}"#.to_vec();
        bytes.push(b'\n');
        let mut whole = 0;
        for (i, l) in lines.iter().enumerate() {
            match l {
                Line::Whole(t) => {
                    bytes.extend_from_slice(exchange(i as u64 + 1, t).as_bytes());
                    whole += 1;
                }
                Line::Cut(t, at) => {
                    let e = exchange(i as u64 + 1, t);
                    let at = (*at).min(e.len().saturating_sub(1));
                    bytes.extend_from_slice(&e.as_bytes()[..at]);
                }
                Line::Noise(b) => bytes.extend_from_slice(b),
                Line::Blank => {}
            }
            bytes.push(b'\n');
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut handed = 0;
        let head = ctxlab::session::each_capture_exchange(&path, &mut |_, _| handed += 1).unwrap();
        // Noise can happen to be an exchange only by being one; it never is here.
        prop_assert_eq!(handed, whole);
        prop_assert_eq!(head.exchanges, whole);
        let session = ctxlab::session::load_session(&path).unwrap();
        prop_assert_eq!(session.format, ctxlab::session::SessionFormat::ProxyCapture);
    }
}
