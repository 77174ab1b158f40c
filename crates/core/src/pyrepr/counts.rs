//! The lengths of a string's Python texts (`repr`, and `json.dumps` with and without
//! `ensure_ascii`) from counts of the bytes those writers treat specially, without walking
//! the string escape by escape.
//!
//! Sizing is the hot path of a replay: every message of a session is measured once, tens of
//! megabytes of tool output with an escape every line. Each length is a sum over bytes
//! (plus, for non-ASCII chars, a look at each one), so one pass that tallies byte classes in
//! blocks the compiler turns into vector code gives it. The writers in `str_repr` and `json`
//! remain the definition; tests check that these lengths are the length of what they write.

use super::printable::is_printable;

/// How many bytes of each class a string holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ByteCounts {
    pub single: usize,
    pub double: usize,
    pub backslash: usize,
    /// `\n`, `\r` and `\t`: two-char escapes in both repr and JSON.
    pub nrt: usize,
    /// `\b` and `\f`: two-char escapes in JSON only.
    pub bf: usize,
    /// Every byte below 0x20 (the five above included).
    pub control: usize,
    pub del: usize,
    /// UTF-8 continuation bytes (0x80..=0xBF): a string has `len - cont` chars.
    pub cont: usize,
    /// First bytes of non-ASCII chars (0xC0..): how many non-ASCII chars there are.
    pub lead: usize,
    /// First bytes of chars beyond the BMP (0xF0..), which JSON escapes as two units.
    pub lead4: usize,
}

/// Bytes per block: small enough that a byte-wide tally cannot overflow.
const BLOCK: usize = 128;

/// Tallies one block (at most 255 bytes) into byte-wide counters, which the compiler keeps
/// in vector lanes, then adds them to `c`.
#[inline(always)]
fn tally(block: &[u8], c: &mut ByteCounts) {
    let mut t = [0u8; 10];
    for &x in block {
        t[0] = t[0].wrapping_add(u8::from(x == b'\''));
        t[1] = t[1].wrapping_add(u8::from(x == b'"'));
        t[2] = t[2].wrapping_add(u8::from(x == b'\\'));
        t[3] = t[3].wrapping_add(u8::from(x == b'\n' || x == b'\r' || x == b'\t'));
        t[4] = t[4].wrapping_add(u8::from(x == 0x08 || x == 0x0c));
        t[5] = t[5].wrapping_add(u8::from(x < 0x20));
        t[6] = t[6].wrapping_add(u8::from(x == 0x7f));
        t[7] = t[7].wrapping_add(u8::from((0x80..0xc0).contains(&x)));
        t[8] = t[8].wrapping_add(u8::from(x >= 0xc0));
        t[9] = t[9].wrapping_add(u8::from(x >= 0xf0));
    }
    c.single += usize::from(t[0]);
    c.double += usize::from(t[1]);
    c.backslash += usize::from(t[2]);
    c.nrt += usize::from(t[3]);
    c.bf += usize::from(t[4]);
    c.control += usize::from(t[5]);
    c.del += usize::from(t[6]);
    c.cont += usize::from(t[7]);
    c.lead += usize::from(t[8]);
    c.lead4 += usize::from(t[9]);
}

/// The byte classes of `s`, in one pass (with 32-byte vectors where the CPU has them).
pub(crate) fn byte_counts(s: &str) -> ByteCounts {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { byte_counts_avx2(s) };
    }
    byte_counts_portable(s)
}

/// `byte_counts_portable` compiled for AVX2: the same code, twice as wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn byte_counts_avx2(s: &str) -> ByteCounts {
    byte_counts_portable(s)
}

#[inline(always)]
fn byte_counts_portable(s: &str) -> ByteCounts {
    let mut c = ByteCounts::default();
    let mut blocks = s.as_bytes().chunks_exact(BLOCK);
    for block in &mut blocks {
        tally(block, &mut c);
    }
    tally(blocks.remainder(), &mut c);
    c
}

/// The sum of `extra(c)` over the non-ASCII chars of `s`, skipping ASCII eight bytes at a
/// time.
fn sum_non_ascii(s: &str, extra: impl Fn(char) -> usize) -> usize {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let bytes = s.as_bytes();
    let (mut i, mut sum) = (0, 0);
    while i < bytes.len() {
        while let Some(chunk) = bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if u64::from_le_bytes(word) & HIGHS != 0 {
                break;
            }
            i += 8;
        }
        while i < bytes.len() && bytes[i] < 0x80 {
            i += 1;
        }
        let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        sum += extra(c);
        i += c.len_utf8();
    }
    sum
}

