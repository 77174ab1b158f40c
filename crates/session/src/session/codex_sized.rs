//! A Codex `compacted` line read for a breakdown of every call (`sized_read`, issue 36):
//! its replacement history is read item by item into the few borrowed fields
//! `codex_counted` reads (`LiteItem`), and each item is known by a key hashed from those
//! fields once. An item seen before (Codex repeats the whole history at every compaction)
//! is only named by its number; an item not seen before is converted to its message, as
//! `codex_compaction::read_history` converts it, and handed to the sink to be sized. The
//! line's payload gets the counts `codex_counted` puts there, so the reader takes it as a
//! numbers-only read does (docs/pipeline.md, "Reading sessions").

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use super::codex_compaction::user_item_message;
use super::codex_counted::{
    COUNTED_KEY, ItemRead, Key, Listed, LiteItem, Retained, Sorted, count, sort_item, text_key,
};
use super::codex_items::{Item, convert_item};
use crate::message::Message;

/// What hears a sized read.
pub trait SizeSink {
    /// A message the session's list takes, in order (its index is how many came before).
    fn message(&mut self, m: &Message);
    /// A replacement history item seen for the first time, numbered from 0 in order; None
    /// when it is no message of a history (skipped).
    fn item(&mut self, number: u32, m: Option<&Message>);
    /// The new history of the compaction recorded on line `line`.
    fn history(&mut self, line: usize, h: SizedHistory);
}

/// A compaction's new history as the numbers of its items, in the order the model saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizedHistory {
    pub items: Vec<HistoryItem>,
    /// Which of `items` is the summary.
    pub summary: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryItem {
    pub item: u32,
    /// Kept from before (else written anew: re-injected context or the summary).
    pub kept: bool,
}

/// The items seen so far by their key, each with its number.
#[derive(Debug, Default)]
pub(super) struct ItemKeys {
    seen: HashMap<(u64, u64), u32>,
    /// Items read (each hashed once) and items converted: the work a read does.
    pub read: u64,
    pub converted: u64,
}

/// The text of the encrypted summary's stand-in (`codex_compaction::read_history`'s).
const ENCRYPTED_TEXT: &str = "[compaction summary: encrypted by the provider]";

/// One line: counted and sized when it is an object whose payload is an object, with the
/// history handed to `sink` once the whole line is read; None when this parser cannot
/// read it its way (the caller parses it whole).
pub(super) fn parse_line(
    line: &str,
    number: usize,
    keys: &mut ItemKeys,
    sink: &mut dyn SizeSink,
) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(line);
    let seed = LineSeed { keys, sink };
    let (map, history) = seed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    if let Some(h) = history {
        sink.history(number, h);
    }
    Some(Value::Object(map))
}

/// Feeds every field `convert_item` reads into `h`.
fn hash_item(it: &LiteItem, h: &mut DefaultHasher) {
    it.kind.hash(h);
    it.role.hash(h);
    it.id.hash(h);
    it.marked.hash(h);
    match &it.content {
        None => 0u8.hash(h),
        Some(parts) => {
            1u8.hash(h);
            parts.len().hash(h);
            for p in parts {
                match p {
                    None => 0u8.hash(h),
                    Some(p) => {
                        1u8.hash(h);
                        p.kind.hash(h);
                        p.text.hash(h);
                        p.refusal.hash(h);
                        p.image_url.hash(h);
                    }
                }
            }
        }
    }
    hash_map(&it.other, h);
}

fn hash_map(m: &Map<String, Value>, h: &mut DefaultHasher) {
    m.len().hash(h);
    for (k, v) in m {
        k.hash(h);
        hash_value(v, h);
    }
}

fn hash_value(v: &Value, h: &mut DefaultHasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(m) => {
            5u8.hash(h);
            hash_map(m, h);
        }
    }
}

/// The item's key: two hashes of its fields under different seeds (128 bits, so two
/// different items never share one in practice).
fn item_key(it: &LiteItem) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    hash_item(it, &mut a);
    let mut b = DefaultHasher::new();
    0x5eed_u32.hash(&mut b);
    hash_item(it, &mut b);
    (a.finish(), b.finish())
}

/// The item as an object of the fields `convert_item` reads (`codex_counted::sort_other`'s
/// rebuild, for any kind).
fn lite_map(it: &LiteItem) -> Map<String, Value> {
    let mut o = it.other.clone();
    let text = |v: &Option<std::borrow::Cow<str>>| v.as_ref().map(|s| Value::String(s.to_string()));
    if let Some(k) = text(&it.kind) {
        o.insert("type".into(), k);
    }
    if let Some(id) = text(&it.id) {
        o.insert("id".into(), id);
    }
    if let Some(role) = text(&it.role) {
        o.insert("role".into(), role);
    }
    if let Some(parts) = &it.content {
        let parts = parts
            .iter()
            .map(|p| match p {
                None => Value::Null,
                Some(p) => {
                    let mut m = Map::new();
                    let fields = [
                        ("type", &p.kind),
                        ("text", &p.text),
                        ("refusal", &p.refusal),
                        ("image_url", &p.image_url),
                    ];
                    for (k, v) in fields {
                        if let Some(v) = text(v) {
                            m.insert(k.into(), v);
                        }
                    }
                    Value::Object(m)
                }
            })
            .collect();
        o.insert("content".into(), Value::Array(parts));
    }
    o
}

