//! The estimate (docs/pipeline.md "Units").

use super::*;

fn repr_of(text: &str) -> String {
    py_repr(&Value::String(text.to_string()))
}

#[test]
fn estimate_quotes_like_python() {
    assert_eq!(repr_of("plain"), "'plain'");
    assert_eq!(repr_of("it's"), "\"it's\"");
    assert_eq!(repr_of("say \"hi\""), "'say \"hi\"'");
    assert_eq!(repr_of("a'b\"c"), "'a\\'b\"c'");
    assert_eq!(repr_of("''\"\""), "'\\'\\'\"\"'");
    assert_eq!(repr_of(""), "''");
}

#[test]
fn estimate_escapes_backslashes_and_control_chars() {
    assert_eq!(repr_of("a\\b"), "'a\\\\b'");
    assert_eq!(repr_of("\n\r\t"), "'\\n\\r\\t'");
    assert_eq!(
        repr_of("\u{0}\u{b}\u{c}\u{1b}\u{1f}\u{7f}"),
        "'\\x00\\x0b\\x0c\\x1b\\x1f\\x7f'"
    );
    // C1 controls and the non-ASCII spaces (Zs other than U+0020) are escaped too.
    assert_eq!(repr_of("\u{85}\u{a0}\u{9f}"), "'\\x85\\xa0\\x9f'");
    assert_eq!(repr_of("\u{2000}\u{3000}"), "'\\u2000\\u3000'");
}

#[test]
fn estimate_counts_printable_non_ascii_as_one_char() {
    assert_eq!(repr_of("é解😀👍🏽"), "'é解😀👍🏽'");
    let h = vec![user("é解😀")];
    // 33 chars around the text, 3 code points (10 bytes) inside.
    assert_eq!(estimate_size(&h), 36);
}

#[test]
fn estimate_escapes_format_separator_private_and_unassigned_points() {
    // Cf, Zl, Zp, Co (BMP), Cn (BMP), Co (plane 15), Cn (U+10FFFF), Cf (plane 14 tag).
    assert_eq!(
        repr_of("\u{200b}\u{feff}\u{2028}\u{2029}\u{e000}\u{0378}"),
        "'\\u200b\\ufeff\\u2028\\u2029\\ue000\\u0378'"
    );
    assert_eq!(
        repr_of("\u{F0000}\u{10FFFF}\u{E0001}"),
        "'\\U000f0000\\U0010ffff\\U000e0001'"
    );
    // Escapes use lowercase hex (U+FDD0 is a noncharacter, Cn); an assigned letter
    // with hex-letter digits is printable.
    assert_eq!(repr_of("\u{FDD0}"), "'\\ufdd0'");
    assert_eq!(repr_of("\u{ABCD}"), "'\u{ABCD}'");
}

#[test]
fn estimate_prints_numbers_and_constants_like_python() {
    let v: Value = serde_json::from_str(
        "[1e-05, 1e+16, 1.0, 1E16, 0.0001, 1e15, 123456789012345678901234567890, -0, -0.0, 2.5e-7, 1e400, true, false, null]",
    )
    .unwrap();
    assert_eq!(
        py_repr(&v),
        "[1e-05, 1e+16, 1.0, 1e+16, 0.0001, 1000000000000000.0, 123456789012345678901234567890, 0, -0.0, 2.5e-07, inf, True, False, None]"
    );
}

#[test]
fn estimate_of_a_history_is_the_python_list_length() {
    // Unknown fields and key order count as written.
    let m = Message::from_value(
        json!({"content": "x", "role": "user", "meta": {"n": 1.0, "ok": null}}),
    )
    .unwrap();
    assert_eq!(
        py_repr(&m.to_value()),
        "{'content': 'x', 'role': 'user', 'meta': {'n': 1.0, 'ok': None}}"
    );
    let h = vec![m.clone(), m];
    // 64 chars each, `[`, `, `, `]`.
    assert_eq!(estimate_size(&h), 64 + 64 + 4);
    assert_eq!(estimate_size(&[]), 2);
}

