//! The one sanitizer for text from outside (session files, file names, model and tool
//! output, servers) before a human-readable front end prints it: C0 controls other than
//! newline and tab, DEL, C1 controls and the bidi overrides and isolates become visible
//! escapes (`\e`, `\r`, `\u{202e}`, …), so that no such text can drive the terminal (set
//! its title, write the clipboard, clear the screen) or reorder what is shown. JSON output
//! never goes through it: JSON escapes controls itself and must stay exact.
//!
//! `sanitize` is for one field (the workbench measures a row's width after it);
//! `SanitizingWriter` wraps a whole human-mode output stream, so no field can be forgotten.

use std::borrow::Cow;
use std::io::Write;

/// Whether `c` must not reach a terminal as it is.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escape(out: &mut String, c: char) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\r' => out.push_str("\\r"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{0}' => out.push_str("\\0"),
        c => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` with every unsafe character as a visible escape; borrowed when there is none.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_unsafe) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if is_unsafe(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `sanitize` for text that must stay on one line (a row, a file name in a listing):
/// newline and tab are escaped too.
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\t']) {
        return sanitize(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A writer that passes everything through `sanitize` on its way to `inner`. Bytes that
/// are not UTF-8 are written as `\xNN`; a character split across two writes is held
/// until its end arrives (at most 3 bytes).
pub struct SanitizingWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> SanitizingWriter<W> {
    pub fn new(inner: W) -> Self {
        SanitizingWriter {
            inner,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, bytes: &[u8], at_end: bool) -> std::io::Result<usize> {
        let mut rest = bytes;
        let mut out = String::new();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(&sanitize(text));
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    out.push_str(&sanitize(
                        std::str::from_utf8(&rest[..good]).unwrap_or_default(),
                    ));
                    match e.error_len() {
                        Some(bad) => {
                            for b in &rest[good..good + bad] {
                                use std::fmt::Write as _;
                                let _ = write!(out, "\\x{b:02x}");
                            }
                            rest = &rest[good + bad..];
                        }
                        None if at_end => {
                            for b in &rest[good..] {
                                use std::fmt::Write as _;
                                let _ = write!(out, "\\x{b:02x}");
                            }
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = &rest[good..];
                            break;
                        }
                    }
                }
            }
        }
        let held = rest.len();
        self.pending = rest.to_vec();
        self.inner.write_all(out.as_bytes())?;
        Ok(held)
    }
}

impl<W: Write> Drop for SanitizingWriter<W> {
    fn drop(&mut self) {
        // A character cut off by the end of the output is shown as its bytes.
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            let _ = self.emit(&pending, true);
            let _ = self.inner.flush();
        }
    }
}

impl<W: Write> Write for SanitizingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            self.emit(buf, false)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(buf);
            self.emit(&joined, false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_escapes_and_bidi_become_visible() {
        let hostile = "a\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\r\0\u{7f}\u{9b}\u{202e}\u{2066}b\n\tc";
        let s = sanitize(hostile);
        assert_eq!(
            s,
            "a\\e]52;c;cHduZWQ=\\a\\e]0;pwned\\a\\e[2J\\r\\0\\u{7f}\\u{9b}\\u{202e}\\u{2066}b\n\tc"
        );
        assert!(!s.chars().any(is_unsafe));
        assert!(matches!(sanitize("plain é 漢字\n"), Cow::Borrowed(_)));
        assert_eq!(sanitize_line("a\nb\tc\u{1b}"), "a\\nb\\tc\\e");
    }

    #[test]
    fn the_writer_holds_a_split_character_and_escapes_bad_bytes() {
        let mut out = Vec::new();
        let mut w = SanitizingWriter::new(&mut out);
        let rlo = "\u{202e}".as_bytes();
        w.write_all(&rlo[..1]).unwrap();
        w.write_all(&rlo[1..]).unwrap();
        w.write_all(b"\x1b[2J\xffok").unwrap();
        w.write_all(&"é".as_bytes()[..1]).unwrap();
        drop(w);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\\u{202e}\\e[2J\\xffok\\xc3"
        );
    }
}
