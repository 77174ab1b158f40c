//! The lesson's unit of size: the length, in code points, of Python's `str()` of a value.
//!
//! A history's size estimate must agree with the teaching pipeline to the character
//! (docs/pipeline.md, "Units"),
//! so this module reproduces Python 3.11's `repr` of str, int, float, bool, None, list and
//! dict. The same writer produces the text the budget stage persists for list contents.
//! One generic writer serves both the counting path (hot: runs before every model call) and
//! the text path, so the two can never disagree.

use serde_json::{Map, Number, Value};

use super::counts::str_repr_len;
use super::printable::is_printable;

/// Where a writer puts its output: a counter or a string. Shared with the JSON writers.
pub(crate) trait Sink {
    fn push_char(&mut self, c: char);
    /// A run of text known to need no escaping: `chars` code points long.
    fn push_plain(&mut self, s: &str, chars: usize);
    /// The running count, when this sink only counts: the writers then size a string from
    /// its byte classes (`counts`) instead of walking it escape by escape.
    fn count_only(&mut self) -> Option<&mut usize> {
        None
    }
}

pub(crate) struct Counter(pub(crate) usize);

impl Sink for Counter {
    fn push_char(&mut self, _: char) {
        self.0 += 1;
    }
    fn push_plain(&mut self, _: &str, chars: usize) {
        self.0 += chars;
    }
    fn count_only(&mut self) -> Option<&mut usize> {
        Some(&mut self.0)
    }
}

impl Sink for String {
    fn push_char(&mut self, c: char) {
        self.push(c);
    }
    fn push_plain(&mut self, s: &str, _: usize) {
        String::push_str(self, s);
    }
}

