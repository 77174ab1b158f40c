//! The messages before a compaction, indexed so that each message the compaction kept is
//! found in constant time (issue 36: a Codex rollout keeps hundreds of prompts at each of
//! thousands of compactions, and a search of the whole history for each was the square of
//! that). Finds exactly what a search from the start would: the first message with the
//! kept one's number, or, where either has no number, the first equal message.

use std::collections::HashMap;

use super::keyed::Keyed;
use super::parts::Numbered;
use crate::message::Message;

/// A message's key (`Message::text_key`: its role and texts; equal messages have equal
/// keys), computed once per message and kept by its copies: every message before every
/// compaction is keyed (issue 36).
fn key(m: &Message) -> u64 {
    m.text_key()
}

pub(super) struct BeforeIndex<'a> {
    before: &'a [Numbered],
    /// The first position of each message number.
    by_number: HashMap<usize, usize, Keyed>,
    /// The first and the last position of the messages of each key; `next` links each
    /// position to the next one of the same key, so the positions of a key are walked in
    /// order without a list of their own (a compaction's thousands of kept prompts each
    /// had one, allocated again at every compaction).
    by_key: HashMap<u64, (usize, usize), Keyed>,
    next: Vec<usize>,
}

/// No next position.
const END: usize = usize::MAX;

impl<'a> BeforeIndex<'a> {
    pub fn new(before: &'a [Numbered]) -> BeforeIndex<'a> {
        let mut by_number = HashMap::with_capacity_and_hasher(before.len(), Keyed::default());
        let mut by_key: HashMap<u64, (usize, usize), Keyed> =
            HashMap::with_capacity_and_hasher(before.len(), Keyed::default());
        let mut next = vec![END; before.len()];
        for (i, b) in before.iter().enumerate() {
            if let Some(n) = b.number {
                by_number.entry(n).or_insert(i);
            }
            by_key
                .entry(key(&b.message))
                .and_modify(|(_, last)| {
                    next[*last] = i;
                    *last = i;
                })
                .or_insert((i, i));
        }
        BeforeIndex {
            before,
            by_number,
            by_key,
            next,
        }
    }

    /// The positions of the messages keyed `k`, in order.
    fn keyed(&self, k: u64) -> impl Iterator<Item = usize> + '_ {
        let first = self.by_key.get(&k).map_or(END, |&(first, _)| first);
        std::iter::successors((first != END).then_some(first), |&i| {
            self.next.get(i).copied().filter(|&n| n != END)
        })
    }

    /// The first position whose message is `m` (by `from`, its number, when both have one):
    /// `before.iter().position(|b| match (from, b.number) { (Some(f), Some(n)) => f == n,
    /// _ => b.message == *m })`.
    pub fn find(&self, from: Option<usize>, m: &Message) -> Option<usize> {
        let by_number = from.and_then(|f| self.by_number.get(&f).copied());
        let by_message = self.keyed(key(m)).find(|&i| {
            let b = &self.before[i];
            // Equal fingerprints are the same message, without walking both.
            (from.is_none() || b.number.is_none())
                && (b.message.fingerprint() == m.fingerprint() || b.message == *m)
        });
        match (by_number, by_message) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The first position whose message equals `m`, whatever its number.
    pub fn find_equal(&self, m: &Message) -> Option<usize> {
        self.find(None, m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_search_from_the_start_finds() {
        let m = |t: &str| Message::user_text(t);
        let before = vec![
            Numbered::new(None, m("a")),
            Numbered::new(Some(4), m("b")),
            Numbered::new(Some(5), m("a")),
            Numbered::new(None, m("b")),
            Numbered::new(Some(4), m("c")),
        ];
        let index = BeforeIndex::new(&before);
        let search = |from: Option<usize>, msg: &Message| {
            before.iter().position(|b| match (from, b.number) {
                (Some(f), Some(n)) => f == n,
                _ => b.message == *msg,
            })
        };
        for from in [None, Some(4), Some(5), Some(9)] {
            for t in ["a", "b", "c", "d"] {
                assert_eq!(index.find(from, &m(t)), search(from, &m(t)), "{from:?} {t}");
            }
        }
    }
}
