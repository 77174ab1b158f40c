//! New names for a fork: session ids in the shapes the agents make them (Claude Code a
//! random UUID, version 4; Codex a time-ordered one, version 7, as its own rollouts are
//! named), and the UTC clock in the forms their files and folder names use.

use crate::util::iso_utc;

fn format_uuid(b: [u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn random_bytes() -> [u8; 16] {
    let mut b = [0u8; 16];
    for x in &mut b {
        *x = fastrand::u8(..);
    }
    b
}

/// A random UUID (version 4, RFC 9562 variant).
pub fn uuid_v4() -> String {
    let mut b = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    format_uuid(b)
}

/// A time-ordered UUID (version 7): milliseconds since the epoch, then random bits.
pub fn uuid_v7(unix_ms: u64) -> String {
    let mut b = random_bytes();
    let ms = unix_ms.to_be_bytes();
    b[..6].copy_from_slice(&ms[2..8]);
    b[6] = (b[6] & 0x0f) | 0x70;
    b[8] = (b[8] & 0x3f) | 0x80;
    format_uuid(b)
}

/// `2026-12-02T07:53:13.882Z`, the timestamps both agents write.
pub fn iso_ms(unix_ms: u64) -> String {
    let secs = iso_utc(unix_ms / 1000);
    format!("{}.{:03}Z", secs.trim_end_matches('Z'), unix_ms % 1000)
}

/// The pieces of a Codex rollout's place: `("2026", "12", "02", "2026-12-02T07-53-13")`.
pub fn codex_date_parts(unix_ms: u64) -> (String, String, String, String) {
    let iso = iso_utc(unix_ms / 1000);
    let date = &iso[..10];
    let time = iso[11..19].replace(':', "-");
    (
        iso[0..4].to_string(),
        iso[5..7].to_string(),
        iso[8..10].to_string(),
        format!("{date}T{time}"),
    )
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_have_their_version_and_variant() {
        let a = uuid_v4();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(a, uuid_v4());
        // 2026-12-02T07:53:13.835Z as Codex's own id starts: 01a235be-4d...
        let v7 = uuid_v7(1_796_197_993_835);
        assert!(v7.starts_with("01a235be-4d6b-7"), "{v7}");
        assert_eq!(&v7[14..15], "7");
    }

    #[test]
    fn codex_place_and_timestamps() {
        let (y, m, d, stamp) = codex_date_parts(1_796_197_993_835);
        assert_eq!((y.as_str(), m.as_str(), d.as_str()), ("2026", "12", "02"));
        assert_eq!(stamp, "2026-12-02T07-53-13");
        assert_eq!(iso_ms(1_796_197_993_835), "2026-12-02T07:53:13.835Z");
    }
}