/// Whether a byte is printable ASCII other than `\\` and `quote`: a byte both writers copy
/// (or count) as it is.
#[inline]
fn is_plain(b: u8, quote: u8) -> bool {
    (0x20..=0x7e).contains(&b) && b != b'\\' && b != quote
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `x` that are not plain (`is_plain`), as their high bits, tested at once:
/// the classic "has a byte less than / equal to" bit tricks. A borrow or carry can only
/// flag bytes above a truly flagged one, so the lowest flag is exact: where to stop.
#[inline]
fn word_stops(x: u64, quote: u8) -> u64 {
    let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
    let del_or_above = (x.wrapping_add(ONES) | x) & HIGHS;
    let has = |b: u8| {
        let v = x ^ (ONES * u64::from(b));
        v.wrapping_sub(ONES) & !v & HIGHS
    };
    below_space | del_or_above | has(b'\\') | has(quote)
}

/// From byte `i`, the first byte that is not plain (`is_plain`), or the end. Tool output is
/// mostly plain, so it is skipped eight bytes at a time.
#[inline]
pub(crate) fn plain_end(bytes: &[u8], mut i: usize, quote: u8) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let stops = word_stops(u64::from_le_bytes(word), quote);
        if stops != 0 {
            return i + (stops.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && is_plain(bytes[i], quote) {
        i += 1;
    }
    i
}

/// `plain_end`, and the char found there (None at the end). Both writers scan strings this
/// way.
pub(crate) fn skip_plain(s: &str, i: usize, quote: u8) -> (usize, Option<char>) {
    let bytes = s.as_bytes();
    let i = plain_end(bytes, i, quote);
    let next = match bytes.get(i) {
        None => None,
        Some(&b) if b < 0x80 => Some(b as char),
        Some(_) => s.get(i..).and_then(|rest| rest.chars().next()),
    };
    (i, next)
}

/// From this length on, counting byte classes beats walking the string (keys, ids and
/// short texts are quicker walked: the counting pass has a fixed cost).
pub(crate) const COUNT_MIN_BYTES: usize = 64;

fn write_str_repr<S: Sink>(s: &str, out: &mut S) {
    if s.len() >= COUNT_MIN_BYTES
        && let Some(n) = out.count_only()
    {
        *n += str_repr_len(s);
        return;
    }
    let has_single = s.contains('\'');
    let quote = if has_single && !s.contains('"') {
        b'"'
    } else {
        b'\''
    };
    out.push_char(quote as char);
    // Walk bytes, not chars: most tool output is printable ASCII, which is copied (or
    // counted) in runs; only escapes and non-ASCII chars need a closer look.
    let (mut i, mut run_start, mut run_chars) = (0, 0, 0);
    loop {
        let (stop, next) = skip_plain(s, i, quote);
        run_chars += stop - i;
        i = stop;
        let Some(c) = next else {
            break;
        };
        if !c.is_ascii() && is_printable(c) {
            run_chars += 1;
            i += c.len_utf8();
            continue;
        }
        out.push_plain(&s[run_start..i], run_chars);
        i += c.len_utf8();
        run_start = i;
        run_chars = 0;
        match c {
            '\\' => out.push_plain("\\\\", 2),
            '\n' => out.push_plain("\\n", 2),
            '\r' => out.push_plain("\\r", 2),
            '\t' => out.push_plain("\\t", 2),
            c if c as u32 == quote as u32 => {
                out.push_char('\\');
                out.push_char(c);
            }
            c => {
                let cp = c as u32;
                let esc = if cp < 0x100 {
                    format!("\\x{cp:02x}")
                } else if cp < 0x10000 {
                    format!("\\u{cp:04x}")
                } else {
                    format!("\\U{cp:08x}")
                };
                let n = esc.len();
                out.push_plain(&esc, n);
            }
        }
    }
    out.push_plain(&s[run_start..], run_chars);
    out.push_char(quote as char);
}

/// Python's text of a JSON number: ints as digits, floats as `repr(float)`.
pub fn py_number(n: &Number) -> String {
    let text = n.to_string();
    if !text.contains(['.', 'e', 'E']) {
        // JSON has no leading zeros; only "-0" differs from Python's int text.
        return if text == "-0" { "0".into() } else { text };
    }
    match text.parse::<f64>() {
        Ok(f) => py_float_repr(f),
        Err(_) => text,
    }
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form outside 1e-4..1e16.
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{sign}{digits}{}.0", "0".repeat((int_len - n) as usize))
            } else {
                let (a, b) = digits.split_at(int_len as usize);
                format!("{sign}{a}.{b}")
            }
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let m = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

fn write_value<S: Sink>(v: &Value, out: &mut S) {
    match v {
        Value::Null => out.push_plain("None", 4),
        Value::Bool(true) => out.push_plain("True", 4),
        Value::Bool(false) => out.push_plain("False", 5),
        Value::Number(n) => {
            let t = py_number(n);
            let len = t.len();
            out.push_plain(&t, len);
        }
        Value::String(s) => write_str_repr(s, out),
        Value::Array(items) => write_list(items, out),
        Value::Object(map) => write_map(map, out),
    }
}

fn write_list<S: Sink>(items: &[Value], out: &mut S) {
    out.push_char('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_plain(", ", 2);
        }
        write_value(item, out);
    }
    out.push_char(']');
}

fn write_map<S: Sink>(map: &Map<String, Value>, out: &mut S) {
    out.push_char('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_plain(", ", 2);
        }
        write_str_repr(k, out);
        out.push_plain(": ", 2);
        write_value(v, out);
    }
    out.push_char('}');
}

/// Length of Python's `str()` of a dict.
pub fn py_str_len(map: &Map<String, Value>) -> usize {
    let mut c = Counter(0);
    write_map(map, &mut c);
    c.0
}

/// Length of Python's `str()` of any value.
pub fn py_value_len(v: &Value) -> usize {
    let mut c = Counter(0);
    write_value(v, &mut c);
    c.0
}

/// Length of Python's `str()` of a list, without building it.
pub fn py_list_len(items: &[Value]) -> usize {
    let mut c = Counter(0);
    write_list(items, &mut c);
    c.0
}

/// Python's `str()` of a list: what the budget stage persists for list content.
pub fn py_str_list(items: &[Value]) -> String {
    let mut s = String::new();
    write_list(items, &mut s);
    s
}

