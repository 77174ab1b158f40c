//! Claude Code's line uuids -> the index of the message that holds the line: what a rewind
//! (`claude_rewind`) and a compaction's kept messages (`claude_kept`) look up. Every line
//! of a session has one, so the index grows with the file, and a follower (`watch`) keeps
//! it for as long as it follows: each entry is a 64-bit keyed hash of the uuid and a 32-bit
//! index (16 bytes, no allocation of its own) instead of the uuid's own string (issue 39,
//! item 5; docs/pipeline.md, "Reading sessions").
//!
//! The hash is keyed per index (`RandomState`), so a file cannot be written to make two
//! uuids collide; two uuids of an honest file share a hash with odds of about n²/2⁶⁵ (one
//! in ten million for a million lines), and then a lookup finds the other one's message.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

/// A uuid as the index keys it: its keyed hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct UuidKey(u64);

/// Hashes a key that is already a keyed hash: passes it through.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used (a `UuidKey`); fold anything else in all the same.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The uuid index of one conversation being read.
#[derive(Debug, Default)]
pub(crate) struct UuidIndex {
    keys: RandomState,
    map: HashMap<UuidKey, u32, BuildHasherDefault<PassThrough>>,
    /// Entries of messages before this index were dropped (`forget_before`, `bound`).
    below: u32,
    /// Keys whose entry was read for good (a streamed read's preserved messages,
    /// `claude_windows`): a later line with one of them would change what a whole read
    /// finds at the end, and is noted in `rewritten`.
    watched: HashSet<UuidKey>,
    rewritten: bool,
}

impl UuidIndex {
    /// The key of `uuid` in this index.
    pub(crate) fn key(&self, uuid: &str) -> UuidKey {
        UuidKey(self.keys.hash_one(uuid))
    }

    pub(crate) fn get(&self, uuid: &str) -> Option<usize> {
        self.get_key(self.key(uuid))
    }

    pub(crate) fn get_key(&self, key: UuidKey) -> Option<usize> {
        self.map.get(&key).map(|&i| i as usize)
    }

    pub(crate) fn contains(&self, uuid: &str) -> bool {
        self.get(uuid).is_some()
    }

    /// Notes that `uuid`'s line is held by message `index`. An index past `u32::MAX` (more
    /// messages than any file under the session cap holds) is not noted: no rewind to it
    /// is found.
    pub(crate) fn insert(&mut self, uuid: &str, index: usize) {
        let key = self.key(uuid);
        self.insert_key(key, index);
    }

    pub(crate) fn insert_key(&mut self, key: UuidKey, index: usize) {
        if !self.watched.is_empty() && self.watched.contains(&key) {
            self.rewritten = true;
        }
        if let Ok(index) = u32::try_from(index) {
            self.map.insert(key, index);
        }
    }

    /// Notes that `uuid`'s entry was read for good (`watched`).
    pub(crate) fn watch(&mut self, uuid: &str) {
        let key = self.key(uuid);
        self.watched.insert(key);
    }

    /// Whether a line came with a watched uuid after it was watched.
    pub(crate) fn rewritten(&self) -> bool {
        self.rewritten
    }

    /// Whether some entries were dropped (`forget_before`, `bound`).
    pub(crate) fn dropped_some(&self) -> bool {
        self.below > 0
    }

    /// Drops the entries of lines held by messages before `index`: what a follower does
    /// once a compaction makes them useless (`claude_rewind` leaves a rewind behind a
    /// compaction as recorded, found or not). Each entry is dropped once: a call that
    /// moves the cut no further costs nothing.
    pub(crate) fn forget_before(&mut self, index: usize) {
        let cut = u32::try_from(index).unwrap_or(u32::MAX);
        if cut > self.below {
            self.below = cut;
            self.map.retain(|_, i| *i >= cut);
        }
    }

    /// Keeps at most `cap` entries: past it, the entries of the oldest messages go, down
    /// to about half the cap, so that each entry is dropped once. True when some went.
    pub(crate) fn bound(&mut self, cap: usize) -> bool {
        if self.map.len() <= cap {
            return false;
        }
        let mut indices: Vec<u32> = self.map.values().copied().collect();
        // The first index of the newest half of the cap (the map is not empty: over cap).
        let oldest = (indices.len() - cap / 2).min(indices.len() - 1);
        let (_, &mut cut, _) = indices.select_nth_unstable(oldest);
        // Lines that stand for the message they hang after share its index: a cut at
        // one keeps them all, and a cut past the newest drops nothing new.
        let mut cut = cut.max(self.below.saturating_add(1));
        self.map.retain(|_, i| *i >= cut);
        if self.map.len() > cap {
            // Most lines stand for one message: they go too.
            cut = cut.saturating_add(1);
            self.map.retain(|_, i| *i >= cut);
        }
        self.below = cut;
        true
    }

    /// The bytes the index holds besides itself (its table).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        // Each bucket holds a key and an index, and one control byte.
        self.map.capacity() * (std::mem::size_of::<(UuidKey, u32)>() + 1)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_found_by_their_hash_and_hold_no_string_of_their_own() {
        let mut index = UuidIndex::default();
        let uuid = |n: usize| format!("{n:08x}-1f3a-4c2b-9d8e-{n:012x}");
        for n in 0..10_000 {
            index.insert(&uuid(n), n / 2);
        }
        assert_eq!(index.len(), 10_000);
        assert_eq!(index.get(&uuid(7_777)), Some(3_888));
        assert!(index.contains(&uuid(0)));
        assert!(!index.contains("not a line of the file"));
        index.insert(&uuid(7_777), 5);
        assert_eq!(index.get(&uuid(7_777)), Some(5));
        // 16 bytes an entry and the table's slack, not the 36 bytes of each uuid besides.
        let per_entry = index.heap_bytes() / index.len();
        assert!(per_entry <= 2 * 17, "{per_entry} bytes an entry");
        assert_eq!(std::mem::size_of::<(UuidKey, u32)>(), 16);
    }

    #[test]
    fn forgetting_drops_the_oldest_messages_lines_only() {
        let mut index = UuidIndex::default();
        let uuid = |n: usize| format!("line-{n}");
        // Two lines a message, as an answer and its attachment.
        for n in 0..1_000 {
            index.insert(&uuid(n), n / 2);
        }
        index.forget_before(100);
        assert_eq!(index.len(), 800);
        assert_eq!(index.get(&uuid(199)), None);
        assert_eq!(index.get(&uuid(200)), Some(100));
        // A cut behind the last one drops nothing.
        index.forget_before(50);
        assert_eq!(index.len(), 800);
        assert!(!index.bound(800));
        assert!(index.bound(400));
        let kept = index.len();
        assert!(
            (200..=202).contains(&kept),
            "{kept} kept of 800 bounded to 400"
        );
        assert_eq!(index.get(&uuid(999)), Some(499));
        assert_eq!(index.get(&uuid(700)), None);
        // Bounded again and again, it never holds more than the cap.
        for n in 1_000..100_000 {
            index.insert(&uuid(n), n / 2);
            index.bound(400);
            assert!(index.len() <= 401);
        }
        assert_eq!(index.get(&uuid(99_999)), Some(49_999));
        // Lines that all stand for one message are bounded too.
        for n in 0..1_000 {
            index.insert(&format!("attachment-{n}"), 60_000);
            index.bound(400);
            assert!(index.len() <= 401);
        }
    }
}
