//! `forgot`'s read of a session (issue 36, sessions of gigabytes). A Codex rollout repeats
//! its whole replacement history at every compaction, and building each copy as messages
//! was most of the time `forgot` took. Here the rollout is read as `sized_read` reads it,
//! with every message of the conversation whole (`Detail::Conversation`): each history item
//! is known by a hash of its fields and converted to its message the first time it is
//! seen, and each compaction's new history is held as the numbers of the items it kept. A
//! compaction's kept messages are built again only when asked for, one compaction at a
//! time (`KeptLists`), each with the message of the conversation it copies found as the
//! full read finds it (`codex_compaction::PromptIndex`, caught up to the compaction). What
//! is held is the conversation and each distinct item once, not every history
//! (docs/forgot.md, "Reading the file"). Any other file is read as `load_session` reads it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use super::codex_compaction::{PromptIndex, prompt_key};
use super::codex_sized::{SizeSink, SizedHistory};
use super::detail::Detail;
use super::model::{Compaction, KeptMessage, Replacement, Session, SessionFormat};
use super::sized_read::{Reading, read_sized_detail};
use super::{SessionError, load_session_chunked, with_subagents};
use crate::message::Message;

/// A session read for `forgot`, with the kept messages of its Codex compactions held once.
pub struct KeptSession {
    pub session: Session,
    /// Each history item by its number, as converted when first seen (None: skipped).
    items: Vec<Option<Message>>,
    /// Each new history as the numbers of its items, by the line of its `compacted` line.
    histories: HashMap<usize, HeldHistory>,
    /// History items read, and those converted (the ones not seen before).
    pub items_read: u64,
    pub items_converted: u64,
}

/// Keeps what `KeptSession` holds as the read goes.
#[derive(Default)]
struct KeptSink {
    items: Vec<Option<Message>>,
    histories: HashMap<usize, HeldHistory>,
}

/// A new history as the numbers of its items, 4 bytes and a bit an item (a 2 GB rollout's
/// histories name millions of items).
#[derive(Debug, Default)]
pub(super) struct HeldHistory {
    items: Vec<u32>,
    /// Bit `i`: whether `items[i]` was kept from before (else written anew).
    kept: Vec<u64>,
    /// Which of `items` is the summary.
    summary: Option<usize>,
}

impl HeldHistory {
    fn of(h: SizedHistory) -> HeldHistory {
        let mut kept = vec![0u64; h.items.len().div_ceil(64)];
        for (at, i) in h.items.iter().enumerate() {
            if i.kept
                && let Some(word) = kept.get_mut(at / 64)
            {
                *word |= 1 << (at % 64);
            }
        }
        HeldHistory {
            items: h.items.iter().map(|i| i.item).collect(),
            kept,
            summary: h.summary,
        }
    }

    /// Each item in order: its number and whether it was kept.
    fn each(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.items.iter().enumerate().map(|(at, &item)| {
            let kept = self
                .kept
                .get(at / 64)
                .is_some_and(|w| w & (1 << (at % 64)) != 0);
            (item, kept)
        })
    }
}

impl SizeSink for KeptSink {
    fn message(&mut self, _: &Message) {}

    fn item(&mut self, _: u32, m: Option<&Message>) {
        // Numbered from 0 in order: the number is the position.
        self.items.push(m.cloned());
    }

    fn history(&mut self, line: usize, h: SizedHistory) {
        self.histories.insert(line, HeldHistory::of(h));
    }
}

/// Reads the session at `path` for `forgot`: a Codex rollout with each history item held
/// once; anything else (and a rollout a line of which the sized read cannot read) as
/// `load_session` reads it.
pub fn load_session_kept(path: &Path) -> Result<KeptSession, SessionError> {
    let quiet = Reading {
        progress: &|_| {},
        cancelled: &|| false,
        accepts: &is_codex,
    };
    match read_kept(path, &quiet, Detail::Conversation)? {
        Some(read) => Ok(read),
        // Not `load_session`: its first try is the read that just gave None.
        None => Ok(KeptSession {
            session: load_session_chunked(path, &|_| {}, &|| false)?,
            items: Vec::new(),
            histories: HashMap::new(),
            items_read: 0,
            items_converted: 0,
        }),
    }
}

/// The kept read of a Codex rollout, finished as a read of `detail` is (`with_subagents`);
/// None for any other file, or when a line could not be read the sized way.
pub(super) fn read_kept(
    path: &Path,
    reading: &Reading,
    detail: Detail,
) -> Result<Option<KeptSession>, SessionError> {
    let sink = Rc::new(RefCell::new(KeptSink::default()));
    let Some((read, warnings)) =
        read_sized_detail(path, sink.clone(), Detail::Conversation, reading)?
    else {
        return Ok(None);
    };
    let mut session = read.session;
    session.warnings.extend(warnings);
    let session = with_subagents(path, session, detail)?;
    let sink = std::mem::take(&mut *sink.borrow_mut());
    Ok(Some(KeptSession {
        session,
        items: sink.items,
        histories: sink.histories,
        items_read: read.items_read,
        items_converted: read.items_converted,
    }))
}

