//! Stage rows and their detail under a strategy that does not count chars: s06 counts
//! tokens, so each row shows its sizes once, and the detail names tokens.

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
    let sizes = format!("{}->{}", report.size_before, report.size_after);
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
