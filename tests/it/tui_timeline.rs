//! The workbench's timeline, diffs, viewer, full-session fates, search and export, driven
//! through `App::update` with the real tour's events (and the fake session of `support`):
//! each key path, and snapshots of the timeline, the request view, the call-to-call diff,
//! a folded diff and the wrapped viewer at 80x24 and 120x40 (the viewer's search is in
//! `tui_viewer`).

use crate::common::html::check;
use crate::common::tour::tour;
use crate::support::{key, screen, settle, tokenizer, type_text};
use crossterm::event::KeyCode;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::{Change, PipelineConfig, Stage};
use ctxlab::message::Message;
use ctxlab::timeline::html::escape;
use ctxlab::timeline::{DiffOp, Fold};
use ctxlab::tui::app::{ConvView, DiffView, Hit, Layer, Pane};
use ctxlab::tui::work::Work;
use ctxlab::tui::{App, Effect, Msg};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];
const PERSISTED: &str = ".task_outputs/tool-results/toolu_tour_035.txt";

/// The workbench after the whole tour, focus outside the input.
pub(crate) fn tour_app() -> App {
    let t = tour();
    let mut a = App::new(
        t.workspace.clone(),
        "scripted (tour)".into(),
        PipelineConfig::default(),
        false,
    );
    a.update(Msg::Resize(120, 40));
    a.update(Msg::Tokenizer(tokenizer()));
    for ev in &t.events {
        a.update(Msg::Agent(ev.clone()));
    }
    // Count tokens and let notices expire, so snapshots are stable.
    for _ in 0..80 {
        let fx = a.update(Msg::Tick);
        crate::support::settle(&mut a, fx);
    }
    a.update(key(KeyCode::Esc));
    a
}

fn masked(text: String) -> String {
    text.replace(&tour().workspace.display().to_string(), "/workspace")
}

