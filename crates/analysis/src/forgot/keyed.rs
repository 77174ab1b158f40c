//! A hasher for the analysis's maps whose keys are already hashes (a message's
//! fingerprint or text key) or small numbers (message numbers, positions). SipHash, the
//! standard maps' default, was a tenth of `forgot`'s analysis on a Codex rollout whose
//! every compaction looks up thousands of kept prompts (issue 36). Each key is folded into
//! the state by one 64x64->128-bit multiply; the state starts from a seed drawn per map,
//! so a file cannot be written to make its keys share buckets.

use std::hash::{BuildHasher, Hasher, RandomState};

/// Builds `Fold` hashers from a seed drawn when the map is made.
#[derive(Clone)]
pub(super) struct Keyed {
    seed: u64,
}

impl Default for Keyed {
    fn default() -> Keyed {
        Keyed {
            seed: RandomState::new().hash_one(0u64),
        }
    }
}

impl BuildHasher for Keyed {
    type Hasher = Fold;

    fn build_hasher(&self) -> Fold {
        Fold(self.seed)
    }
}

/// The hasher: every word of the key multiplied into the state.
pub(super) struct Fold(u64);

/// An odd constant with its bits spread (2^64 / the golden ratio).
const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Fold {
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.0 ^ word) * u128::from(MULTIPLIER);
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for Fold {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        // The length, so that keys of trailing zero bytes differ.
        self.mix(bytes.len() as u64);
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn write_u128(&mut self, n: u128) {
        self.mix(n as u64);
        self.mix((n >> 64) as u64);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Small numbers and 128-bit prints spread over the low bits a table uses, and the same
    /// key hashes alike under one seed.
    #[test]
    fn keys_spread_and_repeat() {
        let keyed = Keyed::default();
        let low: HashSet<u64> = (0..4096usize).map(|n| keyed.hash_one(n) & 0xfff).collect();
        assert!(
            low.len() > 2400,
            "4096 numbers in {} of 4096 buckets",
            low.len()
        );
        let prints: HashSet<u64> = (0..4096u128)
            .map(|n| keyed.hash_one((n << 64) | 7) & 0xfff)
            .collect();
        assert!(prints.len() > 2400, "{} buckets", prints.len());
        assert_eq!(keyed.hash_one(42u128), keyed.hash_one(42u128));
        assert_ne!(keyed.hash_one(&[0u8][..]), keyed.hash_one(&[0u8, 0][..]));
    }
}
