use super::*;
use crate::session::model::{CompactionKind, SessionFormat, Summary};

fn view() -> LiveView {
    let mut state = LiveState::default();
    let (view, request) = state.start(Chosen {
        path: "/p/s.jsonl".into(),
        why: "named".into(),
        scope: None,
    });
    assert_eq!(request.id(), 1);
    view
}

fn skipped(line: usize) -> WatchEvent {
    WatchEvent::Item {
        item: LiveItem::Skipped {
            line,
            what: "unknown type x".into(),
        },
        caught_up: true,
        offset: 0,
        end: 0,
    }
}

fn compaction(index: usize, update: bool, summary: Summary) -> WatchEvent {
    let mut c = Compaction::new(CompactionKind::Full, 0, 3);
    c.summary = summary;
    WatchEvent::Item {
        item: LiveItem::Compaction {
            index,
            compaction: Box::new(c),
            update,
            at: 0,
        },
        caught_up: true,
        offset: 0,
        end: 0,
    }
}

#[test]
fn the_rows_kept_are_bounded_and_the_dropped_ones_counted() {
    let mut v = view();
    for line in 0..MAX_ROWS + 5 {
        v.fold(skipped(line));
    }
    assert_eq!(v.rows().len(), MAX_ROWS);
    assert_eq!(v.dropped(), 5);
    assert!(matches!(
        v.rows().front(),
        Some(LiveRow::Skipped { line: 5, .. })
    ));
}

#[test]
fn a_compaction_update_changes_its_row_even_after_older_rows_were_dropped() {
    let mut v = view();
    assert!(
        v.fold(compaction(0, false, Summary::NotRecorded)),
        "a new one rings"
    );
    for line in 0..10 {
        v.fold(skipped(line));
    }
    assert!(!v.fold(compaction(0, true, Summary::Text("the summary".into()))));
    let rows: Vec<&LiveRow> = v
        .rows()
        .iter()
        .filter(|r| matches!(r, LiveRow::Compaction { .. }))
        .collect();
    assert_eq!(rows.len(), 1);
    assert!(matches!(rows[0], LiveRow::Compaction { compaction, .. }
        if compaction.summary == Summary::Text("the summary".into())));
}

#[test]
fn the_selection_stays_on_its_row_as_rows_arrive_and_the_end_follows_the_tail() {
    let mut v = view();
    for line in 0..10 {
        v.fold(skipped(line));
    }
    assert!(v.at_tail());
    assert_eq!(v.selected(), Some(9));
    v.move_by(-3);
    assert_eq!(v.selected(), Some(6));
    v.fold(skipped(10));
    assert_eq!(
        v.selected(),
        Some(6),
        "a new row does not move the selection"
    );
    v.move_by(100);
    assert!(v.at_tail());
    assert_eq!(v.selected(), Some(10));
}

fn call(context_tokens: u64) -> WatchEvent {
    WatchEvent::Item {
        item: LiveItem::Call(LiveCall {
            line: 1,
            timestamp: None,
            model: Some("claude-sonnet-4-6".into()),
            usage: crate::session::model::RecordedUsage::default(),
            context_tokens,
            context_window: None,
            summary: false,
        }),
        caught_up: true,
        offset: 0,
        // The follower has read the whole file: a warning reads up to its end.
        end: u64::MAX,
    }
}

#[test]
fn near_the_threshold_the_follower_reads_the_facts_at_risk_and_the_view_shows_them_until_a_compaction()
 {
    use super::follower::RiskScout;
    use crate::forgot::at_risk::risk_lines;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/forgot/eval_claude.jsonl");
    let mut scout = RiskScout::new(Some(20_000));
    let following = WatchEvent::Following {
        path: path.clone(),
        why: "named".into(),
        waiting: "polling".into(),
    };
    assert!(scout.see(&following).is_none());
    let caught_up = WatchEvent::CaughtUp {
        path: path.clone(),
        format: Some(SessionFormat::ClaudeCode),
        lines: 0,
        bytes: 0,
        skipped: 0,
        sidechain_lines: 0,
        unknown_format: false,
    };
    // Far from Claude Code's 167,000 on a 200,000 window: nothing read.
    assert!(scout.see(&caught_up).is_none());
    assert!(scout.see(&call(100_000)).is_none());
    let risk = scout.see(&call(150_000)).expect("within 20,000 of 167,000");
    assert!(
        risk.top.iter().any(|f| f.text.contains("E501")),
        "{risk:#?}"
    );
    assert!(risk.claude_compact.starts_with("/compact Keep: "));
    assert!(scout.see(&call(151_000)).is_none(), "said a call ago");

    let mut v = view();
    v.fold(following);
    v.fold(caught_up);
    v.fold(call(150_000));
    assert!(v.at_risk().is_none());
    v.set_at_risk(risk.clone());
    // The view's list is `watch --text`'s, with the view's own headroom figure.
    let lines = risk_lines(v.at_risk().unwrap(), v.headroom().tokens_left);
    assert!(
        lines[0].contains("17,000 tokens from the threshold"),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Claude Code: /compact Keep:"))
    );
    v.fold(compaction(0, false, Summary::NotRecorded));
    assert!(
        v.at_risk().is_none(),
        "a compaction made: the list is stale"
    );
}
