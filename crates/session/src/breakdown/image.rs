//! An image block's tokens, estimated: Anthropic's rule (width x height / 750, an image
//! being scaled to at most about 1.15 megapixels first), with the size read from a PNG's
//! header when the block holds one as base64; any other image counts as the largest.

use serde_json::Value;

/// What an image of the largest size costs (and one whose size cannot be read).
pub const IMAGE_TOKENS_MAX: u64 = 1_600;

/// The estimated tokens of an `image` block.
pub fn image_tokens(block: &Value) -> u64 {
    let data = block
        .get("source")
        .and_then(|s| s.get("data"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match png_size(data) {
        Some((w, h)) => ((w * h).div_ceil(750)).clamp(1, IMAGE_TOKENS_MAX),
        None => IMAGE_TOKENS_MAX,
    }
}

/// Width and height from a base64 PNG's IHDR (its first 24 bytes).
fn png_size(b64: &str) -> Option<(u64, u64)> {
    let head = decode_prefix(b64.get(..32)?)?;
    if head.get(..8)? != b"\x89PNG\r\n\x1a\n" || head.get(12..16)? != b"IHDR" {
        return None;
    }
    let be = |r: std::ops::Range<usize>| {
        head.get(r)
            .map(|b| b.iter().fold(0u64, |a, &x| (a << 8) | x as u64))
    };
    Some((be(16..20)?, be(20..24)?))
}

/// Decodes whole groups of standard base64 (no padding inside the prefix).
fn decode_prefix(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for group in s.as_bytes().chunks_exact(4) {
        let mut n = 0u32;
        for &c in group {
            n = (n << 6) | val(c)?;
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The base64 of a PNG signature and an IHDR of `w` x `h`.
    pub(crate) fn png_b64(w: u32, h: u32) -> String {
        let mut b = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0]);
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for g in b.chunks(3) {
            let n = g.iter().fold(0u32, |a, &x| (a << 8) | x as u32) << (8 * (3 - g.len()));
            for k in 0..=g.len() {
                s.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            }
        }
        s
    }

    #[test]
    fn a_png_costs_its_area_over_750() {
        let b = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_b64(300, 250)}});
        assert_eq!(image_tokens(&b), 100);
        let big = json!({"type": "image", "source": {"data": png_b64(4000, 3000)}});
        assert_eq!(image_tokens(&big), IMAGE_TOKENS_MAX);
        let url = json!({"type": "image", "source": {"type": "url", "url": "https://x"}});
        assert_eq!(image_tokens(&url), IMAGE_TOKENS_MAX);
    }
}