fn snap_all(name: &str, a: &mut App) {
    for (w, h) in SIZES {
        let text = masked(screen(a, w, h));
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

fn diff(a: &App) -> &DiffView {
    match a.top_layer() {
        Some(Layer::Diff(d)) => d,
        other => panic!("no diff open: {}", other.is_some()),
    }
}

fn viewer_text(a: &App) -> String {
    match a.top_layer() {
        Some(Layer::Viewer(v)) => v.lines().join("\n"),
        _ => panic!("no viewer open"),
    }
}

/// Selects call `number` in the open timeline.
fn select_call(a: &mut App, number: usize) {
    a.update(key(KeyCode::Char('g')));
    for _ in 1..number {
        a.update(key(KeyCode::Char('j')));
    }
}

fn call_of(a: &App, stage: Stage) -> usize {
    a.timeline()
        .steps
        .iter()
        .find(|s| s.report.stage == stage && s.report.changed)
        .map(|s| s.call)
        .unwrap()
}

#[test]
fn t_opens_the_timeline_and_the_conversation_rewinds_to_the_selected_call() {
    let mut a = tour_app();
    let live: Vec<Message> = a
        .conversation()
        .history()
        .iter()
        .map(|r| r.info().message.clone())
        .collect();
    a.update(key(KeyCode::Char('t')));
    assert_eq!(a.focus(), Pane::Timeline);
    let v = a.timeline_view().unwrap();
    assert_eq!(
        v.selected() + 1,
        a.timeline().calls.len(),
        "opens on the newest call"
    );
    // Call 5's request, row for row.
    select_call(&mut a, 5);
    let call = a.timeline().call(5).unwrap();
    let shown: Vec<&Message> = (0..a.conv_len())
        .map(|i| &a.conv_row(i).unwrap().info.message)
        .collect();
    let sent: Vec<&Message> = call.messages().collect();
    assert_eq!(shown, sent);
    // The rows a stage changed since the call before carry its mark.
    let micro_call = call_of(&a, Stage::MicroCompact);
    select_call(&mut a, micro_call);
    assert!((0..a.conv_len()).any(|i| a.conv_row(i).unwrap().mark == Some(Stage::MicroCompact)));
    // Esc leaves the timeline: the conversation is live again.
    a.update(key(KeyCode::Esc));
    assert!(a.timeline_view().is_none());
    assert_eq!(a.focus(), Pane::Conversation);
    let now: Vec<&Message> = (0..a.conv_len())
        .map(|i| &a.conv_row(i).unwrap().info.message)
        .collect();
    assert_eq!(now, live.iter().collect::<Vec<_>>());
    // 6 opens it too; t from the timeline closes it.
    a.update(key(KeyCode::Char('6')));
    assert_eq!(a.focus(), Pane::Timeline);
    a.update(key(KeyCode::Char('t')));
    assert!(a.timeline_view().is_none());
}

#[test]
fn enter_on_a_call_diffs_its_request_against_the_previous_one_by_stage() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let snip_call = call_of(&a, Stage::SnipCompact);
    select_call(&mut a, snip_call);
    a.update(key(KeyCode::Enter));
    let d = diff(&a);
    assert!(
        d.title
            .starts_with(&format!("call {} -> call {snip_call}", snip_call - 1)),
        "{}",
        d.title
    );
    let expected = a.timeline().call_diff(snip_call);
    let ops: Vec<DiffOp> = d.lines.iter().map(|l| l.op).collect();
    assert_eq!(ops, expected.iter().map(|r| r.op).collect::<Vec<_>>());
    // Removed rows say snip; the rows the agent appended say so.
    assert!(
        d.lines
            .iter()
            .any(|l| l.op == DiffOp::Removed && l.tag == "snip")
    );
    assert!(
        d.lines
            .iter()
            .any(|l| l.op == DiffOp::Added && l.tag == "appended")
    );
    // The cursor starts on the first change.
    assert!(d.is_change(d.selected));
    let first = d
        .items
        .iter()
        .position(|f| matches!(f, Fold::Line(i) if d.lines[*i].op != DiffOp::Same))
        .unwrap();
    assert_eq!(d.selected, first);
}

#[test]
fn o_on_a_call_shows_its_exact_request_as_json() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    select_call(&mut a, 3);
    a.update(key(KeyCode::Char('o')));
    let text = viewer_text(&a);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let request = tour()
        .requests
        .iter()
        .filter(|r| !crate::common::agent::is_summary_request(r))
        .nth(2)
        .unwrap();
    assert_eq!(json["system"], request.system.as_str());
    assert_eq!(json["tools"].as_array().unwrap().len(), request.tools.len());
    let messages: Vec<serde_json::Value> = request.messages.iter().map(Message::to_value).collect();
    assert_eq!(json["messages"], serde_json::Value::Array(messages));
}

#[test]
fn the_diff_folds_jumps_between_changes_and_opens_before_and_after() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let micro_call = a
        .timeline()
        .steps
        .iter()
        .filter(|s| s.report.stage == Stage::MicroCompact && s.report.changed)
        .nth(10)
        .unwrap()
        .call;
    select_call(&mut a, micro_call);
    a.update(key(KeyCode::Enter));
    let d = diff(&a);
    let folds = d
        .items
        .iter()
        .filter(|f| matches!(f, Fold::Folded { .. }))
        .count();
    assert!(folds > 0, "long unchanged runs are folded");
    let changes: Vec<usize> = (0..d.items.len()).filter(|&k| d.is_change(k)).collect();
    assert!(changes.len() >= 2);
    // n goes to the next change, N back; past the last, n wraps to the first.
    let start = d.selected;
    a.update(key(KeyCode::Char('n')));
    let next = diff(&a).selected;
    assert!(next > start && diff(&a).is_change(next));
    a.update(key(KeyCode::Char('N')));
    assert_eq!(diff(&a).selected, start);
    for _ in 0..changes.len() {
        a.update(key(KeyCode::Char('n')));
    }
    assert_eq!(diff(&a).selected, start);
    // Enter on a change in place: its text before and after; Esc back to the diff.
    let changed = (0..diff(&a).items.len())
        .find(|&k| {
            matches!(diff(&a).items[k], Fold::Line(i) if diff(&a).lines[i].op == DiffOp::Changed)
        })
        .unwrap();
    while diff(&a).selected != changed {
        a.update(key(KeyCode::Char('n')));
    }
    a.update(key(KeyCode::Enter));
    let text = viewer_text(&a);
    assert!(
        text.contains("── before #") && text.contains("── after #"),
        "{text}"
    );
    assert!(text.contains("[Earlier tool result compacted. Re-run if needed.]"));
    a.update(key(KeyCode::Esc));
    assert!(matches!(a.top_layer(), Some(Layer::Diff(_))));
    // Enter on a fold opens it.
    let fold_at = diff(&a)
        .items
        .iter()
        .position(|f| matches!(f, Fold::Folded { .. }))
        .unwrap();
    let Fold::Folded { count, .. } = diff(&a).items[fold_at] else {
        unreachable!()
    };
    let before = diff(&a).items.len();
    a.update(key(KeyCode::Char('g')));
    for _ in 0..fold_at {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Enter));
    assert_eq!(diff(&a).items.len(), before + count - 1);
    a.update(key(KeyCode::Esc));
    assert!(a.top_layer().is_none());
}