pub(super) fn is_codex(format: SessionFormat) -> bool {
    matches!(format, SessionFormat::Codex | SessionFormat::CodexLegacy)
}

impl KeptSession {
    /// The new history of compaction `c`, when the read counted it instead of holding it.
    pub(super) fn history_of(&self, c: &Compaction) -> Option<&HeldHistory> {
        c.counted.and(self.histories.get(&c.line))
    }

    /// History item `i`'s message (None: skipped, or no such item).
    fn item(&self, i: u32) -> Option<&Message> {
        self.items.get(i as usize).and_then(Option::as_ref)
    }

    /// Compaction `k`'s whole new history as the full read holds it in
    /// `Compaction::replacement` (the kept messages themselves are `KeptLists::kept`'s).
    pub fn replacement(&self, k: usize) -> Option<Replacement> {
        let c = self.session.compactions.get(k)?;
        let Some(history) = self.history_of(c) else {
            return c.replacement.clone();
        };
        let mut order = Vec::with_capacity(history.items.len());
        let mut anew = Vec::new();
        let mut kept = 0;
        let mut summary = None;
        for (at, (item, is_kept)) in history.each().enumerate() {
            // The same items `kept` skips, skipped here, so `Ok(n)` is its n-th message.
            let Some(m) = self.item(item) else {
                continue;
            };
            if history.summary == Some(at) {
                summary = Some(order.len());
            }
            if is_kept {
                order.push(Ok(kept));
                kept += 1;
            } else {
                order.push(Err(anew.len()));
                anew.push(m.clone());
            }
        }
        Some(Replacement {
            order,
            anew,
            reinjected: c.counted.map_or(0, |n| n.reinjected),
            summary,
        })
    }

    /// The kept messages of each compaction, asked for in order.
    pub fn kept_lists(&self) -> KeptLists<'_> {
        KeptLists {
            read: self,
            prompts: PromptIndex::default(),
            keys: vec![None; self.items.len()],
            found: vec![None; self.items.len()],
            keyed: 0,
        }
    }
}

/// Each compaction's kept messages, built when asked for.
pub struct KeptLists<'a> {
    read: &'a KeptSession,
    /// The typed prompts as the reader had indexed them at the compaction last asked for.
    prompts: PromptIndex,
    /// Each item's prompt key, hashed the first time a compaction keeps it (every
    /// compaction after keeps most of the same items again).
    keys: Vec<Option<Option<u64>>>,
    /// How many items had their key hashed.
    pub keyed: u64,
    /// Each item's last comparison with a typed message: that message's number and whether
    /// it was the same (the same pair gives the same answer; equal is a walk of both).
    found: Vec<Option<(usize, bool)>>,
}

impl KeptLists<'_> {
    /// What compaction `k` kept, as the full read holds it in `Compaction::kept`. Asked for
    /// in the order of the compactions (each finds its messages' sources among the
    /// messages before it, as the reader did when it reached it).
    pub fn kept(&mut self, k: usize) -> Option<Vec<KeptMessage>> {
        let s = &self.read.session;
        let c = s.compactions.get(k)?;
        // A history the read counted instead of holding: its items are held here.
        let Some(history) = self.read.history_of(c) else {
            return c.kept.clone();
        };
        self.prompts.catch_up_to(s, c.at);
        let mut kept = Vec::with_capacity(history.items.len());
        for i in history.each().filter(|&(_, kept)| kept).map(|(i, _)| i) {
            let Some(m) = self.read.item(i) else {
                continue;
            };
            let key = match self.keys.get(i as usize).copied().flatten() {
                Some(key) => key,
                None => {
                    let key = prompt_key(m);
                    self.keyed += 1;
                    if let Some(slot) = self.keys.get_mut(i as usize) {
                        *slot = Some(key);
                    }
                    key
                }
            };
            // Fingerprinted and keyed once here, so every copy carries both (`forgot`'s
            // analysis finds what it derived from the message by the one and the message
            // among those before the compaction by the other).
            m.fingerprint();
            m.text_key();
            let from = match (self.prompts.candidate(key), self.found.get(i as usize)) {
                (Some(at), Some(&Some((was, same)))) if was == at => same.then_some(at),
                (Some(at), _) => {
                    let from = self.prompts.find_keyed(s, 0, key, m);
                    if let Some(slot) = self.found.get_mut(i as usize) {
                        *slot = Some((at, from.is_some()));
                    }
                    from
                }
                (None, _) => None,
            };
            kept.push(KeptMessage {
                from,
                message: m.clone(),
            });
        }
        Some(kept)
    }
}

#[cfg(test)]
#[path = "kept_read_tests.rs"]
mod tests;
