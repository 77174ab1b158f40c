//! The workbench's compare view (one session replayed under several strategies, one row
//! each, reachability bars, what each strategy kept of a piece) and the strategy's unit in
//! titles and limit lines: under s06 the limit is in tokens, the plots are in chars, so the
//! limit line is drawn at four times the number.

use crate::support::{key, screen};
use crossterm::event::KeyCode;
use ctxlab::agent::AgentEvent;
use ctxlab::compact::{PipelineConfig, Strategy};
use ctxlab::message::Message;
use ctxlab::timeline::html::page;
use ctxlab::timeline::{Source, Timeline};
use ctxlab::tui::{App, Msg};

/// A timeline under s06 with one call of about 100,000 chars: above the limit's number
/// (50,000 tokens) and below the limit in chars (200,000).
fn s06_events() -> Vec<AgentEvent> {
    let config = PipelineConfig::for_strategy(Strategy::S06);
    let big = Message::user_text("x".repeat(100_000));
    vec![
        AgentEvent::Ready {
            provider: "scripted".into(),
            workspace: std::env::temp_dir(),
            config,
        },
        AgentEvent::MessageAppended {
            message: big.clone(),
        },
        AgentEvent::RequestSent {
            estimate_chars: ctxlab::compact::estimate_size(&[big]),
            messages: 1,
            summary: false,
            request: None,
        },
        AgentEvent::MessageAppended {
            message: Message::assistant_blocks(vec![ctxlab::message::block::text("done")]),
        },
    ]
}

#[test]
fn s06_html_limit_line_is_drawn_in_chars() {
    let mut t = Timeline::new(Source::Live, 0);
    for ev in s06_events() {
        t.on_event(&ev);
    }
    assert_eq!(
        t.context_limit, 50_000,
        "the limit stays in the strategy's unit"
    );
    let html = page(&t);
    // The limit (200,000 chars) is the largest value: its line is at the top of the plot
    // (y = 24), the 100,000-char call below it. Drawn at 50,000 it sat under the call.
    let line = html
        .split("class=\"limit\"")
        .next()
        .and_then(|before| before.rsplit("<line ").next())
        .unwrap();
    assert!(line.contains("y1=\"24.0\""), "limit line at {line}");
    assert!(
        html.contains("limit 50,000 tokens = 200,000 chars"),
        "label"
    );
}

#[test]
fn s06_timeline_pane_limit_is_in_chars() {
    let mut a = App::new(
        std::env::temp_dir(),
        "scripted".into(),
        PipelineConfig::for_strategy(Strategy::S06),
        true,
    );
    for ev in s06_events() {
        a.update(Msg::Agent(ev));
    }
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Char('t')));
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("limit 200,000"), "{text}");
    assert!(text.contains("200k"), "the limit's y label: {text}");
    assert!(!text.contains("limit 50,000 "), "{text}");
}