#[test]
fn every_snip_diff_agrees_with_its_title() {
    // The tour's third snip removed the earlier "[snipped 3 messages]" marker and inserted
    // one with the same text; matched by text, its diff said "- 2 removed" under a title
    // saying "snipped 3 messages".
    let mut a = tour_app();
    a.update(key(KeyCode::Char('2')));
    let snips: Vec<(usize, usize)> = a
        .visible_events()
        .iter()
        .enumerate()
        .filter_map(|(pos, &k)| match &a.events()[k].kind {
            ctxlab::tui::app::EventKind::Stage { report, .. } => match report.changes.first() {
                Some(Change::Snipped { removed, .. }) => Some((pos, *removed)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(snips.len() >= 3);
    for (pos, removed) in snips {
        a.update(key(KeyCode::Char('g')));
        for _ in 0..pos {
            a.update(key(KeyCode::Char('j')));
        }
        a.update(key(KeyCode::Enter));
        let d = diff(&a);
        assert!(d.title.contains(&format!("snipped {removed} messages")));
        let gone = d.lines.iter().filter(|l| l.op == DiffOp::Removed).count();
        let added = d.lines.iter().filter(|l| l.op == DiffOp::Added).count();
        assert_eq!((gone, added), (removed, 1), "{}", d.title);
        assert!(d.note.as_deref().unwrap_or("").contains("snipped so far"));
        a.update(key(KeyCode::Esc));
    }
}

#[test]
fn each_result_of_the_big_batch_names_its_own_fate() {
    // Before: the five-result message read "persisted toolu_tour_032 ..." while the
    // persisted result was toolu_tour_035.
    let mut a = tour_app();
    let step = a
        .timeline()
        .steps_by_id()
        .find(|(_, s)| s.report.stage == Stage::ToolResultBudget && s.report.changed)
        .map(|(id, _)| id)
        .unwrap();
    let seq = a.event_for_step(step).unwrap();
    let pos = a
        .visible_events()
        .iter()
        .position(|&k| a.events()[k].seq == seq)
        .unwrap();
    a.update(key(KeyCode::Char('2')));
    a.update(key(KeyCode::Char('g')));
    for _ in 0..pos {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Enter));
    let d = diff(&a);
    let changed = d
        .lines
        .iter()
        .find(|l| l.op == DiffOp::Changed)
        .expect("the batch changed in place");
    let label = &changed.new.as_ref().unwrap().info.label;
    assert!(
        label.contains(&format!("toolu_tour_035 persisted -> {PERSISTED}")),
        "{label}"
    );
    assert!(!label.contains("persisted toolu_tour_032"), "{label}");
    assert!(
        label.starts_with("5 results: toolu_tour_032 kept"),
        "{label}"
    );
}

#[test]
fn the_full_session_says_where_each_message_went_and_d_opens_that_diff() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('1')));
    a.update(key(KeyCode::Char('v')));
    assert_eq!(a.conversation().view(), ConvView::Session);
    let snipped = a
        .timeline()
        .session
        .iter()
        .position(|e| {
            e.removal()
                .is_some_and(|t| t.stage == Some(Stage::SnipCompact))
        })
        .unwrap();
    let row = a.conv_row(snipped).unwrap();
    assert!(row.dimmed);
    let note = row.note.unwrap();
    let call = a.timeline().session[snipped].removal().unwrap().call;
    assert!(
        note.starts_with(&format!("✗ call {call} snip → [snipped ")),
        "{note}"
    );
    a.update(key(KeyCode::Char('g')));
    for _ in 0..snipped {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Char('d')));
    let d = diff(&a);
    assert!(d.title.contains("snip_compact"), "{}", d.title);
    let message = &a.conversation().session()[snipped].info().message;
    assert!(
        d.lines.iter().any(|l| l.op == DiffOp::Removed
            && l.old.as_ref().is_some_and(|c| c.info.message == *message)),
        "the diff shows this message removed"
    );
    a.update(key(KeyCode::Esc));
    // A summarized message says summary; a persisted one its file.
    assert!((0..a.conversation().session().len()).any(|i| {
        a.fate_note(i)
            .is_some_and(|n| n.contains("compact_history → summary"))
    }));
    assert!((0..a.conversation().session().len()).any(|i| {
        a.fate_note(i)
            .is_some_and(|n| n.contains(&format!("budget → {PERSISTED}")))
    }));
}