/// The message an item becomes in a new history (`read_history`'s), None when skipped.
fn item_message(it: &LiteItem) -> Option<Message> {
    Some(match convert_item(&lite_map(it)) {
        Item::User { content, role, .. } => user_item_message(content, role),
        Item::Assistant(blocks) => Message::assistant_blocks(blocks),
        Item::ToolResult(block) => Message::user_blocks(vec![block]),
        Item::EncryptedSummary => Message::user_text(ENCRYPTED_TEXT),
        Item::Skip(_) => return None,
    })
}

/// The new history in order, as `read_history` orders it: every item but the skipped
/// ones and those that are no object, the last summary marked, each kept or written anew.
fn history_of(
    items: &[(Sorted, Option<u32>)],
    retained: Option<&[bool]>,
    summary: &str,
) -> SizedHistory {
    let summary_key = (!summary.is_empty()).then(|| text_key(summary));
    let mut h = SizedHistory::default();
    for (i, (sorted, number)) in items.iter().enumerate() {
        let Some(item) = *number else { continue };
        let retained = retained.map(|r| r.get(i).copied().unwrap_or(false));
        let kept = match sorted {
            Sorted::NotObject | Sorted::Skip(_) => continue,
            Sorted::EncryptedSummary => {
                h.summary = Some(h.items.len());
                false
            }
            Sorted::Other => retained.unwrap_or(true),
            Sorted::User {
                text,
                injected,
                marked,
            } => {
                if *marked || (summary_key.is_some() && *text == summary_key) {
                    h.summary = Some(h.items.len());
                    false
                } else {
                    retained.unwrap_or(!injected)
                }
            }
        };
        h.items.push(HistoryItem { item, kept });
    }
    h
}

struct LineSeed<'k> {
    keys: &'k mut ItemKeys,
    sink: &'k mut dyn SizeSink,
}

type LineRead = (Map<String, Value>, Option<SizedHistory>);

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = LineRead;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<LineRead, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = LineRead;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<LineRead, A::Error> {
        let mut out = Map::new();
        let mut history = None;
        while let Some(Key(k)) = m.next_key::<Key>()? {
            let v = if k == "payload" {
                let (payload, h) = m.next_value_seed(PayloadSeed {
                    keys: &mut *self.keys,
                    sink: &mut *self.sink,
                })?;
                // The last of repeated keys wins, as in a parsed map.
                history = h;
                Value::Object(payload)
            } else {
                m.next_value()?
            };
            out.insert(k.into_owned(), v);
        }
        Ok((out, history))
    }
}

struct PayloadSeed<'k> {
    keys: &'k mut ItemKeys,
    sink: &'k mut dyn SizeSink,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = LineRead;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<LineRead, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PayloadSeed<'_> {
    type Value = LineRead;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<LineRead, A::Error> {
        let mut out = Map::new();
        let mut items: Option<Vec<(Sorted, Option<u32>)>> = None;
        let mut retained: Option<Vec<bool>> = None;
        while let Some(Key(k)) = m.next_key::<Key>()? {
            match k.as_ref() {
                "replacement_history" => {
                    items = m
                        .next_value_seed(HistorySeed {
                            keys: &mut *self.keys,
                            sink: &mut *self.sink,
                        })?
                        .0;
                }
                "replacement_history_metadata" => {
                    retained = m
                        .next_value::<Listed<Retained>>()?
                        .0
                        .map(|r| r.into_iter().map(|r| r.0).collect());
                }
                _ => {
                    let v: Value = m.next_value()?;
                    out.insert(k.into_owned(), v);
                }
            }
        }
        let mut history = None;
        if let Some(items) = items {
            let summary = out.get("message").and_then(Value::as_str).unwrap_or("");
            history = Some(history_of(&items, retained.as_deref(), summary));
            let sorted = items.into_iter().map(|(s, _)| s).collect();
            out.insert(COUNTED_KEY.into(), json!(count(sorted, retained, summary)));
        }
        Ok((out, history))
    }
}

/// A history list: each item sorted and numbered (a number only for an object).
struct HistorySeed<'k> {
    keys: &'k mut ItemKeys,
    sink: &'k mut dyn SizeSink,
}

struct HistoryRead(Option<Vec<(Sorted, Option<u32>)>>);

impl<'de> DeserializeSeed<'de> for HistorySeed<'_> {
    type Value = HistoryRead;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<HistoryRead, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HistorySeed<'_> {
    type Value = HistoryRead;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_unit<E>(self) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<HistoryRead, E> {
        Ok(HistoryRead(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<HistoryRead, A::Error> {
        while m
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(HistoryRead(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<HistoryRead, A::Error> {
        let mut all = Vec::new();
        while let Some(ItemRead(item)) = s.next_element::<ItemRead>()? {
            self.keys.read += 1;
            let number = item.as_ref().map(|it| {
                let key = item_key(it);
                let next = self.keys.seen.len() as u32;
                let keys = &mut *self.keys;
                let sink = &mut *self.sink;
                *keys.seen.entry(key).or_insert_with(|| {
                    keys.converted += 1;
                    match item_message(it) {
                        Some(m) => sink.item(next, Some(&m)),
                        None => sink.item(next, None),
                    }
                    next
                })
            });
            all.push((sort_item(item), number));
        }
        Ok(HistoryRead(Some(all)))
    }
}
