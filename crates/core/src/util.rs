//! Small text and time helpers shared by the front ends and the scripted model: thousands
//! separators, clipping by chars or by terminal columns, and the Unix clock. Nothing here
//! knows about messages or the pipeline.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `48210` -> `48,210`.
pub fn group_digits(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most `max` code points, ending in `…` when cut (for text that is not laid out in
/// columns: summaries, labels in logs).
pub fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// At most `width` terminal columns, ending in `…` when cut. A CJK character or an emoji
/// takes two columns, so counting chars would push a row's later columns out of line.
pub fn clip_width(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `s` clipped, then padded with spaces to exactly `width` columns.
pub fn fit_width(s: &str, width: usize) -> String {
    let c = clip_width(s, width);
    let pad = width.saturating_sub(c.width());
    format!("{c}{}", " ".repeat(pad))
}

/// Terminal columns `s` takes.
pub fn display_width(s: &str) -> usize {
    s.width()
}

/// Whether `text` holds `query`, case-insensitive by char (an empty query is in every
/// text): how the workbench's searches and the sessions browser's filter match.
pub fn contains_folded(text: &str, query: &str) -> bool {
    let fold = |s: &str| -> String {
        s.chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect()
    };
    fold(text).contains(&fold(query))
}

/// `1 result`, `2 results`, `2,274 results` (digits grouped, as every figure shown).
pub fn plural(n: usize, word: &str) -> String {
    let count = group_digits(n);
    if n == 1 {
        format!("{count} {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// The form of a noun for `n` of it: `one` for exactly one, else `many` (the one rule every
/// count in a sentence or a column follows, so no line says "1 calls").
pub fn noun<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// Seconds since the Unix epoch (0 if the clock is before it): transcript names and the
/// demo workspace's folder name.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `2026-12-01T17:43:44Z` for Unix seconds (UTC), the `started` of a recording and the
/// timestamps fork and the proxy write. Past the year 9999, which `time` does not format,
/// it names the last second of that year.
pub fn iso_utc(secs: u64) -> String {
    let t = i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc());
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_utc_names_known_days() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_utc(u64::MAX), "9999-12-31T23:59:59Z");
    }

    /// A count with its noun groups its digits as every other figure does (the opened
    /// session's title said "38,651 msgs · 18,188 calls · 2274 compactions").
    #[test]
    fn a_plural_count_groups_its_digits() {
        assert_eq!(plural(1, "compaction"), "1 compaction");
        assert_eq!(plural(2_274, "compaction"), "2,274 compactions");
    }

    #[test]
    fn digits_are_grouped_by_thousands() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(48_210), "48,210");
        assert_eq!(group_digits(1_234_567), "1,234,567");
    }

    #[test]
    fn clipping_by_chars_counts_code_points() {
        assert_eq!(clip_chars("abc", 3), "abc");
        assert_eq!(clip_chars("abcd", 3), "ab…");
        assert_eq!(clip_chars("解析器です", 3), "解析…");
        assert_eq!(clip_chars("abc", 0), "");
    }

    #[test]
    fn clipping_by_width_counts_columns() {
        assert_eq!(clip_width("解析器", 6), "解析器");
        // Two columns each: 解 fits in 4 with the ellipsis, 析 would not.
        assert_eq!(clip_width("解析器", 4), "解…");
        assert_eq!(clip_width("ab🚀cd", 4), "ab…");
        assert_eq!(fit_width("解", 4), "解  ");
        assert_eq!(display_width(&fit_width("解析器です", 7)), 7);
        assert_eq!(fit_width("x", 0), "");
    }
}
