//! Python 3.11's `str.isprintable()`, which decides whether `repr` writes a char as it is or
//! escapes it. A leaf both the writers (`str_repr`) and the length counts (`counts`) ask, so
//! that neither has to import the other.

use super::printable_table::NON_PRINTABLE;

/// Python 3.11's `str.isprintable()` for one code point.
pub fn is_printable(c: char) -> bool {
    let cp = c as u32;
    if cp < 0x80 {
        return (0x20..0x7f).contains(&cp);
    }
    if cp < 0x10000 {
        // Sizing asks this for every non-ASCII char of a session: one bit test.
        let bits = bmp_printable();
        return (bits[(cp >> 6) as usize] >> (cp & 63)) & 1 == 1;
    }
    in_printable_table(cp)
}

/// `is_printable` from the table of non-printable ranges.
fn in_printable_table(cp: u32) -> bool {
    NON_PRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

/// `in_printable_table` for every code point of the BMP above ASCII, one bit each (8 KB),
/// built from the table on first use.
fn bmp_printable() -> &'static [u64; 1024] {
    static BITS: std::sync::OnceLock<Box<[u64; 1024]>> = std::sync::OnceLock::new();
    BITS.get_or_init(|| {
        let mut bits = Box::new([u64::MAX; 1024]);
        for &(lo, hi) in NON_PRINTABLE.iter().filter(|(lo, _)| *lo < 0x10000) {
            for cp in lo..=hi.min(0xffff) {
                bits[(cp >> 6) as usize] &= !(1u64 << (cp & 63));
            }
        }
        bits
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bmp_bitmap_is_the_table() {
        for cp in 0x80..0x10000u32 {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(is_printable(c), in_printable_table(cp), "U+{cp:04X}");
            }
        }
    }
}