/// Python 3.11 is the reference for `str()`, `strip()` and `json.dumps`: compare a batch of
/// generated values. A missing python3 fails the test, naming what is missing.
#[test]
fn estimate_and_writers_match_real_python() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let mut rng = fastrand::Rng::with_seed(0x5eed_c0de);
    let pick_char = |rng: &mut fastrand::Rng| -> char {
        loop {
            let cp = match rng.u8(0..10) {
                0..=2 => rng.u32(0x20..0x7f),
                3 => rng.u32(0..0x20),
                4 => rng.u32(0x7f..0x100),
                5 => *rng
                    .choice(&[
                        0x27u32, 0x22, 0x5c, 0x1c, 0x1f, 0x85, 0xa0, 0x2028, 0x3000, 0x200b,
                        0xfeff, 0x1F44D, 0x1F3FD,
                    ])
                    .unwrap(),
                6..=7 => rng.u32(0x100..0x10000),
                _ => rng.u32(0x10000..0x110000),
            };
            if let Some(c) = char::from_u32(cp) {
                return c;
            }
        }
    };
    let mut values = Vec::new();
    for i in 0..600 {
        let len = rng.usize(0..24);
        let s: String = (0..len).map(|_| pick_char(&mut rng)).collect();
        let number_text = match i % 6 {
            0 => format!("{:e}", f64::from_bits(rng.u64(..))),
            1 => format!("{}", f64::from_bits(rng.u64(..))),
            2 => format!("{}", rng.i64(..)),
            3 => format!("{}{}", rng.u64(1..u64::MAX), rng.u64(..)),
            4 => format!("{}e{}", rng.u32(0..1000), rng.i32(-330..330)),
            _ => format!("{}.{}", rng.u32(..), rng.u32(..)),
        };
        let number: Value = match serde_json::from_str(&number_text) {
            Ok(v) => v,
            Err(_) => Value::Null, // NaN bit patterns print as "NaN", not JSON
        };
        let mut message = serde_json::Map::new();
        message.insert("role".into(), json!("user"));
        message.insert(
            "content".into(),
            json!([{"type": "tool_result", "tool_use_id": s, "content": s, "n": number, "flags": [true, false, null]}]),
        );
        // An odd key, unless it collides with the two the message needs.
        if s != "role" && s != "content" {
            message.insert(s.clone(), json!(s));
        }
        values.push(Value::Object(message));
    }
    let mut strings: Vec<String> = values
        .iter()
        .map(|v| v["content"][0]["content"].as_str().unwrap().to_string())
        .collect();
    strings.push(" \u{1c}\u{1d}\u{1e}\u{1f}\u{85}\u{a0}\u{2028}x\u{200b}\u{180e} \u{3000}".into());
    let input = json!({"values": values, "strings": strings}).to_string();

    let script = r#"
import json, sys
data = json.loads(sys.stdin.buffer.read().decode("utf-8"))
out = {
    "reprs": [str(v) for v in data["values"]],
    "total": len(str(data["values"])),
    "dumps": [json.dumps(v) for v in data["values"]],
    "strips": [s.strip() for s in data["strings"]],
    "literals": [json.dumps(s, ensure_ascii=False) for s in data["strings"]],
}
sys.stdout.write(json.dumps(out))
"#;
    let child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    // No skip: without the reference this test would pass having checked nothing.
    let mut child = child.unwrap_or_else(|e| {
        panic!(
            "this cross-check needs python3 on PATH (the reference is Python 3.11) for str(), \
             strip() and json.dumps, and could not start it: {e}"
        )
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    let py: Value = serde_json::from_slice(&out.stdout).unwrap();

    let messages: Vec<Message> = values
        .iter()
        .map(|v| Message::from_value(v.clone()).unwrap())
        .collect();
    for (i, (v, want)) in values
        .iter()
        .zip(py["reprs"].as_array().unwrap())
        .enumerate()
    {
        assert_eq!(&py_repr(v), want.as_str().unwrap(), "repr of value {i}");
        assert_eq!(
            messages[i].estimate_size(),
            want.as_str().unwrap().chars().count(),
            "size of value {i}"
        );
    }
    for (i, (v, want)) in values
        .iter()
        .zip(py["dumps"].as_array().unwrap())
        .enumerate()
    {
        assert_eq!(
            ctxlab::pyrepr::ascii_json(v),
            want.as_str().unwrap(),
            "json.dumps of value {i}"
        );
    }
    assert_eq!(
        estimate_size(&messages) as u64,
        py["total"].as_u64().unwrap()
    );
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(
            ctxlab::pyrepr::py_strip(s),
            py["strips"][i].as_str().unwrap(),
            "strip of string {i}"
        );
        assert_eq!(
            ctxlab::pyrepr::summary_literal(s),
            py["literals"][i].as_str().unwrap(),
            "literal of string {i}"
        );
    }
}