/// The length of Python's `repr()` of a string, in code points.
pub(crate) fn str_repr_len(s: &str) -> usize {
    let c = byte_counts(s);
    // Python quotes with `"` only when the text has `'` and no `"`; then nothing is
    // escaped for the quote, else every `'` is.
    let quote_escapes = if c.single > 0 && c.double == 0 {
        0
    } else {
        c.single
    };
    // `\\`, `\n`, `\r`, `\t` and the quote take two chars; other controls and DEL `\xNN`.
    let mut len = 2
        + (s.len() - c.cont)
        + c.backslash
        + c.nrt
        + quote_escapes
        + 3 * (c.control - c.nrt + c.del);
    if c.lead > 0 {
        len += sum_non_ascii(s, |ch| {
            if is_printable(ch) {
                0
            } else if (ch as u32) < 0x100 {
                3
            } else if (ch as u32) < 0x10000 {
                5
            } else {
                9
            }
        });
    }
    len
}

/// The length of `json.dumps(s)` (`ascii_only`) or `json.dumps(s, ensure_ascii=False)`,
/// in code points.
pub(crate) fn json_str_len(s: &str, ascii_only: bool) -> usize {
    let c = byte_counts(s);
    // `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f` take two chars; other controls `\u00XX`.
    let mut len = 2
        + (s.len() - c.cont)
        + c.double
        + c.backslash
        + c.nrt
        + c.bf
        + 5 * (c.control - c.nrt - c.bf);
    if ascii_only {
        // DEL and BMP chars become `\uXXXX`, others a surrogate pair of them.
        len += 5 * c.del + 5 * (c.lead - c.lead4) + 11 * c.lead4;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyrepr::{py_repr, summary_literal};
    use serde_json::Value;

    fn ascii_json_str(s: &str) -> String {
        crate::pyrepr::ascii_json(&Value::String(s.to_string()))
    }

    /// Strings mixing every byte class the counts tell apart, with long plain runs so the
    /// 128-byte blocks and their remainders are crossed.
    fn strings() -> Vec<String> {
        let alphabet = [
            ' ',
            '~',
            'a',
            '\\',
            '\'',
            '"',
            '\n',
            '\r',
            '\t',
            '\u{8}',
            '\u{c}',
            '\u{0}',
            '\u{1f}',
            '\u{7f}',
            '\u{80}',
            '\u{a0}',
            '\u{ad}',
            'é',
            '—',
            '解',
            '✅',
            '\u{200b}',
            '\u{2028}',
            '\u{feff}',
            '😀',
            '\u{F0000}',
            '\u{10FFFF}',
        ];
        let mut rng = fastrand::Rng::with_seed(11);
        let mut out: Vec<String> = vec![String::new(), "'".into(), "\"".into(), "'\"".into()];
        for _ in 0..4000 {
            let len = rng.usize(0..400);
            let odds = rng.u8(1..20);
            out.push(
                (0..len)
                    .map(|_| {
                        if rng.u8(0..odds) == 0 {
                            alphabet[rng.usize(0..alphabet.len())]
                        } else {
                            'x'
                        }
                    })
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn repr_length_is_the_length_of_the_written_repr() {
        for s in strings() {
            let written = py_repr(&Value::String(s.clone()));
            assert_eq!(str_repr_len(&s), written.chars().count(), "{s:?}");
        }
    }

    #[test]
    fn json_lengths_are_the_lengths_of_the_written_json() {
        for s in strings() {
            assert_eq!(
                json_str_len(&s, true),
                ascii_json_str(&s).chars().count(),
                "{s:?}"
            );
            assert_eq!(
                json_str_len(&s, false),
                summary_literal(&s).chars().count(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn byte_counts_match_a_byte_by_byte_count() {
        for s in strings() {
            let b = s.as_bytes();
            let n = |f: &dyn Fn(u8) -> bool| b.iter().filter(|&&x| f(x)).count();
            let want = ByteCounts {
                single: n(&|x| x == b'\''),
                double: n(&|x| x == b'"'),
                backslash: n(&|x| x == b'\\'),
                nrt: n(&|x| matches!(x, b'\n' | b'\r' | b'\t')),
                bf: n(&|x| matches!(x, 8 | 12)),
                control: n(&|x| x < 0x20),
                del: n(&|x| x == 0x7f),
                cont: n(&|x| (0x80..0xc0).contains(&x)),
                lead: n(&|x| x >= 0xc0),
                lead4: n(&|x| x >= 0xf0),
            };
            assert_eq!(byte_counts(&s), want, "{s:?}");
            assert_eq!(byte_counts_portable(&s), want, "{s:?}");
        }
    }
}