/// Python's `repr()` of any value.
pub fn py_repr(v: &Value) -> String {
    let mut s = String::new();
    write_value(v, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skipping_eight_bytes_at_a_time_stops_where_a_byte_scan_stops() {
        let alphabet = [
            ' ', '~', 'a', '\\', '\'', '"', '\n', '\u{7f}', '\u{1f}', 'é', '解', '😀', '\t',
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..3000 {
            let len = rng.usize(0..40);
            // Mostly plain text, so long runs cross the 8-byte words.
            let s: String = (0..len)
                .map(|_| {
                    if rng.u8(0..4) == 0 {
                        alphabet[rng.usize(0..alphabet.len())]
                    } else {
                        'x'
                    }
                })
                .collect();
            for quote in [b'\'', b'"'] {
                for start in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                    let naive = start
                        + s.as_bytes()[start..]
                            .iter()
                            .take_while(|&&b| is_plain(b, quote))
                            .count();
                    let (stop, next) = skip_plain(&s, start, quote);
                    assert_eq!(stop, naive, "{s:?} from {start}");
                    assert_eq!(next, s[stop..].chars().next(), "{s:?} from {start}");
                }
            }
        }
    }

    fn repr(v: Value) -> String {
        py_repr(&v)
    }

    #[test]
    fn string_quoting_follows_python() {
        assert_eq!(repr(json!("plain")), "'plain'");
        assert_eq!(repr(json!("it's")), "\"it's\"");
        assert_eq!(repr(json!("say \"hi\"")), "'say \"hi\"'");
        assert_eq!(repr(json!("both ' and \"")), "'both \\' and \"'");
        assert_eq!(repr(json!("a\\b\nc\rd\te")), "'a\\\\b\\nc\\rd\\te'");
    }

    #[test]
    fn non_printables_use_the_shortest_escape() {
        assert_eq!(
            repr(json!("\u{0}\u{7f}\u{85}\u{a0}")),
            "'\\x00\\x7f\\x85\\xa0'"
        );
        // U+200B (Cf), U+2028 (Zl), U+3000 (Zs), an unassigned BMP point, a private-use astral one.
        assert_eq!(
            repr(json!("\u{200b}\u{2028}\u{3000}\u{0378}")),
            "'\\u200b\\u2028\\u3000\\u0378'"
        );
        assert_eq!(repr(json!("\u{F0000}")), "'\\U000f0000'");
        assert_eq!(repr(json!("解析器 🚀 é")), "'解析器 🚀 é'");
        assert!(is_printable('🚀'));
        assert!(!is_printable('\u{feff}'));
    }

    #[test]
    fn numbers_and_constants_print_as_python() {
        assert_eq!(
            repr(json!([1, -2, true, false, null])),
            "[1, -2, True, False, None]"
        );
        let floats: Value =
            serde_json::from_str("[1.0, 1e-5, 1e16, 1.5e16, 0.0001, 123.456, -0.0, 1e15, 2.5E-7]")
                .unwrap();
        assert_eq!(
            repr(floats),
            "[1.0, 1e-05, 1e+16, 1.5e+16, 0.0001, 123.456, -0.0, 1000000000000000.0, 2.5e-07]"
        );
        let big: Value = serde_json::from_str("123456789012345678901234567890").unwrap();
        assert_eq!(repr(big), "123456789012345678901234567890");
    }

    #[test]
    fn dicts_keep_key_order() {
        let v: Value = serde_json::from_str(r#"{"z": 1, "a": {"b": [ ]}}"#).unwrap();
        assert_eq!(repr(v), "{'z': 1, 'a': {'b': []}}");
    }

    #[test]
    fn counting_agrees_with_writing() {
        let v = json!({"role": "user", "content": [{"type": "tool_result", "content": "x'y\"z\u{1}😀\u{2028}"}]});
        assert_eq!(py_value_len(&v), repr(v).chars().count());
    }
}
