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
            body: None,
        },
        AgentEvent::MessageAppended {
            message: Message::assistant_blocks(vec![ctxlab::message::block::text("done")]),
        },
    ]
}

#[test]
fn s06_html_limit_line_is_drawn_in_chars() {
    let t = Timeline::from_events(Source::Live, 0, &s06_events());
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

// ----- the compare view -----

use ctxlab::compare::{Kept, Reach};
use ctxlab::message::block;
use ctxlab::tui::app::{CompareView, Layer, parse_strategies};
use ctxlab::tui::{Effect, render};
use serde_json::json;

use crate::support::{settle, type_text};

fn result_text(t: &str) -> String {
    format!("{t} {}", "x".repeat(200))
}

/// One assistant message asks for five results at once (the next call is the first to
/// send them: s08's micro replaces the two oldest before the model sees any), then two
/// more turns with one result each.
pub(crate) fn teaching_session() -> Vec<Message> {
    let ids = ["a", "b", "c", "d", "e"];
    let mut out = vec![
        Message::user_text("look at five files"),
        Message::assistant_blocks(
            ids.iter()
                .map(|id| block::tool_use(*id, "bash", json!({"command": format!("cat {id}.txt")})))
                .collect(),
        ),
        Message::user_blocks(
            ids.iter()
                .map(|id| block::tool_result(*id, result_text(&format!("contents of {id}.txt"))))
                .collect(),
        ),
    ];
    for (i, id) in ["f", "g"].iter().enumerate() {
        out.push(Message::assistant_blocks(vec![
            block::text(format!("step {i}")),
            block::tool_use(*id, "bash", json!({"command": format!("cat {id}.txt")})),
        ]));
        out.push(Message::user_blocks(vec![block::tool_result(
            *id,
            result_text(&format!("contents of {id}.txt")),
        )]));
    }
    out.push(Message::assistant_blocks(vec![block::text(
        "read them all",
    )]));
    out
}

/// Opens the compare view the way a person does, through messages only: `messages` are
/// appended as the agent appends them (the live session), then `C` opens the default pair
/// or `/compare NAMES` the strategies named. The label is the live session's.
pub(crate) fn open_compare_live(
    a: &mut App,
    messages: &[Message],
    strategies: Option<Vec<Strategy>>,
) -> Vec<Effect> {
    for m in messages {
        let fx = a.update(Msg::Agent(AgentEvent::MessageAppended {
            message: m.clone(),
        }));
        // The token counts the appends ask for; the compare view's jobs are the caller's.
        settle(a, fx);
    }
    match strategies {
        None => a.update(key(KeyCode::Char('C'))),
        Some(list) => {
            a.update(key(KeyCode::Char('i')));
            let names: Vec<&str> = list.iter().map(|s| s.name()).collect();
            type_text(a, &format!("/compare {}", names.join(",")));
            a.update(key(KeyCode::Enter))
        }
    }
}

/// An app (clock at 0, no colour) with the compare view open on the teaching session
/// and every replay done.
fn compare_app(strategies: Option<Vec<Strategy>>) -> App {
    let mut a = App::new(
        std::env::temp_dir().join("ctxlab-compare-view-test"),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    a.update(key(KeyCode::Esc));
    let fx = open_compare_live(&mut a, &teaching_session(), strategies);
    let rest = settle(&mut a, fx);
    assert!(rest.is_empty());
    a
}

/// The screen's text as one line: borders gone, runs of spaces and line ends as one
/// space (so a wrapped sentence reads whole).
fn flat(screen: &str) -> String {
    screen
        .replace(['┃', '│'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn view(a: &App) -> &CompareView {
    a.compare().expect("the compare view is open")
}

fn piece_of(v: &CompareView, tool_use_id: &str) -> usize {
    v.pieces()
        .iter()
        .position(|p| p.tool_use_id.as_deref() == Some(tool_use_id))
        .unwrap()
}

#[test]
fn compare_replays_each_strategy_as_a_job_in_turn() {
    let mut a = App::new(
        std::env::temp_dir(),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    let fx = open_compare_live(&mut a, &teaching_session(), None);
    // The default: the current strategy (s08) against guarded, one job at a time.
    assert_eq!(
        view(&a).strategies(),
        vec![Strategy::S08, Strategy::Guarded]
    );
    let [Effect::Work(first)] = fx.as_slice() else {
        panic!("one job: {fx:?}");
    };
    assert!(a.animating(), "the spinner turns while a replay runs");
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("replaying s08 (1 of 2)"), "{text}");
    let next = a.update(Msg::Done(first.clone().run()));
    assert_eq!(view(&a).runs().len(), 1);
    let [Effect::Work(second)] = next.as_slice() else {
        panic!("the second job: {next:?}");
    };
    let text = screen(&mut a, 120, 40);
    assert!(text.contains("replaying guarded (2 of 2)"), "{text}");
    assert!(a.update(Msg::Done(second.clone().run())).is_empty());
    assert!(view(&a).complete());
    assert!(view(&a).job().is_none());
    // A late result of a closed view changes nothing.
    a.update(key(KeyCode::Esc));
    assert!(a.compare().is_none());
    assert!(a.update(Msg::Done(first.clone().run())).is_empty());
    assert!(a.compare().is_none());
}

#[test]
fn compare_opens_on_the_teaching_point_s08_replaced_unseen_guarded_did_not() {
    let a = compare_app(None);
    let v = view(&a);
    assert_eq!(v.calls(), 4);
    // Call 2 is the first to send the batch; s08's micro replaced `a` before that.
    assert_eq!((v.call(), v.piece()), (1, piece_of(v, "a")));
    let a_piece = piece_of(v, "a");
    let s = v.kept(0, 1, a_piece).unwrap();
    assert_eq!((s.kept, s.reach), (Kept::Placeholder, Reach::Lost));
    assert!(v.unseen_by(0, a_piece));
    let g = v.kept(1, 1, a_piece).unwrap();
    assert_eq!((g.kept, g.reach), (Kept::Whole, Reach::InContext));
    assert!(!v.unseen_by(1, a_piece));
    assert_eq!(v.unseen_points(), vec![(1, a_piece), (1, piece_of(v, "b"))]);
}

#[test]
fn compare_selection_moves_across_calls_and_pieces() {
    let mut a = compare_app(None);
    a.update(key(KeyCode::Char('g')));
    assert_eq!(view(&a).call(), 0);
    // Before call 1 only the user's text has entered: the piece is clamped to it.
    assert_eq!(view(&a).pieces_at(0), 1);
    assert_eq!(view(&a).piece(), 0);
    a.update(key(KeyCode::Char('j')));
    assert_eq!(view(&a).piece(), 0, "no second piece before call 1");
    assert!(view(&a).kept(0, 0, 1).is_none(), "not entered yet");
    a.update(key(KeyCode::Right));
    a.update(key(KeyCode::Char('l')));
    assert_eq!(view(&a).call(), 2);
    for _ in 0..3 {
        a.update(key(KeyCode::Down));
    }
    assert_eq!(view(&a).piece(), 3);
    a.update(key(KeyCode::Char('k')));
    assert_eq!(view(&a).piece(), 2);
    a.update(key(KeyCode::Char('G')));
    assert_eq!(view(&a).call(), 3);
    a.update(key(KeyCode::Right));
    assert_eq!(view(&a).call(), 3, "clamped at the last call");
    a.update(key(KeyCode::PageDown));
    a.update(key(KeyCode::PageDown));
    let last = view(&a).pieces_at(3) - 1;
    assert_eq!(view(&a).piece(), last);
    // Back to call 1: the piece follows the pieces that existed then.
    a.update(key(KeyCode::Home));
    assert_eq!((view(&a).call(), view(&a).piece()), (0, 0));
    // `n` walks the unseen replacements, wrapping around.
    a.update(key(KeyCode::Char('n')));
    let v = view(&a);
    assert_eq!((v.call(), v.piece()), (1, piece_of(v, "a")));
    a.update(key(KeyCode::Char('n')));
    let v = view(&a);
    assert_eq!((v.call(), v.piece()), (1, piece_of(v, "b")));
    a.update(key(KeyCode::Char('n')));
    let v = view(&a);
    assert_eq!((v.call(), v.piece()), (1, piece_of(v, "a")));
    // `?` opens the help over the view; Esc closes the help, then the view.
    a.update(key(KeyCode::Char('?')));
    assert!(matches!(a.top_layer(), Some(Layer::Help(_))));
    a.update(key(KeyCode::Esc));
    assert!(matches!(a.top_layer(), Some(Layer::Compare(_))));
    a.update(key(KeyCode::Char('q')));
    assert!(a.compare().is_none(), "q closes the view, it does not quit");
}

#[test]
fn compare_slash_command_names_the_strategies() {
    assert_eq!(
        parse_strategies("s06,guarded").unwrap(),
        vec![Strategy::S06, Strategy::Guarded]
    );
    assert_eq!(parse_strategies("all").unwrap(), Strategy::ALL.to_vec());
    // The notice line shows these words: each variant's message is checked.
    assert_eq!(
        parse_strategies("s06").unwrap_err().to_string(),
        "name at least two strategies, e.g. /compare s08,guarded (or all)",
        "one is not a comparison"
    );
    assert_eq!(
        parse_strategies("s06,s06").unwrap_err().to_string(),
        "s06 is named twice"
    );
    assert!(
        parse_strategies("s06,nope")
            .unwrap_err()
            .to_string()
            .contains("nope")
    );
    // In the workbench, on the live session.
    let mut a = App::new(
        std::env::temp_dir(),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    for m in teaching_session() {
        a.update(Msg::Agent(AgentEvent::MessageAppended { message: m }));
    }
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Char('i')));
    let fx = type_text(&mut a, "/compare s06,s08-latest,guarded");
    assert!(fx.is_empty());
    let fx = a.update(key(KeyCode::Enter));
    settle(&mut a, fx);
    let v = view(&a);
    assert_eq!(
        v.strategies(),
        vec![Strategy::S06, Strategy::S08Latest, Strategy::Guarded]
    );
    assert_eq!(v.label(), "live session");
    assert!(v.complete());
    assert_eq!(v.session().len(), teaching_session().len());
    // `C` opens it with the default pair; with no message there is nothing to compare.
    a.update(key(KeyCode::Esc));
    let fx = a.update(key(KeyCode::Char('C')));
    settle(&mut a, fx);
    assert_eq!(
        view(&a).strategies(),
        vec![Strategy::S08, Strategy::Guarded]
    );
    let mut empty = App::new(
        std::env::temp_dir(),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    empty.update(key(KeyCode::Esc));
    assert!(empty.update(key(KeyCode::Char('C'))).is_empty());
    assert!(empty.compare().is_none());
}

#[test]
fn compare_view_shows_the_unseen_replacement() {
    let mut a = compare_app(None);
    for (w, h) in [(80, 24), (120, 40)] {
        let text = flat(&screen(&mut a, w, h));
        // The s08 row marks call 2, the selected piece says what each strategy kept.
        let replaced = if w >= 100 {
            "replaced at call 2 before the model ever saw it"
        } else {
            "replaced unseen at call 2"
        };
        assert!(text.contains(replaced), "{text}");
        assert!(text.contains("▁!MM"), "the s08 row marks call 2: {text}");
        assert!(text.contains("guarded kept whole (in_context)"), "{text}");
        assert!(text.contains("placeholder LOST !"), "the s08 cell: {text}");
        assert!(text.contains("s08 kept placeholder (lost)"), "{text}");
    }
}

#[test]
fn compare_view_snapshots() {
    let mut a = compare_app(None);
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(format!("compare_{w}x{h}"), screen(&mut a, w, h));
    }
    let mut all = compare_app(Some(Strategy::ALL.to_vec()));
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(format!("compare_all_{w}x{h}"), screen(&mut all, w, h));
    }
}

#[test]
fn compare_view_renders_while_rendering_is_pure() {
    // Drawing twice gives the same screen and changes nothing in the view.
    let mut a = compare_app(None);
    let before = (view(&a).call(), view(&a).piece());
    let one = screen(&mut a, 120, 40);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    t.draw(|f| render(&a, f)).unwrap();
    assert_eq!(one, crate::support::buffer_text(t.backend().buffer()));
    assert_eq!(before, (view(&a).call(), view(&a).piece()));
}

/// The workbench under `strategy` after one exchange, at 120x40.
fn titles_app(strategy: Strategy) -> App {
    let config = PipelineConfig::for_strategy(strategy);
    let mut a = App::new(std::env::temp_dir(), "scripted".into(), config, true);
    a.update(Msg::Agent(AgentEvent::Ready {
        provider: "scripted".into(),
        workspace: std::env::temp_dir(),
        config,
    }));
    for m in teaching_session() {
        a.update(Msg::Agent(AgentEvent::MessageAppended { message: m }));
    }
    a.update(key(KeyCode::Esc));
    a
}

#[test]
fn titles_legend_and_help_name_the_strategys_unit() {
    for (strategy, tag) in [
        (Strategy::S08, "· chars"),
        (Strategy::Guarded, "· chars"),
        (Strategy::S06, "· tokens"),
        (Strategy::S08Latest, "· JSON chars"),
    ] {
        let mut a = titles_app(strategy);
        let text = screen(&mut a, 120, 40);
        let conv = text.lines().find(|l| l.contains("1 Conversation")).unwrap();
        assert!(conv.contains(tag), "{strategy}: {conv}");
        let events = text.lines().find(|l| l.contains("2 Events")).unwrap();
        assert!(events.contains(tag), "{strategy}: {events}");
        a.update(key(KeyCode::Char('t')));
        let text = screen(&mut a, 120, 40);
        let timeline = text.lines().find(|l| l.contains("6 Timeline")).unwrap();
        assert!(timeline.contains(tag), "{strategy}: {timeline}");
        a.update(key(KeyCode::Esc));
        a.update(key(KeyCode::Char('?')));
        let help = screen(&mut a, 120, 40);
        assert!(
            help.contains(&format!(
                "Keys · {strategy} counts sizes in {}",
                tag.trim_start_matches("· ")
            )),
            "{help}"
        );
        a.update(key(KeyCode::Esc));
        a.update(key(KeyCode::Char('l')));
        let legend = flat(&screen(&mut a, 120, 40));
        let unit = match strategy {
            Strategy::S06 => "s06 counts tokens",
            Strategy::S08Latest => "s08-latest counts JSON chars",
            _ => "counts chars of Python str()",
        };
        assert!(legend.contains(unit), "{strategy}: {legend}");
    }
}

#[test]
fn compare_takes_the_transcript_open_in_the_transcripts_pane() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join(".transcripts");
    std::fs::create_dir_all(&t).unwrap();
    let lines: Vec<String> = teaching_session()
        .iter()
        .map(|m| serde_json::to_string(&m.to_value()).unwrap())
        .collect();
    std::fs::write(t.join("transcript_1.jsonl"), lines.join("\n")).unwrap();
    let mut a = App::new(
        dir.path().to_path_buf(),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    // A live session too: the open transcript wins while its pane is in view.
    a.update(Msg::Agent(AgentEvent::MessageAppended {
        message: Message::user_text("live"),
    }));
    a.update(key(KeyCode::Esc));
    let fx = a.update(key(KeyCode::Char('4')));
    settle(&mut a, fx);
    let fx = a.update(key(KeyCode::Enter));
    settle(&mut a, fx);
    assert!(a.transcripts().open().is_some(), "the transcript opened");
    let fx = a.update(key(KeyCode::Char('C')));
    settle(&mut a, fx);
    let v = view(&a);
    assert_eq!(v.label(), ".transcripts/transcript_1.jsonl");
    assert_eq!(**v.session(), teaching_session());
    assert!(v.complete());
    assert_eq!(v.unseen_points().len(), 2, "s08 replaced a and b unseen");
    // Closed, and back in the conversation: the live session.
    a.update(key(KeyCode::Esc));
    a.update(key(KeyCode::Char('1')));
    let fx = a.update(key(KeyCode::Char('C')));
    settle(&mut a, fx);
    assert_eq!(view(&a).label(), "live session");
    assert_eq!(view(&a).session().len(), 1);
}
