//! "continue from call N": from a call of the finished tour, with a lower context_limit set
//! in /config, the continued branch summarizes earlier than the original did, and the
//! original branch is still there to compare with.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::KeyCode;
use ctxlab::agent::{AgentEvent, AgentSetup, spawn};
use ctxlab::compact::{PipelineConfig, Stage};
use ctxlab::provider::{Scenario, ScriptedModel};
use ctxlab::session::recorded::RecordedKind;
use ctxlab::timeline::Timeline;
use ctxlab::tools::Workspace;
use ctxlab::tui::app::ContinueFrom;
use ctxlab::tui::app::{Effect, Msg};
use ctxlab::tui::run::{FreshAgent, continued};

use super::harness::{Bench, demo_workspace, start};
use crate::common::agent::pinned_clock;

/// The calls before which compact_history changed the history.
fn summaries(t: &Timeline) -> Vec<usize> {
    t.steps
        .iter()
        .filter(|s| s.report.stage == Stage::CompactHistory && s.report.changed)
        .map(|s| s.call)
        .collect()
}

/// What the loop does with a continue: a fresh agent in a fresh demo workspace (kept while
/// the agent runs: the returned folder), continued from `from`, run to the turn's end.
async fn run_continued(b: &mut Bench, from: &ContinueFrom) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = demo_workspace(dir.path());
    let scripted =
        ScriptedModel::new(Scenario::embedded("tour").unwrap()).with_pace(Duration::ZERO);
    let mut setup = AgentSetup::new(
        Arc::new(scripted),
        Workspace::new(&ws).unwrap(),
        PipelineConfig::default(),
    );
    setup.clock = pinned_clock;
    let fresh = continued(
        FreshAgent {
            setup,
            label: "scripted tour".into(),
            notices: Vec::new(),
            request: Some("not sent".into()),
            record: None,
        },
        from,
    );
    assert_eq!(fresh.request, None);
    let (commands, events, _task) = spawn(fresh.setup);
    b.app.update(Msg::Continued {
        provider: fresh.label,
        notices: Vec::new(),
    });
    b.commands = commands;
    b.events = events;
    b.until_done().await;
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuing_from_call_10_with_a_lower_limit_summarizes_earlier_and_keeps_the_original() {
    let mut b = start(PipelineConfig::default(), false).await;
    let request = Scenario::embedded("tour").unwrap().request;
    b.commands
        .send(ctxlab::agent::UserCommand::Submit(request))
        .unwrap();
    b.until_done().await;
    let original = summaries(b.app.timeline());
    assert_eq!(original, vec![32, 34], "the tour as it always runs");
    let original_calls = b.app.timeline().calls.len();

    // context_limit 30,000 in /config (the agent is idle: it applies at once).
    b.keys(&[KeyCode::Char('i')]);
    b.type_text("/config");
    b.keys(&[KeyCode::Enter]);
    let idx = PipelineConfig::KEYS
        .iter()
        .position(|k| *k == "context_limit")
        .unwrap();
    for _ in 0..idx {
        b.keys(&[KeyCode::Char('j')]);
    }
    b.keys(&[KeyCode::Enter]);
    for _ in 0..10 {
        b.keys(&[KeyCode::Backspace]);
    }
    b.type_text("30000");
    b.keys(&[KeyCode::Enter, KeyCode::Esc]);
    b.until(|e, _| matches!(e, AgentEvent::ConfigChanged { .. }))
        .await;

    // The timeline on call 10, `x`: the confirmation says what will run.
    b.keys(&[KeyCode::Esc, KeyCode::Char('t'), KeyCode::Char('g')]);
    for _ in 0..9 {
        b.keys(&[KeyCode::Char('j')]);
    }
    b.keys(&[KeyCode::Char('x')]);
    let screen = crate::support::screen(&mut b.app, 200, 40);
    assert!(
        screen.contains("continue from call 10 with s08, context_limit 30,000?"),
        "{screen}"
    );
    assert!(screen.contains("fresh demo workspace"), "{screen}");
    let fx = crate::support::press(&mut b.app, KeyCode::Char('y'));
    let from = match fx.as_slice() {
        [Effect::Continue(from)] => from.clone(),
        other => panic!("expected a continue, got {other:?}"),
    };
    assert_eq!(from.call, 10);
    assert_eq!(from.config.context_limit, 30_000);

    // What the loop does with it: a fresh agent (fresh demo workspace), continued.
    let _ws = run_continued(&mut b, &from).await;

    let live = b.app.timeline();
    let earlier = summaries(live);
    assert!(
        earlier.first().is_some_and(|c| (10..32).contains(c)),
        "the continued branch summarizes before call 32: {earlier:?}"
    );
    assert_eq!(b.app.continued_from(), Some(10));
    // Calls 1-9 are the original's; 10 on are the continued branch's.
    let kept = b.app.other_branch().expect("the original branch is kept");
    assert_eq!(kept.calls.len(), original_calls);
    assert_eq!(summaries(kept), original);
    for (a, o) in live.calls[..9].iter().zip(&kept.calls[..9]) {
        assert_eq!((a.number, a.size_after), (o.number, o.size_after));
    }
    let rows: Vec<String> = b.event_texts();
    assert!(
        rows.iter()
            .any(|r| r == "continued from call 10 with s08, context_limit 30,000"),
        "{rows:#?}"
    );

    // Each call keeps the limit it ran under: calls 1-9 under 50,000, 10 on under 30,000
    // (the export's header names both); the earlier branch ran all its calls under 50,000,
    // though /config set 30,000 after its last call.
    assert_eq!(live.limit_of(9).map(|l| l.context_limit), Some(50_000));
    assert_eq!(live.limit_of(10).map(|l| l.context_limit), Some(30_000));
    let page = ctxlab::timeline::html::page(live);
    assert!(
        page.contains("calls 1-9: strategy s08, limit 50,000 chars; calls 10-"),
        "the export names each branch's limit"
    );
    assert_eq!(kept.limits_text(), "strategy s08, limit 50,000 chars");

    // B shows the original branch in the timeline, and back; its plot draws the limit its
    // calls ran under.
    b.keys(&[KeyCode::Char('t'), KeyCode::Char('B')]);
    assert!(b.app.showing_other_branch());
    assert_eq!(summaries(b.app.timeline()), original);
    let screen = crate::support::screen(&mut b.app, 200, 50);
    assert!(screen.contains("limit 50,000"), "{screen}");
    assert!(!screen.contains("limit 30,000"), "{screen}");
    b.keys(&[KeyCode::Char('B')]);
    assert_eq!(summaries(b.app.timeline()), earlier);

    // C on the continued run: the whole session replayed, its calls numbered as on the
    // timeline (the continue's call 10 is the replay's 10, not 1), the earlier calls under
    // the limit they ran under and the continued ones under theirs, each named.
    let sizes: Vec<usize> = b
        .app
        .timeline()
        .calls
        .iter()
        .map(|c| c.size_after)
        .collect();
    let last = sizes.len();
    let fx = crate::support::press(&mut b.app, KeyCode::Char('C'));
    let rest = crate::support::settle(&mut b.app, fx);
    assert!(rest.is_empty(), "{rest:?}");
    let v = b.app.compare().expect("the compare view is open");
    assert!(v.complete(), "every replay done");
    assert_eq!(v.calls(), last, "one replayed call per timeline call");
    let s08: Vec<usize> = v.runs()[0].calls.iter().map(|c| c.size).collect();
    // Before, the replay began at the continue with none of the earlier messages (its call
    // 1, the timeline's 10, sent 2 chars) under the new limit.
    assert_eq!(
        s08, sizes,
        "s08 under each branch's limit sends what the run sent"
    );
    assert_eq!(
        v.configs()[0].context_limit,
        50_000,
        "the replay starts under the limit calls 1-9 ran under"
    );
    assert!(
        v.recorded().iter().any(|e| e.call == 10
            && matches!(&e.kind, RecordedKind::Config { config, .. } if config.context_limit == 30_000)),
        "and follows the continue's at call 10: {:?}",
        v.recorded()
    );
    b.keys(&[KeyCode::Char('g')]);
    for _ in 0..9 {
        b.keys(&[KeyCode::Char('l')]);
    }
    let screen = crate::support::screen(&mut b.app, 200, 50);
    assert!(screen.contains("▲ call 10"), "{screen}");
    assert!(screen.contains(&format!("call 10 of {last}")), "{screen}");
    assert!(
        screen.contains("calls 1-9: strategy s08, limit 50,000 chars; calls 10-"),
        "{screen}"
    );
    assert!(screen.contains("limit 30,000 chars"), "{screen}");

    // A continue of the continue (from call 20): the compare view still replays the whole
    // session, numbered and limited as the timeline says.
    b.keys(&[KeyCode::Esc, KeyCode::Char('g')]);
    for _ in 0..19 {
        b.keys(&[KeyCode::Char('j')]);
    }
    b.keys(&[KeyCode::Char('x')]);
    let fx = crate::support::press(&mut b.app, KeyCode::Char('y'));
    let from = match fx.as_slice() {
        [Effect::Continue(from)] => from.clone(),
        other => panic!(
            "expected a continue, got {other:?}: {}",
            crate::support::screen(&mut b.app, 200, 40)
        ),
    };
    assert_eq!(from.call, 20);
    let _ws = run_continued(&mut b, &from).await;
    assert_eq!(b.app.continued_from(), Some(20));
    let sizes: Vec<usize> = b
        .app
        .timeline()
        .calls
        .iter()
        .map(|c| c.size_after)
        .collect();
    let fx = crate::support::press(&mut b.app, KeyCode::Char('C'));
    let rest = crate::support::settle(&mut b.app, fx);
    assert!(rest.is_empty(), "{rest:?}");
    let v = b.app.compare().expect("the compare view is open");
    let s08: Vec<usize> = v.runs()[0].calls.iter().map(|c| c.size).collect();
    assert_eq!(s08, sizes, "the twice continued run, replayed whole");
    assert_eq!(v.configs()[0].context_limit, 50_000);
}
