//! A diff row keeps its size column whatever stage made it: `compact_history` is the
//! longest tag, and it used to push the size past the overlay's edge.

use crate::support::{key, screen, session};
use crossterm::event::KeyCode;
use ctxlab::compact::Stage;
use ctxlab::tui::app::EventKind;

/// Opens the diff of the first event of `stage` and returns the screen at `w`x`h`.
fn diff_screen(stage: Stage, w: u16, h: u16) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    crate::support::focus(&mut d.app, '2');
    d.app.update(key(KeyCode::Char('g')));
    let pos = d
        .app
        .visible_events()
        .iter()
        .position(|&i| match &d.app.events()[i].kind {
            EventKind::Stage { report, .. } => report.stage == stage && report.changed,
            _ => false,
        })
        .unwrap();
    for _ in 0..pos {
        d.app.update(key(KeyCode::Char('j')));
    }
    d.app.update(key(KeyCode::Enter));
    screen(&mut d.app, w, h)
}

/// The part of a screen row inside the diff overlay's borders.
fn overlay_part(row: &str) -> &str {
    row.split('┃').nth(1).unwrap_or(row)
}

#[test]
fn every_stage_s_diff_rows_keep_their_size_column_at_80_and_120_columns() {
    for (w, h) in [(80, 24), (120, 40)] {
        let text = diff_screen(Stage::CompactHistory, w, h);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("compact_history ") && l.contains(" user "))
            .collect();
        assert!(
            !rows.is_empty(),
            "no compact_history diff row at {w}x{h}:\n{text}"
        );
        for row in rows {
            // The size column is the last thing before the overlay's right border.
            let inside = overlay_part(row);
            let last = inside.trim_end().rsplit(' ').next().unwrap_or("");
            assert!(
                !last.is_empty() && last.chars().all(|c| c.is_ascii_digit() || c == ','),
                "the row lost its size column at {w}x{h}: {row:?}\n{text}"
            );
        }
        let snip = diff_screen(Stage::SnipCompact, w, h);
        let marker = snip
            .lines()
            .find(|l| l.contains("[snipped 2 messages]"))
            .unwrap_or_else(|| panic!("{snip}"));
        // As before: the cause right-aligned in 8 columns, then the size.
        assert!(
            overlay_part(marker).ends_with("     snip        51"),
            "the snip marker's row keeps its size at {w}x{h}:\n{snip}"
        );
    }
}
