//! Stage rows and their detail under a strategy that does not count chars: s06 counts
//! tokens, so each row shows its sizes once, and the detail names tokens. And each stage row
//! is tied to the timeline step it became.

use crate::support::{key, screen};
use crossterm::event::KeyCode;
use ctxlab::agent::events::AgentEvent;
use ctxlab::compact::{Pipeline, PipelineConfig, SizeUnit, Stage, Strategy};
use ctxlab::message::{Message, block};
use ctxlab::store::Store;
use ctxlab::tui::{App, Msg};
use serde_json::json;

/// A real s06 micro_compact report that replaced one older result.
fn s06_micro() -> ctxlab::compact::StageReport {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path()).dry_run();
    let pipeline = Pipeline::new(PipelineConfig::for_strategy(Strategy::S06));
    let mut h = vec![Message::user_text("go")];
    for i in 0..5 {
        let id = format!("t{i}");
        h.push(Message::assistant_blocks(vec![block::tool_use(
            &id,
            "bash",
            json!({"command": "ls"}),
        )]));
        h.push(Message::user_blocks(vec![block::tool_result(
            &id,
            "x".repeat(400),
        )]));
    }
    let report = pipeline
        .run_stage(Stage::MicroCompact, &mut h, &store)
        .unwrap();
    assert!(report.changed);
    assert_eq!(report.unit, SizeUnit::Tokens);
    report
}

#[test]
fn an_s06_stage_row_shows_its_sizes_once_and_its_detail_says_tokens() {
    let report = s06_micro();
    let sizes = report.delta().sizes();
    let mut a = App::new(
        "/workspace".into(),
        "test".into(),
        PipelineConfig::for_strategy(Strategy::S06),
        false,
    );
    a.update(Msg::Resize(400, 40));
    a.update(Msg::Agent(AgentEvent::StageRan {
        report: report.clone(),
        history: None,
    }));
    let text = screen(&mut a, 400, 40);
    let row = text
        .lines()
        .find(|l| l.contains("micro: "))
        .unwrap_or_else(|| panic!("no micro row:\n{text}"))
        .to_string();
    assert!(
        row.contains(&format!("{sizes} 2 results -> placeholder")),
        "{row}"
    );
    assert!(!row.contains("micro_compact"), "sizes printed twice: {row}");
    assert_eq!(row.matches(&sizes).count(), 1, "{row}");
    assert!(!row.contains(" tokens:"), "{row}");

    // The detail view (Enter on a row without a diff) names the strategy's unit.
    a.update(key(KeyCode::Char('2')));
    a.update(key(KeyCode::Enter));
    let text = screen(&mut a, 400, 40);
    let size_line = format!(
        "size: {} -> {} tokens",
        report.size_before, report.size_after
    );
    assert!(text.contains(&size_line), "{size_line} missing:\n{text}");
    assert!(
        !text.contains(
            format!(
                "size: {} -> {} chars",
                report.size_before, report.size_after
            )
            .as_str()
        ),
        "{text}"
    );
}

#[test]
fn every_stage_event_names_the_timeline_step_it_became() {
    // The events pane and the timeline are tied by the step each stage event records when
    // the timeline adds it, not by assuming the newest step is its own.
    let a = crate::tui_timeline::tour_app();
    let mut stages = 0;
    for e in a.events() {
        if let ctxlab::tui::app::EventKind::Stage { report, step, .. } = &e.kind {
            let step = step.expect("every stage became a step");
            let s = a.timeline().step(step).expect("the step exists");
            assert_eq!(s.report.stage, report.stage);
            assert_eq!(s.report.size_before, report.size_before);
            assert_eq!(s.report.size_after, report.size_after);
            assert_eq!(a.event_for_step(step), Some(e.seq));
            stages += 1;
        }
    }
    assert_eq!(stages, a.timeline().steps.len(), "one event per step");
}
