//! guarded's `snip_compact`. The cut starts where s08's does (head 3, tail 47) and then
//! both cut points move, by tool ids, until no kept `tool_result` answers a cut `tool_use`
//! and no kept `tool_use` lost a result: the lesson looks only at one neighbour at each
//! end. What is cut is appended to the archive, one message per line with its original
//! index, before it leaves the history; the marker says which messages and where:
//! `[{N} messages ({first}-{last}) archived in .transcripts/archive.jsonl]`.
//!
//! Original indices count the messages since the history's first message as if nothing
//! had been snipped: an earlier marker stands for the N messages it archived. A summary
//! starts a new history, and so a new count.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::compact::config::PipelineConfig;
use crate::compact::markers::Marker;
use crate::compact::report::{Change, Stage, StageReport};
use crate::compact::s08::snip::{cut, no_cut_reason};
use crate::compact::unit::SizeUnit;
use crate::message::{Message, block_tool_id};
use crate::pyrepr::ascii_json_map;
use crate::store::{ARCHIVE_PATH, Store, StoreError};

/// The original indices a guarded marker stands for, if `m` is one.
fn marker_range(m: &Message) -> Option<(usize, usize)> {
    Marker::archived_range(m.text()?)
}

/// Per message, the original indices it stands for (one, or a marker's range).
fn original_ranges(messages: &[Message]) -> Vec<(usize, usize)> {
    let mut next = 0;
    messages
        .iter()
        .map(|m| {
            let n = marker_range(m).map_or(1, |(a, b)| b - a + 1);
            let range = (next, next + n - 1);
            next += n;
            range
        })
        .collect()
}

/// Moves `head_end` forward and `tail_start` back until no tool id has a block both inside
/// the cut `head_end..tail_start` and outside it, and no id has blocks on both sides of it
/// (the marker would sit between a use and its results). Returns bounds with `head_end >=
/// tail_start` when nothing can be cut.
pub fn pair_safe_bounds(
    messages: &[Message],
    mut head_end: usize,
    mut tail_start: usize,
) -> (usize, usize) {
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for id in m.blocks().iter().filter_map(block_tool_id) {
            positions.entry(id).or_default().push(i);
        }
    }
    while head_end < tail_start {
        let (mut h, mut t) = (head_end, tail_start);
        for list in positions.values() {
            let head = list.iter().any(|&i| i < head_end);
            let tail = list.iter().rev().find(|&&i| i >= tail_start);
            let mut inside = list
                .iter()
                .filter(|&&i| (head_end..tail_start).contains(&i));
            let first_inside = inside.next().copied();
            let last_inside = inside.next_back().copied().or(first_inside);
            match (first_inside, last_inside) {
                (Some(first), Some(last)) => {
                    if head {
                        h = h.max(last + 1);
                    }
                    if tail.is_some() {
                        t = t.min(first);
                    }
                }
                _ => {
                    if let (true, Some(&last_tail)) = (head, tail) {
                        h = h.max(last_tail + 1);
                    }
                }
            }
        }
        if (h, t) == (head_end, tail_start) {
            break;
        }
        (head_end, tail_start) = (h, t);
    }
    (head_end, tail_start)
}

/// The archive lines for the cut: every message but earlier markers (their messages are in
/// the archive already), each with its original index.
fn archive_lines(messages: &[Message], ranges: &[(usize, usize)], cut: (usize, usize)) -> String {
    let mut out = String::new();
    for i in cut.0..cut.1 {
        if marker_range(&messages[i]).is_some() {
            continue;
        }
        let mut line = Map::new();
        line.insert("index".into(), json!(ranges[i].0));
        line.insert(
            "message".into(),
            Value::Object(messages[i].as_map().clone()),
        );
        out.push_str(&ascii_json_map(&line));
        out.push('\n');
    }
    out
}

