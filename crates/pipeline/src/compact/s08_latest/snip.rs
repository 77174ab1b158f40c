//! s08-latest's `snip_compact`: the lesson's cut with a tail one shorter than s08's (so a
//! snipped history has exactly `snip_max_messages` messages), after the whole list was
//! written to a transcript; the marker names it: `[{N} messages archived at {path}]`. If
//! the only message to cut is already such a marker whose file exists, nothing changes.

use super::transcript_text;
use crate::compact::config::PipelineConfig;
use crate::compact::markers::Marker;
use crate::compact::report::{Change, Stage, StageReport};
use crate::compact::s08::snip::{cut, lesson_bounds, no_cut_reason};
use crate::compact::unit::SizeUnit;
use crate::message::Message;
use crate::store::{Store, StoreError};

/// Whether a message is a valid archive marker: the exact shape, and its file exists.
fn is_archive_marker(m: &Message, store: &Store) -> bool {
    match m.text().and_then(Marker::parse) {
        Some(Marker::ArchivedAt { path, .. }) => store.saved_transcript(path).is_some(),
        _ => false,
    }
}

/// Snips like the lesson's newest version; `stem` names the transcript when one is written.
pub fn snip_archive(
    messages: &mut Vec<Message>,
    store: &Store,
    cfg: &PipelineConfig,
    stem: impl FnOnce() -> String,
) -> Result<StageReport, StoreError> {
    let unit = SizeUnit::JsonChars;
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::SnipCompact, unit.measure(messages), count);
    report.unit = unit;
    let keep_tail = cfg
        .snip_max_messages
        .saturating_sub(cfg.snip_keep_head)
        .saturating_sub(1);
    let Some((head_end, tail_start)) = lesson_bounds(messages, cfg, keep_tail) else {
        report.reason = no_cut_reason(count, cfg);
        return Ok(report);
    };
    if tail_start - head_end == 1 && is_archive_marker(&messages[head_end], store) {
        report.reason = format!(
            "{count} messages > {}, but the one message to cut is already an archive marker",
            cfg.snip_max_messages
        );
        return Ok(report);
    }
    let transcript = store.write_transcript_named(&stem(), &transcript_text(messages))?;
    let removed = tail_start - head_end;
    cut(
        messages,
        &mut report,
        cfg,
        (head_end, tail_start),
        Marker::ArchivedAt {
            removed,
            path: &transcript.path,
        }
        .write(),
        Change::Archived {
            head_end,
            tail_start,
            removed,
            path: transcript.path.clone(),
        },
    );
    report.files_written.push(transcript);
    report.adjusted = crate::compact::report::Adjustment::of_cut(
        (head_end, cfg.snip_keep_head),
        (count - tail_start, keep_tail),
    );
    report.size_after = unit.measure(messages);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect()
    }

    #[test]
    fn fifty_one_messages_become_fifty_and_the_transcript_holds_all() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut h = plain(51);
        let r = snip_archive(&mut h, &store, &PipelineConfig::default(), || "1".into()).unwrap();
        assert_eq!(h.len(), 50);
        assert_eq!(
            h[3].text(),
            Some("[2 messages archived at .transcripts/transcript_1.jsonl]")
        );
        assert_eq!(h[4].text(), Some("m5"));
        let t =
            std::fs::read_to_string(dir.path().join(".transcripts/transcript_1.jsonl")).unwrap();
        assert_eq!(t.lines().count(), 51);
        assert!(matches!(
            r.changes[..],
            [Change::Archived { removed: 2, .. }]
        ));
        assert_eq!(r.unit, SizeUnit::JsonChars);
        let mut fifty = plain(50);
        let r = snip_archive(&mut fifty, &store, &PipelineConfig::default(), || {
            "2".into()
        })
        .unwrap();
        assert!(!r.changed);
        assert_eq!(r.reason, "50 messages <= 50");
    }

    #[test]
    fn a_lone_valid_marker_in_the_cut_is_left_alone() {
        use crate::message::block;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let f = store.write_transcript_named("a", "x\n").unwrap();
        // 51 messages; the head grows over the results of message 2's tool_use, so the cut
        // is message 4 alone.
        let with_cut = |marker: &str| {
            let mut h = plain(51);
            h[2] = Message::assistant_blocks(vec![block::tool_use(
                "t",
                "bash",
                serde_json::json!({}),
            )]);
            h[3] = Message::user_blocks(vec![block::tool_result("t", "out")]);
            h[4] = Message::user_text(marker);
            h
        };
        let cfg = PipelineConfig::default();
        let mut h = with_cut(
            &Marker::ArchivedAt {
                removed: 9,
                path: &f.path,
            }
            .write(),
        );
        let r = snip_archive(&mut h, &store, &cfg, || "b".into()).unwrap();
        assert!(!r.changed, "{}", r.reason);
        assert!(r.reason.ends_with("already an archive marker"));
        // A marker whose file is missing is cut like any message.
        let mut gone = with_cut(
            &Marker::ArchivedAt {
                removed: 9,
                path: ".transcripts/missing.jsonl",
            }
            .write(),
        );
        let r = snip_archive(&mut gone, &store, &cfg, || "c".into()).unwrap();
        assert!(r.changed);
        assert_eq!(gone.len(), 51);
    }
}
