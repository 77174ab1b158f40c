//! What the report derives from one message, kept across compactions (issue 36). A Codex
//! rollout's compactions each keep hundreds of the same prompts, so the same message is in
//! the history before compaction after compaction; cutting it into parts and normalising
//! its text again each time was most of what `forgot` did. Here each distinct message is
//! analysed once and found again by its fingerprint (`Message::fingerprint`, kept by its
//! clones). Entries no compaction used since the last sweep are let go: a message that left
//! the kept history does not come back, and memory holds one compaction's messages, not the
//! session's (docs/forgot.md, "Reading the file").

use std::collections::HashMap;

use super::carry::normalize;
use super::keyed::Keyed;
use super::parts::{Part, PartKind, parts_of_message, tool_names};
use crate::message::Message;

/// One message as analysed: its parts (unnumbered, tool results not yet named) and what
/// is derived from them.
struct Entry {
    /// Its key in `Memo::slots`.
    key: Key,
    /// Its tool calls' names by id (`tool_names` of the message alone).
    uses: Vec<(String, String)>,
    parts: Vec<Part>,
    chars: Vec<usize>,
    /// Each part's text normalised, once a reference asks for it.
    normalized: Option<Vec<String>>,
    /// The sweep this entry was last used in.
    used: u64,
}

/// What an entry is found by: the message's fingerprint and whether it was injected (its
/// text parts are then of another kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    print: u128,
    injected: bool,
}

/// An entry, by its place: found by one look-up of its key in `Memo::id`, then read
/// without hashing again (the analysis reads each message's entry several times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryId(usize);

/// Each distinct message's analysed form, by a hash of the message.
#[derive(Default)]
pub struct Memo {
    slots: HashMap<Key, usize, Keyed>,
    /// The entries by place; a place let go by a sweep is empty until reused.
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    sweep: u64,
    analysed: u64,
    referenced: u64,
}

impl Memo {
    /// Messages cut into parts so far: each distinct message once while it stays in use.
    pub fn analysed(&self) -> u64 {
        self.analysed
    }

    /// Kept messages joined into a facts check's reference so far.
    pub fn referenced(&self) -> u64 {
        self.referenced
    }

    /// Counts `n` kept messages joined into a reference.
    pub(super) fn count_referenced(&mut self, n: usize) {
        self.referenced += n as u64;
    }

    /// The entry of `m`, analysed now if it is new.
    pub(super) fn id(&mut self, m: &Message, injected: bool) -> EntryId {
        let key = Key {
            print: m.fingerprint(),
            injected,
        };
        if let Some(&at) = self.slots.get(&key) {
            if let Some(e) = self.entries.get_mut(at).and_then(Option::as_mut) {
                e.used = self.sweep;
            }
            return EntryId(at);
        }
        self.analysed += 1;
        let parts = parts_of_message(None, m, injected, &HashMap::new());
        let entry = Entry {
            key,
            uses: tool_names(std::iter::once(m)).into_iter().collect(),
            chars: parts.iter().map(Part::chars).collect(),
            parts,
            normalized: None,
            used: self.sweep,
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.entries[at] = Some(entry);
                at
            }
            None => {
                self.entries.push(Some(entry));
                self.entries.len() - 1
            }
        };
        self.slots.insert(key, at);
        EntryId(at)
    }

    /// Adds the message's tool calls to `names`, as `tool_names` does going through it.
    pub(super) fn name_tools(&self, id: EntryId, names: &mut HashMap<String, String>) {
        for (call, name) in self.entry(id).map_or(&[][..], |e| &e.uses) {
            names.insert(call.clone(), name.clone());
        }
    }

    fn entry(&self, id: EntryId) -> Option<&Entry> {
        self.entries.get(id.0).and_then(Option::as_ref)
    }

    /// Each part's kind, its tool result's id and its size in chars.
    pub(super) fn sized(&self, id: EntryId) -> impl Iterator<Item = (&Part, usize)> {
        self.entry(id)
            .into_iter()
            .flat_map(|e| e.parts.iter().zip(e.chars.iter().copied()))
    }

    /// The parts `parts_of` gives the message numbered `number`, with `names` naming the
    /// tools of its results.
    pub(super) fn parts(
        &self,
        id: EntryId,
        number: Option<usize>,
        names: &HashMap<String, String>,
    ) -> Vec<Part> {
        let Some(e) = self.entry(id) else {
            return Vec::new();
        };
        e.parts
            .iter()
            .map(|p| {
                let mut p = p.clone();
                p.message = number;
                if matches!(p.kind, PartKind::ToolResult(_)) {
                    p.kind = PartKind::ToolResult(result_tool(&p, names).to_string());
                }
                p
            })
            .collect()
    }

    /// Normalises each part's text (`carry::normalize`), once per entry.
    pub(super) fn normalize(&mut self, id: EntryId) {
        if let Some(e) = self.entries.get_mut(id.0).and_then(Option::as_mut) {
            e.normalized
                .get_or_insert_with(|| e.parts.iter().map(|p| normalize(&p.text)).collect());
        }
    }

    /// Each part's text as `normalize` left it (nothing before it is called).
    pub(super) fn normalized(&self, id: EntryId) -> &[String] {
        self.entry(id)
            .and_then(|e| e.normalized.as_deref())
            .unwrap_or(&[])
    }

    /// Lets go of the entries not used since the last sweep (call it between compactions:
    /// entry ids do not outlive it).
    pub fn sweep(&mut self) {
        let sweep = self.sweep;
        for (at, slot) in self.entries.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|e| e.used != sweep) {
                if let Some(e) = slot.take() {
                    self.slots.remove(&e.key);
                }
                self.free.push(at);
            }
        }
        self.sweep += 1;
    }
}

/// The tool a result answers, as `parts_of` names it: by its call's id, else `unknown`.
pub(super) fn result_tool<'a>(p: &Part, names: &'a HashMap<String, String>) -> &'a str {
    p.tool_id
        .as_deref()
        .and_then(|id| names.get(id))
        .map_or("unknown", String::as_str)
}

#[cfg(test)]
#[path = "memo_tests.rs"]
mod tests;