/// Snips like s08 but by ids, archiving the cut first; see the module comment.
pub fn snip_to_archive(
    messages: &mut Vec<Message>,
    store: &Store,
    cfg: &PipelineConfig,
) -> Result<StageReport, StoreError> {
    let unit = SizeUnit::Chars;
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::SnipCompact, unit.measure(messages), count);
    if count <= cfg.snip_max_messages {
        report.reason = no_cut_reason(count, cfg);
        return Ok(report);
    }
    let keep_tail = cfg.snip_max_messages.saturating_sub(cfg.snip_keep_head);
    let start = (
        cfg.snip_keep_head.min(count),
        count.saturating_sub(keep_tail),
    );
    let (head_end, tail_start) = pair_safe_bounds(messages, start.0, start.1);
    if head_end >= tail_start {
        report.reason = no_cut_reason(count, cfg);
        return Ok(report);
    }
    if tail_start - head_end == 1 && marker_range(&messages[head_end]).is_some() {
        report.reason = format!(
            "{count} messages > {}, but the one message to cut is already an archive marker",
            cfg.snip_max_messages
        );
        return Ok(report);
    }
    let ranges = original_ranges(messages);
    let lines = archive_lines(messages, &ranges, (head_end, tail_start));
    if !lines.is_empty() {
        report.files_written.push(store.append_archive(&lines)?);
    }
    let (first, last) = (ranges[head_end].0, ranges[tail_start - 1].1);
    cut(
        messages,
        &mut report,
        cfg,
        (head_end, tail_start),
        Marker::ArchivedIn {
            first,
            last,
            path: ARCHIVE_PATH,
        }
        .write(),
        Change::Archived {
            head_end,
            tail_start,
            removed: tail_start - head_end,
            path: ARCHIVE_PATH.to_string(),
        },
    );
    report.size_after = unit.measure(messages);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{block, tool_pairing_error};

    fn plain(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect()
    }

    fn uses(ids: &[&str]) -> Message {
        Message::assistant_blocks(
            ids.iter()
                .map(|i| block::tool_use(*i, "bash", json!({})))
                .collect(),
        )
    }

    fn results(ids: &[&str]) -> Message {
        Message::user_blocks(ids.iter().map(|i| block::tool_result(*i, "out")).collect())
    }

    #[test]
    fn cut_points_move_by_ids_not_by_neighbours() {
        // The tail starts at a results message answering a use two messages back (a text
        // message sits between): the lesson's one look would cut the use away.
        let mut h = plain(10);
        h[5] = uses(&["a"]);
        h[6] = Message::assistant_blocks(vec![block::text("thinking")]);
        h[7] = results(&["a"]);
        assert_eq!(pair_safe_bounds(&h, 3, 7), (3, 5));
        // The head ends with a use whose results are two messages on.
        let mut h = plain(10);
        h[2] = uses(&["b"]);
        h[4] = results(&["b"]);
        assert_eq!(pair_safe_bounds(&h, 3, 8), (5, 8));
        // Nothing can be cut when the pairs span the whole middle.
        let mut h = plain(6);
        h[2] = uses(&["c"]);
        h[4] = results(&["c"]);
        let (a, b) = pair_safe_bounds(&h, 3, 4);
        assert!(a >= b);
    }

    #[test]
    fn the_cut_goes_to_the_archive_with_original_indices_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig::default();
        let mut h = plain(53);
        let r = snip_to_archive(&mut h, &store, &cfg).unwrap();
        assert_eq!(h.len(), 51);
        assert_eq!(
            h[3].text(),
            Some("[3 messages (3-5) archived in .transcripts/archive.jsonl]")
        );
        let archive = std::fs::read_to_string(dir.path().join(ARCHIVE_PATH)).unwrap();
        assert_eq!(
            archive,
            "{\"index\": 3, \"message\": {\"role\": \"user\", \"content\": \"m3\"}}\n\
             {\"index\": 4, \"message\": {\"role\": \"user\", \"content\": \"m4\"}}\n\
             {\"index\": 5, \"message\": {\"role\": \"user\", \"content\": \"m5\"}}\n"
        );
        assert!(matches!(
            r.changes[..],
            [Change::Archived { removed: 3, .. }]
        ));
        // Two more messages: the old marker and the next ones are cut again; the marker
        // stands for its three, which are not archived twice.
        h.push(Message::user_text("m53"));
        h.push(Message::user_text("m54"));
        snip_to_archive(&mut h, &store, &cfg).unwrap();
        assert_eq!(
            h[3].text(),
            Some("[5 messages (3-7) archived in .transcripts/archive.jsonl]")
        );
        let archive = std::fs::read_to_string(dir.path().join(ARCHIVE_PATH)).unwrap();
        assert_eq!(archive.lines().count(), 5);
        assert!(
            archive.ends_with(
                "{\"index\": 7, \"message\": {\"role\": \"user\", \"content\": \"m7\"}}\n"
            )
        );
    }

    #[test]
    fn fifty_messages_stay_and_fifty_one_archive_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let cfg = PipelineConfig::default();
        let mut h = plain(50);
        let r = snip_to_archive(&mut h, &store, &cfg).unwrap();
        assert_eq!((r.changed, r.reason.as_str()), (false, "50 messages <= 50"));
        assert!(!dir.path().join(ARCHIVE_PATH).exists());
        let mut h = plain(51);
        snip_to_archive(&mut h, &store, &cfg).unwrap();
        assert_eq!(h.len(), 51);
        assert_eq!(
            h[3].text(),
            Some("[1 messages (3-3) archived in .transcripts/archive.jsonl]")
        );
        // The next call would cut that lone marker again: nothing changes.
        let r = snip_to_archive(&mut h, &store, &cfg).unwrap();
        assert!(!r.changed);
        assert!(
            r.reason.ends_with("already an archive marker"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn a_snipped_agent_history_keeps_its_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut h = vec![Message::user_text("go")];
        for i in 0..30 {
            let id = format!("t{i}");
            h.push(uses(&[&id]));
            h.push(results(&[&id]));
        }
        snip_to_archive(&mut h, &store, &PipelineConfig::default()).unwrap();
        assert_eq!(tool_pairing_error(&h), None);
        assert!(h.len() < 61);
    }
}
