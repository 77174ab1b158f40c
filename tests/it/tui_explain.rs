//! Issue 38's screens, part b: the `/config` panel as its keys say (h/l choose on the
//! strategy row, descriptions wrapped, each setting's range and meaning, "continue from call
//! N" asked on screen), the gauge's and the `w` view's numbers labelled, and `e`, "explain
//! this number", over the gauge and the `w` bars. Each defect has a test that failed before
//! its fix; snapshots at 80x24 and 120x40.

use std::sync::Arc;

use crate::support::{app, key, screen, type_text};
use crate::tui_context::{masked, on_call};
use crate::tui_timeline::tour_app;
use crossterm::event::KeyCode;
use ctxlab::agent::events::{AgentEvent, UserCommand};
use ctxlab::compact::{PipelineConfig, Strategy};
use ctxlab::message::Message;
use ctxlab::timeline::breakdown::of_timeline;
use ctxlab::tui::app::Layer;
use ctxlab::tui::{App, Effect, Msg};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn open_config(a: &mut App) {
    a.update(key(KeyCode::Char('i')));
    type_text(a, "/config");
    a.update(key(KeyCode::Enter));
}

fn choosing(a: &App) -> Option<Strategy> {
    match a.top_layer() {
        Some(Layer::Config(p)) => p.choosing(),
        _ => panic!("the config panel is not on top"),
    }
}

#[test]
fn h_and_l_choose_on_the_strategy_row_without_enter() {
    let mut a = app();
    open_config(&mut a);
    a.update(key(KeyCode::Char('G')));
    let start = a.config().strategy;
    let at = Strategy::ALL.iter().position(|s| *s == start).unwrap();
    let next = Strategy::ALL[(at + 1) % Strategy::ALL.len()];
    a.update(key(KeyCode::Char('l')));
    assert_eq!(choosing(&a), Some(next), "l moves the choice at once");
    assert!(screen(&mut a, 120, 40).contains(&format!("‹ {next} ›")));
    a.update(key(KeyCode::Char('h')));
    a.update(key(KeyCode::Char('h')));
    let prev = Strategy::ALL[(at + Strategy::ALL.len() - 1) % Strategy::ALL.len()];
    assert_eq!(choosing(&a), Some(prev), "h moves it back");
    let fx = a.update(key(KeyCode::Enter));
    let expected = PipelineConfig::default().with_strategy(prev);
    assert_eq!(fx, vec![Effect::Send(UserCommand::SetConfig(expected))]);
    // Esc leaves a choice without applying it; k leaves the row.
    a.update(key(KeyCode::Char('l')));
    a.update(key(KeyCode::Esc));
    assert_eq!(choosing(&a), None);
    assert_eq!(a.config().strategy, prev);
    a.update(key(KeyCode::Char('k')));
    match a.top_layer() {
        Some(Layer::Config(p)) => assert_eq!(p.selected(), ctxlab::tui::app::STRATEGY_ROW - 1),
        _ => panic!("k closed the panel"),
    }
}

#[test]
fn strategy_descriptions_wrap_inside_the_dialog() {
    for (w, h) in SIZES {
        let mut a = app();
        open_config(&mut a);
        a.update(key(KeyCode::Char('G')));
        let text = screen(&mut a, w, h);
        // Every description's last word is on screen (they were cut at the dialog's edge).
        for s in Strategy::ALL {
            let last = s.describe().split(' ').next_back().unwrap();
            assert!(
                text.contains(last),
                "{w}x{h}: {s}'s `{last}` missing:\n{text}"
            );
        }
    }
}

#[test]
fn every_setting_shows_its_range_and_meaning() {
    let mut a = app();
    open_config(&mut a);
    for key_name in PipelineConfig::KEYS {
        let text = screen(&mut a, 120, 40);
        let (lo, hi) = PipelineConfig::range(key_name).unwrap();
        let range = format!(
            "{} – {}",
            ctxlab::util::group_digits(lo),
            ctxlab::util::group_digits(hi)
        );
        assert!(text.contains(&range), "{key_name}: no range {range}");
        let (_, meaning) = PipelineConfig::meaning(key_name).unwrap();
        // The meaning wraps: its first words are on screen under the rows.
        let head: String = meaning.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&head),
            "{key_name}: no meaning `{head}`:\n{text}"
        );
        a.update(key(KeyCode::Char('j')));
    }
}

