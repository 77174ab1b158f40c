//! Each pane and each covering view is one module: its state, its keys and its drawing
//! (docs/architecture.md, "Modules", the `tui/` row). So the workbench draws in three places
//! only: `tui/draw/` (the pieces every drawing shares, reading nothing of `App`),
//! `tui/screen/` (where each pane goes, the status bar, the hint line and the gauge) and a
//! `draw.rs` (or a `draw/` folder) under `tui/app/`, beside the state it draws. A pane drawn
//! anywhere else, away from its state, fails here.

use std::collections::BTreeSet;

use super::rust_text::{code_only, without_test_modules};
use super::{files, read, relative};

const TUI: &str = "crates/tui/src/tui";

/// What puts cells on the terminal: a widget, or the cursor.
const DRAWS: [&str; 3] = [
    "render_widget(",
    "render_stateful_widget(",
    "set_cursor_position(",
];

/// The screen's own files: the composition, the status bar and hint line, the gauge.
const SCREEN_FILES: [&str; 3] = ["gauge.rs", "mod.rs", "status.rs"];

/// Where a file that draws may be, given its path under `tui/`.
fn may_draw(under_tui: &str) -> bool {
    let parts: Vec<&str> = under_tui.split('/').collect();
    match parts.first() {
        Some(&"draw") | Some(&"screen") => true,
        Some(&"app") => parts[1..].iter().any(|p| *p == "draw" || *p == "draw.rs"),
        _ => false,
    }
}

#[test]
fn every_drawing_sits_beside_its_state_or_in_the_screen() {
    let mut astray = Vec::new();
    let mut drawing = 0;
    for path in files(TUI, &[".rs"]) {
        let rel = relative(&path);
        let under = rel.trim_start_matches(TUI).trim_start_matches('/');
        let code = without_test_modules(&code_only(&read(&rel)));
        if !DRAWS.iter().any(|d| code.contains(d)) {
            continue;
        }
        drawing += 1;
        if !may_draw(under) {
            astray.push(rel);
        }
    }
    // The panes, the covering views, the screen and the shared pieces: a count far below
    // this means the needles stopped matching, not that the rule holds.
    assert!(drawing >= 20, "only {drawing} drawing files found");
    assert!(
        astray.is_empty(),
        "drawing away from its state (put it in app/<pane>/draw.rs, docs/architecture.md):\n{}",
        astray.join("\n")
    );
}

#[test]
fn the_screen_holds_only_its_composition() {
    let found: BTreeSet<String> = files(&format!("{TUI}/screen"), &[".rs"])
        .iter()
        .map(|p| {
            relative(p)
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let expected: BTreeSet<String> = SCREEN_FILES.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        found, expected,
        "a pane's drawing goes beside its state, in app/<pane>/draw.rs (docs/architecture.md)"
    );
}

#[test]
fn the_rule_tells_a_pane_beside_its_state_from_one_away_from_it() {
    for ok in [
        "app/events/draw.rs",
        "app/sessions/draw/opened.rs",
        "app/conversation/draw/msglist.rs",
        "screen/status.rs",
        "draw/plot.rs",
    ] {
        assert!(may_draw(ok), "{ok}");
    }
    for astray in [
        "panes/events.rs",
        "app/events.rs",
        "app/drawing.rs",
        "sessions/view.rs",
    ] {
        assert!(!may_draw(astray), "{astray}");
    }
}