#[test]
fn m_finds_a_persisted_file_after_compaction_removed_its_message() {
    let mut a = tour_app();
    assert!(
        !a.conversation().history().iter().any(|r| r
            .info()
            .persisted_paths
            .iter()
            .any(|p| p == PERSISTED)),
        "the tour compacts the marker away"
    );
    crate::support::jump_to_marker(&mut a, PERSISTED);
    assert_eq!(a.conversation().view(), ConvView::Session);
    assert_eq!(a.focus(), Pane::Conversation);
    // The full session also holds the summaries: its rows are read from the app.
    let entry =
        &a.conversation().session()[a.conversation().list(ConvView::Session).selected].info();
    assert_eq!(entry.message.tool_results().count(), 5, "the batch's row");
    let notice = a.notice_text().unwrap();
    assert!(notice.contains("no longer in the context"), "{notice}");
    assert!(
        notice.contains(".transcripts/"),
        "the transcript that holds it: {notice}"
    );
}

#[test]
fn search_finds_hits_in_the_conversation_the_full_session_and_the_events() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('1')));
    a.update(key(KeyCode::Char('f')));
    type_text(&mut a, "ingest");
    assert_eq!(a.search().as_ref().unwrap().query, "ingest");
    assert_eq!(
        a.input_text(),
        "",
        "the query is not typed into the input box"
    );
    a.update(key(KeyCode::Enter));
    let search = a.search().cloned().unwrap();
    let (_, full, _) = search.counts();
    assert!(full > 0, "the log reads are gone from the context");
    // Each hit is shown where it is: n walks them all, switching views.
    for (k, hit) in search.hits.iter().enumerate() {
        if k > 0 {
            a.update(key(KeyCode::Char('n')));
        }
        match hit {
            Hit::Conversation(i) => {
                assert_eq!(
                    (
                        a.conversation().view(),
                        a.conversation()
                            .list(ctxlab::tui::app::ConvView::Model)
                            .selected
                    ),
                    (ConvView::Model, *i)
                )
            }
            Hit::Session(i) => {
                assert_eq!(
                    (
                        a.conversation().view(),
                        a.conversation().list(ConvView::Session).selected
                    ),
                    (ConvView::Session, *i)
                );
                let text = a.conversation().session()[*i]
                    .info()
                    .full_text()
                    .to_lowercase();
                assert!(text.contains("ingest"));
                assert!(!a.conversation().session()[*i].live());
            }
            Hit::Event(e) => {
                assert_eq!(a.focus(), Pane::Events);
                assert_eq!(a.visible_events()[a.events_state().list().selected], *e);
            }
            Hit::Opened(_) => panic!("no recorded session is open: {hit:?}"),
        }
    }
    a.update(key(KeyCode::Char('n')));
    assert_eq!(a.search().as_ref().unwrap().current, 0, "n wraps around");
    // A query that names a stage finds events: n moves to the events pane.
    a.update(key(KeyCode::Char('f')));
    type_text(&mut a, "persisted toolu_tour_035");
    a.update(key(KeyCode::Enter));
    let hits = a.search().as_ref().unwrap().hits.clone();
    assert!(hits.iter().any(|h| matches!(h, Hit::Event(_))));
    while a.focus() != Pane::Events {
        a.update(key(KeyCode::Char('n')));
    }
    let k = a.visible_events()[a.events_state().list().selected];
    assert!(ctxlab::tui::app::search_event_text(&a.events()[k]).contains("toolu_tour_035"));
}

