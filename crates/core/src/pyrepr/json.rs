//! The two JSON writers (docs/pipeline.md, "The two JSON writers"), byte for byte as Python's
//! `json.dumps` writes them.
//!
//! Transcripts and the summarizer input use `ensure_ascii=True` ("ASCII JSON"); the summary
//! inside a `[Compacted]` message uses `ensure_ascii=False` ("summary literal"), and so does
//! the s08-latest strategy for its size unit, transcripts and summarizer input ("unicode
//! JSON"). All keep key order and Python's default separators. serde_json's own writer
//! differs (no spaces, raw non-ASCII), so it must not be used for these texts. One writer
//! over a sink serves both the text and the count, so they cannot disagree. Also here:
//! Python's `str.strip()`.

use serde_json::{Map, Value};

use super::counts::json_str_len;
use super::str_repr::{COUNT_MIN_BYTES, Counter, Sink, plain_end, py_number};

/// `\uXXXX` with lowercase hex, without going through `format!` or checking a buffer as
/// UTF-8 (escapes are frequent in non-ASCII tool output).
fn push_u_escape<S: Sink>(unit: u16, out: &mut S) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_plain("\\u", 2);
    for shift in [12, 8, 4, 0] {
        out.push_char(char::from(HEX[usize::from((unit >> shift) & 0xf)]));
    }
}

fn write_json_str<S: Sink>(s: &str, ascii_only: bool, out: &mut S) {
    if s.len() >= COUNT_MIN_BYTES
        && let Some(n) = out.count_only()
    {
        *n += json_str_len(s, ascii_only);
        return;
    }
    out.push_char('"');
    // Runs that need no escape are found eight bytes at a time and copied (or counted) in
    // one go; transcripts are mostly that. Escapes are told apart by their first byte.
    let bytes = s.as_bytes();
    let (mut i, mut run_start, mut run_chars) = (0, 0, 0);
    loop {
        let stop = plain_end(bytes, i, b'"');
        run_chars += stop - i;
        i = stop;
        let Some(&b) = bytes.get(i) else {
            break;
        };
        // `ensure_ascii=False` keeps DEL and everything beyond ASCII as it is: a char is
        // counted at its first byte.
        if !ascii_only && b >= 0x7f {
            run_chars += usize::from(!(0x80..0xc0).contains(&b));
            i += 1;
            continue;
        }
        out.push_plain(&s[run_start..i], run_chars);
        i += 1;
        match b {
            b'"' => out.push_plain("\\\"", 2),
            b'\\' => out.push_plain("\\\\", 2),
            b'\n' => out.push_plain("\\n", 2),
            b'\r' => out.push_plain("\\r", 2),
            b'\t' => out.push_plain("\\t", 2),
            0x08 => out.push_plain("\\b", 2),
            0x0c => out.push_plain("\\f", 2),
            0x80.. => {
                let c = s[i - 1..]
                    .chars()
                    .next()
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    push_u_escape(*u, out);
                }
                i += c.len_utf8() - 1;
            }
            _ => push_u_escape(u16::from(b), out),
        }
        run_start = i;
        run_chars = 0;
    }
    out.push_plain(&s[run_start..], run_chars);
    out.push_char('"');
}

fn write_json_number<S: Sink>(n: &serde_json::Number, out: &mut S) {
    let py = py_number(n);
    // json.dumps spells the non-finite floats its own way.
    let text = match py.as_str() {
        "inf" => "Infinity",
        "-inf" => "-Infinity",
        "nan" => "NaN",
        other => other,
    };
    out.push_plain(text, text.len());
}

fn write_json_value<S: Sink>(v: &Value, ascii_only: bool, out: &mut S) {
    match v {
        Value::Null => out.push_plain("null", 4),
        Value::Bool(b) => {
            let t = if *b { "true" } else { "false" };
            out.push_plain(t, t.len());
        }
        Value::Number(n) => write_json_number(n, out),
        Value::String(s) => write_json_str(s, ascii_only, out),
        Value::Array(items) => {
            out.push_char('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_plain(", ", 2);
                }
                write_json_value(item, ascii_only, out);
            }
            out.push_char(']');
        }
        Value::Object(map) => write_json_map(map, ascii_only, out),
    }
}

fn write_json_map<S: Sink>(map: &Map<String, Value>, ascii_only: bool, out: &mut S) {
    out.push_char('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_plain(", ", 2);
        }
        write_json_str(k, ascii_only, out);
        out.push_plain(": ", 2);
        write_json_value(v, ascii_only, out);
    }
    out.push_char('}');
}

/// ASCII JSON, Python's `json.dumps(v)` with its default `ensure_ascii=True`, of any value.
pub fn ascii_json(v: &Value) -> String {
    let mut out = String::new();
    write_json_value(v, true, &mut out);
    out
}

/// ASCII JSON of one object: a transcript line without its newline.
pub fn ascii_json_map(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_json_map(map, true, &mut out);
    out
}

/// `ascii_json_map` appended to `out`.
pub fn write_ascii_json_map(map: &Map<String, Value>, out: &mut String) {
    write_json_map(map, true, out);
}

/// The first `max_chars` chars of the ASCII JSON of a list of objects, without writing
/// the rest. ASCII JSON is pure ASCII, so bytes and chars coincide and the cut is a byte
/// cut.
pub fn ascii_json_maps_prefix<'a>(
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

/// JSON with non-ASCII kept (`json.dumps(v, ensure_ascii=False)`, default separators) of
/// one object: the s08-latest transcript line and size unit.
pub fn unicode_json_map(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_json_map(map, false, &mut out);
    out
}

/// The length in code points of `unicode_json_map`, without building it.
pub fn unicode_json_map_len(map: &Map<String, Value>) -> usize {
    let mut c = Counter(0);
    write_json_map(map, false, &mut c);
    c.0
}

/// JSON with non-ASCII kept of a list of objects: the s08-latest summarizer input.
pub fn unicode_json_maps<'a>(maps: impl IntoIterator<Item = &'a Map<String, Value>>) -> String {
    let mut out = String::from("[");
    for (i, m) in maps.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_json_map(m, false, &mut out);
    }
    out.push(']');
    out
}

/// JSON with non-ASCII kept of any value, e.g. a tool input shown in a placeholder.
pub fn unicode_json(v: &Value) -> String {
    let mut out = String::new();
    write_json_value(v, false, &mut out);
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
    fn ascii_json_escapes_everything_outside_printable_ascii() {
        let v = json!({"a/b": "q\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}é解😀"});
        assert_eq!(
            ascii_json(&v),
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
            ascii_json(&json!([1, {"k": [true, null]}])),
            r#"[1, {"k": [true, null]}]"#
        );
        let f: Value = serde_json::from_str("[1e-5, 2.0]").unwrap();
        assert_eq!(ascii_json(&f), "[1e-05, 2.0]");
    }

    #[test]
    fn unicode_json_keeps_non_ascii_and_counts_what_it_writes() {
        let v = json!({"k": "q\"\\\n\u{1}\u{7f}é解😀", "n": [1.5, null, true]});
        let Value::Object(map) = &v else {
            unreachable!()
        };
        let text = unicode_json_map(map);
        assert_eq!(
            text,
            "{\"k\": \"q\\\"\\\\\\n\\u0001\u{7f}é解😀\", \"n\": [1.5, null, true]}"
        );
        assert_eq!(unicode_json_map_len(map), text.chars().count());
        assert_eq!(unicode_json_maps([map, map]), format!("[{text}, {text}]"));
        assert_eq!(unicode_json_maps(std::iter::empty()), "[]");
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
