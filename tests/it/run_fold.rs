//! The run folded once (docs/architecture.md, "The run model"): the workbench, `ctxlab
//! export` and the recorder each take the tour's stream through `ctxlab::run::Run`, and
//! what they build agrees id for id, whether or not the other readers exist, and whatever
//! the timeline pane shows while the facts arrive.

use std::sync::Arc;

use crate::common::tour::tour;
use crate::support::{key, press};
use crossterm::event::KeyCode;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::PipelineConfig;
use ctxlab::message::Message;
use ctxlab::timeline::{Source, Timeline};
use ctxlab::tui::App;
use ctxlab::tui::app::{Effect, EventKind, Msg};
use serde_json::Value;

fn tour_app() -> App {
    let mut a = App::new(
        tour().workspace.clone(),
        "scripted (tour)".into(),
        PipelineConfig::default(),
        false,
    );
    a.update(Msg::Resize(120, 40));
    for ev in &tour().events {
        a.update(Msg::Agent(ev.clone()));
    }
    a
}

/// What a timeline says of its calls, steps and entries, comparable.
fn shape(t: &Timeline) -> (Vec<String>, Vec<String>, Vec<Message>) {
    let calls = t
        .calls
        .iter()
        .map(|c| {
            format!(
                "{} {}->{} {:?} {:?} {:?}",
                c.number, c.size_before, c.size_after, c.input_tokens, c.outcome, c.steps
            )
        })
        .collect();
    let steps = t
        .steps_by_id()
        .map(|(id, s)| {
            format!(
                "{id} call {} {} {} {}",
                s.call,
                s.report.stage.name(),
                s.report.changed,
                s.report.size_before
            )
        })
        .collect();
    let session = t.session.iter().map(|e| (*e.message).clone()).collect();
    (calls, steps, session)
}

/// The workbench's timeline is the timeline of the stream alone: the mirror, the event rows
/// and the live record taking the same facts change nothing in it.
#[test]
fn the_workbench_builds_the_timeline_the_stream_alone_builds() {
    let alone = Timeline::from_events(Source::Live, 0, &tour().events);
    let a = tour_app();
    assert!(alone.calls.len() > 30, "the tour makes its calls");
    assert_eq!(shape(a.timeline()), shape(&alone));
}

/// Each full-session row names its timeline entry, and each stage row its step, by the
/// run's ids: the message and the report behind the id are the row's own.
#[test]
fn session_rows_and_stage_rows_name_their_entry_and_step() {
    let a = tour_app();
    let t = a.timeline();
    let rows = a.conversation().session();
    let entries: Vec<usize> = rows.iter().filter_map(|r| r.entry()).collect();
    assert_eq!(entries, (0..t.session.len()).collect::<Vec<_>>());
    for r in rows {
        if let Some(e) = r.entry() {
            assert_eq!(*t.session[e].message, r.info().message, "entry {e}");
        }
    }
    let mut stages = 0;
    for row in a.events() {
        if let EventKind::Stage { report, step, .. } = &row.kind {
            let step = step.expect("a live stage row names its step");
            let s = t.step(step).expect("the step exists");
            assert_eq!(
                (s.report.stage, s.report.size_before, &s.report.reason),
                (report.stage, report.size_before, &report.reason)
            );
            assert_eq!(a.event_for_step(step), Some(row.seq));
            stages += 1;
        }
    }
    assert_eq!(stages, t.steps.len(), "one row per step");
}

/// The recording numbers its lines with the same fold: a request line's call is the
/// timeline's call of the same size, a stage line's call the step's call, and a summary
/// request's usage never lands on a call.
#[test]
fn the_recording_numbers_calls_and_stages_as_the_timeline_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut recorder = ctxlab::record::Recorder::create(
        dir.path(),
        ctxlab::session::recorded::format::FrontEnd::Run,
    )
    .unwrap();
    for ev in &tour().events {
        recorder.record(ev);
    }
    let text = std::fs::read_to_string(recorder.path()).unwrap();
    let t = Timeline::from_events(Source::Live, 0, &tour().events);
    let mut stage_calls = Vec::new();
    let mut summaries = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let call = v["call"].as_u64().unwrap_or(0) as usize;
        match (v["type"].as_str(), v["summary"].as_bool()) {
            (Some("request"), Some(false)) => {
                let c = t.call(call).expect("a recorded call is a timeline call");
                assert_eq!(c.number, call);
            }
            (Some("request"), Some(true)) => {
                summaries += 1;
                // The summary request sits after `call` calls, before the next.
                assert!(call < t.calls.len());
            }
            (Some("stage"), _) => stage_calls.push(call),
            _ => {}
        }
    }
    assert!(summaries >= 2, "the tour summarizes twice");
    let timeline_calls: Vec<usize> = t.steps.iter().map(|s| s.call).collect();
    assert_eq!(stage_calls, timeline_calls);
}

