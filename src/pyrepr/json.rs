//! The two JSON writers of spec section 2, byte for byte as Python's `json.dumps` writes them.
//!
//! Transcripts and the summarizer input use `ensure_ascii=True` ("lesson JSON"); the summary
//! inside a `[Compacted]` message uses `ensure_ascii=False` ("summary literal"). Both keep
//! key order and Python's default separators. serde_json's own writer differs (no spaces,
//! raw non-ASCII), so it must not be used for these texts. Also here: Python's `str.strip()`.

use serde_json::{Map, Value};

use super::str_repr::{py_number, skip_plain};

/// `\\u` and four lowercase hex digits.
fn push_u_escape(unit: u16, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xf)] as char);
    }
}

fn write_json_str(s: &str, ascii_only: bool, out: &mut String) {
    out.push('"');
    // Runs that need no escape are found eight bytes at a time and copied in one go;
    // transcripts are mostly that.
    let (mut i, mut run_start) = (0, 0);
    loop {
        let (stop, next) = skip_plain(s, i, b'"');
        i = stop;
        let Some(c) = next else {
            break;
        };
        // The summary literal keeps DEL and everything beyond ASCII as it is.
        if !ascii_only && (c as u32) >= 0x7f {
            i += c.len_utf8();
            continue;
        }
        out.push_str(&s[run_start..i]);
        i += c.len_utf8();
        run_start = i;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    push_u_escape(*u, out);
                }
            }
        }
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

fn write_json_number(n: &serde_json::Number, out: &mut String) {
    let py = py_number(n);
    // json.dumps spells the non-finite floats its own way.
    out.push_str(match py.as_str() {
        "inf" => "Infinity",
        "-inf" => "-Infinity",
        "nan" => "NaN",
        other => other,
    });
}

fn write_json_value(v: &Value, ascii_only: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_json_number(n, out),
        Value::String(s) => write_json_str(s, ascii_only, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_value(item, ascii_only, out);
            }
            out.push(']');
        }
        Value::Object(map) => write_json_map(map, ascii_only, out),
    }
}

fn write_json_map(map: &Map<String, Value>, ascii_only: bool, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_json_str(k, ascii_only, out);
        out.push_str(": ");
        write_json_value(v, ascii_only, out);
    }
    out.push('}');
}

/// Lesson JSON (`json.dumps(v)`) of any value.
pub fn lesson_json(v: &Value) -> String {
    let mut out = String::new();
    write_json_value(v, true, &mut out);
    out
}

/// Lesson JSON of one object: a transcript line without its newline.
pub fn lesson_json_map(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_json_map(map, true, &mut out);
    out
}

/// `lesson_json_map` appended to `out`.
pub fn write_lesson_json_map(map: &Map<String, Value>, out: &mut String) {
    write_json_map(map, true, out);
}

/// The first `max_chars` chars of the lesson JSON of a list of objects, without writing
/// the rest. Lesson JSON is pure ASCII, so bytes and chars coincide and the cut is a byte
/// cut.
pub fn lesson_json_maps_prefix<'a>(
    maps: impl IntoIterator<Item = &'a Map<String, Value>>,
    max_chars: usize,
) -> String {
    let mut out = String::from("[");
    for (i, m) in maps.into_iter().enumerate() {
        if out.len() >= max_chars {
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        write_json_map(m, true, &mut out);
    }
    if out.len() < max_chars {
        out.push(']');
    }
    out.truncate(max_chars);
    out
}

/// The summary literal (`json.dumps(s, ensure_ascii=False)`).
pub fn summary_literal(s: &str) -> String {
    let mut out = String::new();
    write_json_str(s, false, &mut out);
    out
}

/// Python's `str.strip()` with no argument.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lesson_json_escapes_everything_outside_printable_ascii() {
        let v = json!({"a/b": "q\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}é解😀"});
        assert_eq!(
            lesson_json(&v),
            r#"{"a/b": "q\"\\\n\r\t\b\f\u0001\u007f\u00e9\u89e3\ud83d\ude00"}"#
        );
    }

    #[test]
    fn summary_literal_keeps_non_ascii_and_del() {
        assert_eq!(
            summary_literal("a\"b\\c\nd\u{1}\u{7f}é😀"),
            "\"a\\\"b\\\\c\\nd\\u0001\u{7f}é😀\""
        );
    }

    #[test]
    fn separators_are_pythons() {
        assert_eq!(
            lesson_json(&json!([1, {"k": [true, null]}])),
            r#"[1, {"k": [true, null]}]"#
        );
        let f: Value = serde_json::from_str("[1e-5, 2.0]").unwrap();
        assert_eq!(lesson_json(&f), "[1e-05, 2.0]");
    }

    #[test]
    fn strip_matches_python() {
        assert_eq!(
            py_strip("\u{1c}\u{1f} \t\n x y \u{3000}\u{85}\u{a0}"),
            "x y"
        );
        assert_eq!(py_strip("\u{200b}x"), "\u{200b}x");
    }
}
