//! A stage's sizes name their unit, the strategy's, and read the same wherever a stage line
//! is shown (issue 33, item 3): the events pane (`event_rows::stage_text`), step mode's
//! card and `ctxlab run` (`StageReport::summary`), the transcripts replay and the export's
//! stage events all give `StageDelta::sizes`, `96,266 -> 871 chars`.

use crate::common::tour::tour;
use ctxlab::compact::{SizeUnit, Stage, StageReport};
use ctxlab::timeline::html::{escape, page};
use ctxlab::timeline::{Source, Timeline};
use ctxlab::tui::event_rows::stage_text;

/// The tour's compact_history before call 34 (96,266 -> 871 chars) on every surface.
#[test]
fn the_tours_stage_lines_give_their_sizes_in_chars_everywhere() {
    let t = Timeline::from_events(Source::Live, 0, &tour().events);
    let html = page(&t);
    let mut seen = false;
    for st in t.steps.iter().filter(|s| s.report.changed) {
        let sizes = st.report.delta().sizes();
        assert!(sizes.ends_with(" chars"), "{sizes}");
        let line = stage_text(&st.report);
        assert!(line.contains(&sizes), "events pane: {line} lacks {sizes}");
        assert!(
            st.report.summary().contains(&sizes),
            "ctxlab run / step mode"
        );
        assert!(
            html.contains(&format!("{} · {}", st.report.stage.name(), escape(&sizes))),
            "the export's stage events lack {sizes}"
        );
        seen |= sizes == "96,266 -> 871 chars";
    }
    assert!(seen, "the tour's summary of 96,266 chars");
}

/// Under s06 the sizes are tokens: the events pane and the export say so (the export
/// said "chars" for every strategy, the pane named no unit).
#[test]
fn a_token_strategys_stage_lines_say_tokens() {
    let mut report = StageReport::unchanged(Stage::AutoCompact, 60_000, 40);
    report.changed = true;
    report.size_after = 2_500;
    report.messages_after = 2;
    report.unit = SizeUnit::Tokens;
    let line = stage_text(&report);
    assert!(line.contains("60,000 -> 2,500 tokens"), "{line}");
    let mut t = Timeline::new(Source::Live, 50_000);
    t.appended(ctxlab::message::Message::user_text("x"));
    t.stage_ran(
        report,
        Some(&[ctxlab::message::Message::user_text("summary")]),
    );
    t.request_sent(None);
    let html = page(&t);
    assert!(
        html.contains("auto_compact · 60,000 -&gt; 2,500 tokens"),
        "{html}"
    );
    assert!(!html.contains("60,000 → 2,500 chars"));
}
