//! A JSON value parsed into a `serde_json::Value` by a parser made for session files:
//! strings with an escape every line or so, decoded in one copy into a buffer kept across
//! strings. It is the streamed replay's fast path (`stream`), not a second parser to trust:
//! it answers `Invalid` for anything it does not take exactly as serde_json would (a
//! number it cannot hand to serde_json whole, a lone surrogate, deep nesting, any error),
//! and the caller then parses the element with serde_json, which stays the definition and
//! names the error. Tests check that both give the same values.

use serde_json::{Map, Value};

/// What a parse of the text's first JSON value gave.
#[derive(Debug, PartialEq)]
pub(crate) enum Parsed {
    /// The value and the bytes of text it used.
    Done(Value, usize),
    /// The text ends inside the value: more text may complete it.
    NeedMore,
    /// Not taken here; serde_json decides.
    Invalid,
}

/// Parses the JSON value at the start of `text` (after white space).
pub(crate) fn parse_value(text: &str, scratch: &mut String) -> Parsed {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        i: 0,
        depth: 0,
        ended: false,
        scratch,
    };
    match p.value() {
        Some(v) => Parsed::Done(v, p.i),
        None if p.ended => Parsed::NeedMore,
        None => Parsed::Invalid,
    }
}

/// The deepest nesting serde_json accepts: deeper values go to it, which refuses them.
const MAX_DEPTH: usize = 127;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `x` that end a plain run in a JSON string (`"`, `\` and raw controls, which
/// JSON does not allow), as their high bits. A borrow can only flag bytes above a truly
/// flagged one, so the lowest flag is exact: where the run ends.
#[inline]
fn stops(x: u64) -> u64 {
    let has = |b: u8| {
        let v = x ^ (ONES * u64::from(b));
        v.wrapping_sub(ONES) & !v & HIGHS
    };
    (x.wrapping_sub(ONES * 0x20) & !x & HIGHS) | has(b'"') | has(b'\\')
}

struct Parser<'a, 's> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    depth: usize,
    /// The text ran out: a failure may only mean the value goes on.
    ended: bool,
    /// Where strings with escapes are decoded, kept across strings.
    scratch: &'s mut String,
}

impl Parser<'_, '_> {
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.i).copied();
        self.ended |= b.is_none();
        b
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.i) {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.skip_ws();
        match self.peek()? {
            b'"' => {
                self.i += 1;
                self.string().map(Value::String)
            }
            b'{' => self.object(),
            b'[' => self.array(),
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Option<Value> {
        let rest = &self.bytes[self.i..];
        if rest.starts_with(word.as_bytes()) {
            self.i += word.len();
            return Some(value);
        }
        self.ended |= word.as_bytes().starts_with(rest);
        None
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(self.i) {
            self.i += 1;
        }
        // A number that reaches the end of the text may go on in the next chunk.
        self.ended |= self.i == self.bytes.len();
        // Its grammar and exact representation are serde_json's.
        match serde_json::from_str(&self.text[start..self.i]) {
            Ok(Value::Number(n)) => Some(Value::Number(n)),
            _ => None,
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.i += 1;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn array(&mut self) -> Option<Value> {
        self.enter()?;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek()? == b']' {
            self.i += 1;
            self.depth -= 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(Value::Array(items));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Value> {
        self.enter()?;
        let mut map = Map::new();
        self.skip_ws();
        if self.peek()? == b'}' {
            self.i += 1;
            self.depth -= 1;
            return Some(Value::Object(map));
        }
        loop {
            self.skip_ws();
            if self.peek()? != b'"' {
                return None;
            }
            self.i += 1;
            let key = self.string()?;
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            let value = self.value()?;
            // A repeated key keeps its first place and its last value, as serde_json's map.
            map.insert(key, value);
            self.skip_ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(Value::Object(map));
                }
                _ => return None,
            }
        }
    }

    /// From `i`, the first byte that ends a plain run, or the end.
    #[inline]
    fn plain_end(&self, mut i: usize) -> usize {
        while let Some(chunk) = self.bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let stop = stops(u64::from_le_bytes(word));
            if stop != 0 {
                return i + stop.trailing_zeros() as usize / 8;
            }
            i += 8;
        }
        while let Some(&b) = self.bytes.get(i) {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            i += 1;
        }
        i
    }

    /// From just after the opening quote to just after the closing one.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        let stop = self.plain_end(start);
        if self.bytes.get(stop) == Some(&b'"') {
            self.i = stop + 1;
            return Some(self.text[start..stop].to_string());
        }
        // Decoded in the scratch buffer, then copied once at its exact size.
        let mut out = std::mem::take(self.scratch);
        out.clear();
        out.push_str(&self.text[start..stop]);
        let decoded = self.decode_rest(stop, &mut out);
        let result = decoded.map(|()| out.as_str().to_string());
        *self.scratch = out;
        result
    }

    /// `string` from its first escape: escapes and the plain runs between them.
    fn decode_rest(&mut self, mut i: usize, out: &mut String) -> Option<()> {
        loop {
            let Some(&b) = self.bytes.get(i) else {
                self.ended = true;
                return None;
            };
            match b {
                b'"' => {
                    self.i = i + 1;
                    return Some(());
                }
                b'\\' => {
                    let Some(&e) = self.bytes.get(i + 1) else {
                        self.ended = true;
                        return None;
                    };
                    let (c, len) = match e {
                        b'n' => ('\n', 2),
                        b'"' => ('"', 2),
                        b'\\' => ('\\', 2),
                        b't' => ('\t', 2),
                        b'r' => ('\r', 2),
                        b'/' => ('/', 2),
                        b'b' => ('\u{8}', 2),
                        b'f' => ('\u{c}', 2),
                        b'u' => self.unicode_escape(i)?,
                        _ => return None,
                    };
                    out.push(c);
                    i += len;
                }
                // A raw control char: serde_json refuses it.
                _ => return None,
            }
            let stop = self.plain_end(i);
            out.push_str(&self.text[i..stop]);
            i = stop;
        }
    }

    /// The `\uXXXX` escape (or surrogate pair) at `i`: its char and its length in the text.
    fn unicode_escape(&mut self, i: usize) -> Option<(char, usize)> {
        let hi = self.hex4(i + 2)?;
        if !(0xD800..0xE000).contains(&hi) {
            return Some((char::from_u32(hi)?, 6));
        }
        // Only a high surrogate followed by a low one makes a char; serde_json decides
        // about anything else.
        if hi >= 0xDC00 {
            return None;
        }
        for (at, want) in [(i + 6, b'\\'), (i + 7, b'u')] {
            match self.bytes.get(at) {
                Some(&b) if b == want => {}
                Some(_) => return None,
                None => {
                    self.ended = true;
                    return None;
                }
            }
        }
        let lo = self.hex4(i + 8)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return None;
        }
        let c = char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?;
        Some((c, 12))
    }

    fn hex4(&mut self, at: usize) -> Option<u32> {
        let Some(digits) = self.bytes.get(at..at + 4) else {
            self.ended = true;
            return None;
        };
        let mut n = 0;
        for &d in digits {
            n = n * 16 + char::from(d).to_digit(16)?;
        }
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) {
        let want: Value = serde_json::from_str(text).unwrap();
        match parse_value(text, &mut String::new()) {
            Parsed::Done(value, used) => {
                assert_eq!(value, want, "{text}");
                assert!(text[used..].trim().is_empty(), "{text}");
            }
            other => panic!("{other:?} for {text}"),
        }
    }

    /// Values with strings of every class of char JSON escapes, numbers of every shape,
    /// nesting and repeated keys.
    fn random_value(rng: &mut fastrand::Rng, depth: usize) -> Value {
        const CHARS: &[char] = &[
            'a',
            ' ',
            '~',
            '\'',
            '"',
            '\\',
            '/',
            '\n',
            '\r',
            '\t',
            '\u{8}',
            '\u{c}',
            '\0',
            '\u{1f}',
            '\u{7f}',
            '\u{80}',
            'é',
            '—',
            '解',
            '\u{2028}',
            '\u{fffe}',
            '😀',
            '\u{10ffff}',
        ];
        match rng.u8(0..if depth > 3 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(rng.bool()),
            2 => {
                let n = [
                    "0",
                    "-0",
                    "1.0",
                    "-2.5e-7",
                    "1e400",
                    "12345678901234567890123",
                    "1E+5",
                ];
                serde_json::from_str(n[rng.usize(0..n.len())]).unwrap()
            }
            3 | 4 => {
                let len = rng.usize(0..40);
                Value::String((0..len).map(|_| CHARS[rng.usize(0..CHARS.len())]).collect())
            }
            5 => Value::Array(
                (0..rng.usize(0..5))
                    .map(|_| random_value(rng, depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for _ in 0..rng.usize(0..5) {
                    let key: String = (0..rng.usize(0..3))
                        .map(|_| CHARS[rng.usize(0..CHARS.len())])
                        .collect();
                    m.insert(key, random_value(rng, depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn values_are_the_ones_serde_json_gives() {
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..3000 {
            let v = random_value(&mut rng, 0);
            check(&serde_json::to_string(&v).unwrap());
            check(&serde_json::to_string_pretty(&v).unwrap());
            // Every non-ASCII char as `\uXXXX` (surrogate pairs beyond the BMP).
            let escaped: String = serde_json::to_string(&v)
                .unwrap()
                .chars()
                .map(|c| match c as u32 {
                    0..0x80 => c.to_string(),
                    _ => c
                        .encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04X}"))
                        .collect(),
                })
                .collect();
            check(&escaped);
        }
        check(r#" {"a": 1, "b": {"c": [true, false, null]}, "a": "\/ \u00e9 \ud83d\ude00"} "#);
    }

    #[test]
    fn a_cut_value_needs_more_and_anything_doubtful_is_left_to_serde_json() {
        let text = r#"[{"role": "user", "content": "\u00e9 \ud83d\ude00 \"q\" it's\n", "n": [1.5, -2, true, null]}]"#;
        for cut in 0..text.len() {
            let part = &text[..cut];
            assert_eq!(
                parse_value(part, &mut String::new()),
                Parsed::NeedMore,
                "{part}"
            );
        }
        for doubtful in [
            r#""\ud800""#,
            r#""\udc00\ud800""#,
            r#""\ud800\u0041""#,
            "\"a\u{1}b\"",
            r#""\x""#,
            "[1,]",
            "{\"a\" 1}",
            "01 ",
            "tru ",
            "-x",
            "]",
        ] {
            assert_eq!(
                parse_value(doubtful, &mut String::new()),
                Parsed::Invalid,
                "{doubtful}"
            );
            assert!(
                serde_json::from_str::<Value>(doubtful).is_err(),
                "{doubtful}"
            );
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse_value(&deep, &mut String::new()), Parsed::Invalid);
        check(&format!(
            "{}{}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        ));
    }
}