#[test]
fn continue_from_call_n_is_asked_in_the_timeline_pane() {
    for (w, h) in SIZES {
        let mut a = on_call(5);
        a.update(key(KeyCode::Char('x')));
        let text = screen(&mut a, w, h);
        let rows: Vec<&str> = text.lines().collect();
        // Above the hint line (the last row): the question in the pane.
        let body = rows[..rows.len() - 1].join("\n");
        assert!(body.contains("continue from call 5 with s08"), "{text}");
        assert!(body.contains("y: continue, any other"), "{text}");
        // Two rows at most: the call it names and most of the list stay in sight (at
        // 80x24 a box hid all but two of the list's rows).
        assert!(
            rows.iter().any(|r| r.contains("   5 ") && r.contains('→')),
            "{w}x{h}: call 5's row hidden:\n{text}"
        );
        let listed = rows.iter().filter(|r| r.contains('→')).count();
        assert!(listed >= 4, "{w}x{h}: {listed} call rows shown:\n{text}");
        a.update(key(KeyCode::Char('n')));
        assert!(!screen(&mut a, w, h).contains("continue from call 5 with"));
    }
}

/// With the timeline pane open over the gauge, `e` explains the pane's plot and list
/// (it explained the hidden gauge).
#[test]
fn e_over_the_timeline_explains_its_plot() {
    for (w, h) in SIZES {
        let mut a = on_call(5);
        a.update(key(KeyCode::Char('e')));
        assert_eq!(a.top_layer().map(Layer::kind), Some("explain"));
        let text = screen(&mut a, w, h);
        assert!(
            text.contains("What the timeline's plot and list are"),
            "{w}x{h}:\n{text}"
        );
        assert!(!text.contains("What the gauge's numbers are"), "{text}");
        if (w, h) == (120, 40) {
            for needle in [
                "Call 5 (selected",
                "per-call limit",
                "str() chars",
                "░",
                "█",
            ] {
                assert!(text.contains(needle), "{needle} missing:\n{text}");
            }
        }
        a.update(key(KeyCode::Char('e')));
        assert!(a.top_layer().is_none());
    }
}

#[test]
fn the_gauge_says_the_api_count_is_synthetic_under_the_scripted_model() {
    let mut a = tour_app();
    for (w, h) in SIZES {
        let text = screen(&mut a, w, h);
        assert!(
            text.contains("synthetic API") || text.contains("(synthetic)"),
            "{text}"
        );
        assert!(!text.contains("last summary call: API"), "{text}");
    }
    // A real provider's count is the API's, not synthetic.
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::Usage {
        input_tokens: Some(1_234),
        output_tokens: None,
        cached_input_tokens: None,
    }));
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("API 1,234"), "{text}");
    assert!(!text.contains("synthetic"), "{text}");
}

#[test]
fn the_gauge_labels_its_warning_marks() {
    let mut a = tour_app();
    assert!(screen(&mut a, 120, 40).contains("┊70% ┊90%"));
    assert!(screen(&mut a, 80, 24).contains("70"));
}

#[test]
fn an_empty_history_is_empty_not_two_chars() {
    let mut a = app();
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("empty / 50,000 chars"), "{text}");
    assert!(!text.contains("2 / 50,000"), "{text}");
}

#[test]
fn history_replaced_counts_messages_not_the_chars_of_an_empty_list() {
    let mut a = app();
    a.update(Msg::Agent(AgentEvent::HistoryReplaced {
        messages: 2,
        history: Arc::new(vec![Message::user_text("one"), Message::user_text("two")]),
    }));
    let row = ctxlab::tui::event_rows::row_text(&a.events()[0].kind);
    assert!(
        row.starts_with("history replaced: empty -> 2 messages ("),
        "{row}"
    );
    assert!(!row.contains("2->"), "{row}");
}

#[test]
fn w_keeps_the_fixed_parts_one_size_in_every_call() {
    let a = tour_app();
    let b = of_timeline(a.timeline());
    let calls = &a.timeline().calls;
    // Calls with the same system prompt and tools: the same tokens for them, whatever the
    // call's count (the scripted model's was scaled into them: ~74 at call 30, ~21 at 34).
    let mut seen: Vec<(Option<Arc<str>>, usize, u64, u64)> = Vec::new();
    for (c, call) in b.calls.iter().zip(calls) {
        let key = (call.system.clone(), call.tools.len());
        let s = c.tokens_of("system_prompt");
        let d = c.tokens_of("tool_definitions");
        match seen.iter().find(|x| x.0 == key.0 && x.1 == key.1) {
            Some(x) => assert_eq!((x.2, x.3), (s, d), "call {}", c.call),
            None => seen.push((key.0, key.1, s, d)),
        }
    }
    assert!(!seen.is_empty());
}

