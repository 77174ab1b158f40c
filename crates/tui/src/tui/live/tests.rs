use super::*;
use crate::session::model::{CompactionKind, Summary};

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
        },
        caught_up: true,
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