#[test]
fn slash_export_writes_the_page_with_every_stage_event_of_the_tour() {
    let mut a = tour_app();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tour.html");
    a.update(key(KeyCode::Char('i')));
    type_text(&mut a, &format!("/export {}", out.display()));
    let fx = a.update(key(KeyCode::Enter));
    assert!(
        matches!(fx.as_slice(), [Effect::Work(Work::Export { .. })]),
        "the file is written in a job, not in update"
    );
    assert!(!out.exists());
    let rest = settle(&mut a, fx);
    assert!(rest.is_empty());
    let html = std::fs::read_to_string(&out).unwrap();
    check(&html).unwrap();
    for ev in &tour().events {
        if let AgentEvent::StageRan { report, .. } = ev {
            let line = escape(&format!("{}: {}", report.stage.name(), report.reason));
            assert!(html.contains(&line), "missing {line}");
        }
    }
    // The same model gives the same page.
    assert_eq!(html, ctxlab::timeline::html::page(a.timeline()));
    assert!(a.notice_text().unwrap().contains("tour.html"));
}

// ----- snapshots -----

#[test]
fn snapshot_timeline_pane() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let budget_call = call_of(&a, Stage::ToolResultBudget);
    select_call(&mut a, budget_call);
    snap_all("timeline", &mut a);
}

#[test]
fn snapshot_request_view() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    select_call(&mut a, 3);
    a.update(key(KeyCode::Char('o')));
    snap_all("request_view", &mut a);
}

#[test]
fn snapshot_call_to_call_diff() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let reactive_call = call_of(&a, Stage::ReactiveCompact);
    select_call(&mut a, reactive_call);
    a.update(key(KeyCode::Enter));
    snap_all("call_diff", &mut a);
}

#[test]
fn snapshot_folded_diff() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let snip_call = call_of(&a, Stage::SnipCompact);
    select_call(&mut a, snip_call + 2);
    a.update(key(KeyCode::Enter));
    snap_all("folded_diff", &mut a);
}

#[test]
fn snapshot_wrapped_viewer() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    let budget_call = call_of(&a, Stage::ToolResultBudget);
    select_call(&mut a, budget_call);
    a.update(key(KeyCode::Enter));
    // The batch's row: its text before and after, wrapped.
    let k = (0..diff(&a).items.len())
        .find(|&k| matches!(diff(&a).items[k], Fold::Line(i) if diff(&a).lines[i].old.as_ref().is_some_and(|c| c.info.message.tool_results().count() == 5)))
        .unwrap();
    a.update(key(KeyCode::Char('g')));
    for _ in 0..k {
        a.update(key(KeyCode::Char('j')));
    }
    a.update(key(KeyCode::Enter));
    a.update(key(KeyCode::Char('/')));
    type_text(&mut a, "toolu_tour_035");
    a.update(key(KeyCode::Enter));
    snap_all("wrapped_viewer", &mut a);
}