#[test]
fn w_labels_its_top_bar_and_names_every_letter_drawn() {
    let last = tour_app().timeline().calls.len();
    let mut a = on_call(last);
    a.update(key(KeyCode::Char('w')));
    let v = a.context_view().unwrap();
    let drawn: Vec<char> = ctxlab::tui::app::LETTERS
        .iter()
        .filter(|(k, _, _)| v.breakdown().calls.iter().any(|c| c.tokens_of(k) > 0))
        .map(|(_, l, _)| *l)
        .collect();
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("this call's request by category"), "{text}");
    assert!(text.contains("every call stacked by category"), "{text}");
    for (_, l, name) in ctxlab::tui::app::LETTERS
        .iter()
        .filter(|x| drawn.contains(&x.1))
    {
        assert!(
            text.contains(&format!("{l} {name}")),
            "letter {l} unnamed:\n{text}"
        );
    }
    // U (user text) is in the columns though not in the last call: the legend names it.
    assert!(drawn.contains(&'U'));
}

#[test]
fn e_explains_the_gauge_and_esc_returns() {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('e')));
    assert_eq!(a.top_layer().map(Layer::kind), Some("explain"));
    let text = screen(&mut a, 120, 40);
    for needle in ["context_limit", "SYNTHETIC", "tiktoken", "70%", "summary"] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    a.update(key(KeyCode::Esc));
    assert!(a.top_layer().is_none());
}

#[test]
fn e_explains_the_w_bars_over_the_view_and_returns_to_it() {
    let last = tour_app().timeline().calls.len();
    let mut a = on_call(last);
    a.update(key(KeyCode::Char('w')));
    a.update(key(KeyCode::Char('e')));
    let kinds: Vec<&str> = a.layers().iter().map(Layer::kind).collect();
    assert_eq!(kinds, vec!["context", "explain"]);
    let text = screen(&mut a, 120, 40);
    assert!(
        text.contains(&format!("What call {last}'s bars are")),
        "{text}"
    );
    assert!(text.contains("estimate"), "{text}");
    assert!(text.contains("Top bar"), "{text}");
    a.update(key(KeyCode::Char('e')));
    assert_eq!(a.top_layer().map(Layer::kind), Some("context"));
}

/// Builds the app a snapshot shows, given the tour's last call.
type MakeApp = fn(usize) -> App;

#[test]
fn snapshots() {
    let last = tour_app().timeline().calls.len();
    let shots: [(&str, MakeApp); 5] = [
        ("explain_gauge", |_| {
            let mut a = tour_app();
            a.update(key(KeyCode::Char('e')));
            a
        }),
        ("explain_w", |last| {
            let mut a = on_call(last);
            a.update(key(KeyCode::Char('w')));
            a.update(key(KeyCode::Char('e')));
            a
        }),
        ("config_strategy", |_| {
            let mut a = tour_app();
            open_config(&mut a);
            a.update(key(KeyCode::Char('G')));
            a.update(key(KeyCode::Char('l')));
            a
        }),
        ("explain_timeline", |_| {
            let mut a = on_call(5);
            a.update(key(KeyCode::Char('e')));
            a
        }),
        ("continue_asked", |_| {
            let mut a = on_call(5);
            a.update(key(KeyCode::Char('x')));
            a
        }),
    ];
    for (name, make) in shots {
        let mut a = make(last);
        for (w, h) in SIZES {
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), masked(screen(&mut a, w, h)));
        }
    }
}

#[test]
fn the_w_explanation_says_whether_the_call_was_scaled() {
    let a = tour_app();
    let b = of_timeline(a.timeline());
    let (mut scaled, mut unscaled) = (0, 0);
    for c in &b.calls {
        let Some(rec) = c.recorded_tokens else {
            continue;
        };
        let text = ctxlab::tui::app::call_paragraphs(c, &b.counting, true).join(" ");
        if c.total_tokens == rec {
            scaled += 1;
            assert!(text.contains("are scaled so the call sums to it"), "{text}");
        } else {
            unscaled += 1;
            // Only when the fixed parts alone are above the count is nothing scaled.
            let fixed = c.tokens_of("system_prompt") + c.tokens_of("tool_definitions");
            assert!(fixed > rec, "call {}: {fixed} <= {rec}", c.call);
            assert!(text.contains("nothing is scaled"), "{text}");
        }
        assert!(text.contains("synthetic"), "{text}");
    }
    assert!(
        scaled > 0 && unscaled > 0,
        "{scaled} scaled, {unscaled} not"
    );
}
