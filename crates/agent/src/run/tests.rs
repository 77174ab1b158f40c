//! The fold's ids and call attribution, event by event.

use std::sync::Arc;

use super::*;
use crate::compact::{CompactTrigger, StageReport};
use crate::message::Message;

fn appended(text: &str) -> AgentEvent {
    AgentEvent::MessageAppended {
        message: Message::user_text(text),
    }
}

fn request(summary: bool) -> AgentEvent {
    AgentEvent::RequestSent {
        estimate_chars: 100,
        messages: 1,
        summary,
        request: None,
        body: None,
    }
}

fn usage(tokens: u64) -> AgentEvent {
    AgentEvent::Usage {
        input_tokens: Some(tokens),
        output_tokens: None,
        cached_input_tokens: None,
    }
}

fn refused() -> AgentEvent {
    AgentEvent::PromptTooLong {
        message: "prompt is too long".into(),
        messages: 1,
        estimate_chars: 100,
    }
}

fn unchanged(stage: Stage) -> AgentEvent {
    AgentEvent::StageRan {
        report: StageReport::unchanged(stage, 10, 1),
        history: None,
    }
}

/// A compact_history that summarized: changed, with a `Summarized` change.
fn summarized() -> AgentEvent {
    let mut report = StageReport::unchanged(Stage::CompactHistory, 100, 4);
    report.changed = true;
    report.changes.push(Change::Summarized {
        replaced: 3,
        kept_tail: 1,
        trigger: CompactTrigger::OverLimit,
        focus: None,
        transcript: String::new(),
        summary_chars: 7,
        summary_cut: false,
    });
    AgentEvent::StageRan {
        report,
        history: Some(Arc::new(vec![Message::user_text("summary")])),
    }
}

#[test]
fn each_thing_gets_the_next_id_of_its_kind_and_the_call_it_came_before() {
    let mut run = Run::new();
    let mut facts = Vec::new();
    let events = [
        appended("a"),
        unchanged(Stage::MicroCompact),
        request(false),
        appended("b"),
        summarized(),
        request(true),
        request(false),
        appended("c"),
    ];
    for ev in &events {
        facts.push(format!("{:?}", run.on_event(ev).map(|f| ids(&f))));
    }
    assert_eq!(
        facts,
        [
            "Some(\"entry 0 before 1\")",
            "Some(\"step 0 before 1\")",
            "Some(\"call 1\")",
            "Some(\"entry 1 before 2\")",
            "Some(\"step 1 before 2 compaction 1\")",
            "Some(\"summary after 1\")",
            "Some(\"call 2\")",
            "Some(\"entry 2 before 3\")",
        ]
    );
    assert_eq!(
        (run.calls_sent(), run.step_count(), run.entry_count()),
        (2, 2, 3)
    );
    let c = run.compaction(CompactionId::new(1)).copied();
    assert_eq!(
        c.map(|c| (c.step, c.before_call)),
        Some((StepId::new(1), 2))
    );
    assert_eq!(
        run.step(StepId::new(1)).map(|s| s.compaction),
        Some(Some(CompactionId::new(1)))
    );
}

fn ids(fact: &RunFact<'_>) -> String {
    match *fact {
        RunFact::Appended {
            entry, before_call, ..
        } => format!("entry {} before {before_call}", entry.index()),
        RunFact::Stage {
            step,
            before_call,
            compaction,
            ..
        } => {
            let mut s = format!("step {step} before {before_call}");
            if let Some(c) = compaction {
                s.push_str(&format!(" compaction {}", c.number()));
            }
            s
        }
        RunFact::Request {
            call: CallRef::Call(n),
            ..
        } => format!("call {n}"),
        RunFact::Request {
            call: CallRef::Summary { after },
            ..
        } => format!("summary after {after}"),
        _ => "other".into(),
    }
}

/// Usage and a refusal belong to the request sent last: a summary request's never lands on
/// the call before it (the gauge's figure and the timeline's call stay the call's).
#[test]
fn usage_and_refusals_belong_to_the_request_last_sent() {
    let mut run = Run::new();
    run.on_event(&request(false));
    let call = |f: Option<RunFact<'_>>| match f {
        Some(RunFact::Usage { call, .. } | RunFact::Refused { call, .. }) => Some(call),
        _ => None,
    };
    assert_eq!(call(run.on_event(&usage(500))), Some(CallRef::Call(1)));
    run.on_event(&request(true));
    assert_eq!(
        call(run.on_event(&usage(90))),
        Some(CallRef::Summary { after: 1 })
    );
    assert_eq!(
        call(run.on_event(&refused())),
        Some(CallRef::Summary { after: 1 })
    );
    assert_eq!(
        run.call(1).copied(),
        Some(CallRecord {
            number: 1,
            input_tokens: Some(500),
            refused: false
        }),
        "the summary's usage and refusal are not call 1's"
    );
    run.on_event(&request(false));
    assert_eq!(call(run.on_event(&refused())), Some(CallRef::Call(2)));
    assert!(run.call(2).is_some_and(|c| c.refused));
}

#[test]
fn new_settings_apply_from_the_next_call() {
    let mut run = Run::new();
    run.on_event(&request(false));
    let config = PipelineConfig::default();
    match run.on_event(&AgentEvent::ConfigChanged { config }) {
        Some(RunFact::Settings { from_call, .. }) => assert_eq!(from_call, 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(run.config(), Some(config));
}

/// A continued run's ids go on from the kept part of the earlier one, so they name the
/// same steps and entries as the cut timeline its facts extend.
#[test]
fn a_continued_run_numbers_on_from_where_it_continues() {
    let mut run = Run::continuing(RunStart {
        calls: 9,
        steps: 40,
        entries: 30,
        compactions: 1,
    });
    let Some(RunFact::Appended {
        entry, before_call, ..
    }) = run.on_event(&appended("x"))
    else {
        panic!("an append");
    };
    assert_eq!((entry.index(), before_call), (30, 10));
    let Some(RunFact::Stage {
        step, compaction, ..
    }) = run.on_event(&summarized())
    else {
        panic!("a stage");
    };
    assert_eq!(
        (step.index(), compaction.map(CompactionId::number)),
        (40, Some(2))
    );
    assert!(matches!(
        run.on_event(&request(false)),
        Some(RunFact::Request {
            call: CallRef::Call(10),
            ..
        })
    ));
    assert!(run.call(10).is_some() && run.call(9).is_none());
    assert!(run.step(StepId::new(39)).is_none() && run.step(step).is_some());
    assert!(run.entry(entry).is_some());
}

/// Streaming, tool progress, pauses, retries, pace and step mode change no record.
#[test]
fn progress_events_are_no_facts() {
    let mut run = Run::new();
    let progress = [
        AgentEvent::TextDelta { text: "x".into() },
        AgentEvent::StepModeChanged { on: true },
        AgentEvent::PaceChanged {
            pace_ms: 1,
            applied: true,
        },
    ];
    for ev in &progress {
        assert!(run.on_event(ev).is_none(), "{ev:?}");
    }
    assert_eq!(run.calls_sent() + run.step_count() + run.entry_count(), 0);
}