/// The compare view replays the live run with the events the workbench's live record
/// folded from the run's facts: the same events, at the same calls, as the recording file
/// the recorder wrote from the same stream, and a refusal's call is the timeline's refused
/// call.
#[test]
fn the_live_record_is_the_recording_files_and_names_timeline_calls() {
    let dir = tempfile::tempdir().unwrap();
    let mut recorder = ctxlab::record::Recorder::create(
        dir.path(),
        ctxlab::session::recorded::format::FrontEnd::Workbench,
    )
    .unwrap();
    for ev in &tour().events {
        recorder.record(ev);
    }
    let file = ctxlab::session::load_history(recorder.path()).unwrap();

    let mut a = tour_app();
    a.update(key(KeyCode::Esc));
    press(&mut a, KeyCode::Char('C'));
    let live = a.compare().expect("the compare view is open").recorded();
    assert_eq!(live, file.recorded.as_slice());
    let refusals: Vec<usize> = live
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                ctxlab::session::recorded::RecordedKind::Refusal { .. }
            )
        })
        .map(|e| e.call)
        .collect();
    assert!(!refusals.is_empty(), "the tour's API refuses once");
    for n in refusals {
        let call = a.timeline().call(n).expect("the refused call");
        assert_eq!(call.outcome, ctxlab::timeline::CallOutcome::PromptTooLong);
    }
}

/// The workbench's fold does not depend on which timeline the pane shows: after a continue,
/// with the earlier branch on screen, a message the continued agent appends is filed under
/// the live timeline's entry. (The mirror used to take "the timeline's newest entry" from
/// the timeline on screen, which had taken nothing: the row named the earlier branch's
/// last entry.)
#[test]
fn an_append_while_the_earlier_branch_is_shown_names_the_live_entry() {
    let mut a = tour_app();
    for k in [KeyCode::Esc, KeyCode::Char('t'), KeyCode::Char('g')] {
        press(&mut a, k);
    }
    for _ in 0..4 {
        press(&mut a, KeyCode::Char('j'));
    }
    press(&mut a, KeyCode::Char('x'));
    let from = match press(&mut a, KeyCode::Char('y')).as_slice() {
        [Effect::Continue(from)] => from.clone(),
        other => panic!("expected a continue, got {other:?}"),
    };
    assert_eq!(from.call, 5);
    a.update(Msg::Continued {
        provider: "scripted (tour)".into(),
        notices: Vec::new(),
    });
    let cut_entries = a.timeline().session.len();
    // The continued agent hands over its history, then the earlier branch goes on screen.
    a.update(Msg::Agent(AgentEvent::HistoryReplaced {
        history: Arc::new(from.resume.history.clone()),
        messages: from.resume.history.len(),
    }));
    press(&mut a, KeyCode::Char('t'));
    a.update(key(KeyCode::Char('B')));
    assert!(a.showing_other_branch());
    let said = Message::assistant_blocks(vec![
        serde_json::json!({"type": "text", "text": "the continued branch's answer"}),
    ]);
    a.update(Msg::Agent(AgentEvent::MessageAppended {
        message: said.clone(),
    }));
    a.update(key(KeyCode::Char('B')));
    assert!(!a.showing_other_branch());

    let live = a.timeline();
    assert_eq!(live.session.len(), cut_entries + 1);
    let row = a.conversation().session().last().expect("the row");
    assert_eq!(row.info().message, said);
    let entry = row.entry().expect("an appended message is an entry");
    assert_eq!(entry, cut_entries, "the live timeline's newest entry");
    assert_eq!(*live.session[entry].message, said);
}
