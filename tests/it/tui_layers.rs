//! The covering views as layers (issue 32, "a view is one thing"): whatever view is on top
//! gets every key and mouse event and is drawn last, and nothing reaches a view beneath it.
//! Table-driven over every kind of layer, each opened the way a user opens it.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ctxlab::session::watch::Chosen;
use ctxlab::tui::app::{ConvView, Layer, Pane, Startup};
use ctxlab::tui::live::{LiveMsg, LiveOptions};
use ctxlab::tui::{App, Effect, Msg};

use crate::support::{Driver, key, screen, session, settle, type_text};

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

fn click(x: u16, y: u16) -> Msg {
    mouse(MouseEventKind::Down(MouseButton::Left), x, y)
}

fn kinds(a: &App) -> Vec<&'static str> {
    a.layers().iter().map(Layer::kind).collect()
}

/// The fake session: it has model calls, so a click on the gauge opens the context view
/// and the conversation has rows a key would move.
fn fake(dir: &Path) -> Driver {
    let mut d = session(dir, false);
    d.app.update(Msg::Start(Box::new(Startup {
        scratch_root: Some(dir.join("data/scratch")),
        ..Startup::default()
    })));
    d
}

/// Follows a file: the live view opens on top.
fn follow(a: &mut App) {
    a.update(Msg::Live(LiveMsg::Setup(
        LiveOptions::new(false).following(Chosen {
            path: PathBuf::from("/tmp/project/s1.jsonl"),
            why: "named".into(),
            scope: None,
        }),
    )));
    let fx = a.update(Msg::LoopStarted);
    assert!(fx.iter().any(|e| matches!(e, Effect::Follow(_))));
}

fn press(a: &mut App, c: char) -> Vec<Effect> {
    a.update(key(KeyCode::Char(c)))
}

/// Opens a view of `kind` the way a user does; returns the driver.
fn open(kind: &str, dir: &Path) -> Driver {
    let mut d = fake(dir);
    let a = &mut d.app;
    match kind {
        "help" => {
            press(a, '?');
        }
        "legend" => {
            press(a, 'l');
        }
        "config" => {
            press(a, 'i');
            type_text(a, "/config");
            a.update(key(KeyCode::Enter));
        }
        "diff" => {
            press(a, 't');
            a.update(key(KeyCode::Enter));
        }
        "viewer" => {
            press(a, '1');
            press(a, 'o');
        }
        "compare" => {
            press(a, 'C');
        }
        "context" => {
            press(a, '1');
            press(a, 'w');
        }
        "requests" => {
            let path = dir.join("capture-1-1.jsonl");
            crate::capture_view::write_fixture(&path);
            let fx = crate::support::open_session(a, path);
            settle(a, fx);
            let fx = press(a, 'R');
            settle(a, fx);
        }
        "live" => follow(a),
        other => panic!("no such kind {other}"),
    }
    assert_eq!(
        d.app.top_layer().map(Layer::kind),
        Some(kind),
        "{kind} is on top"
    );
    d
}

const KINDS: [&str; 9] = [
    "help", "legend", "config", "diff", "viewer", "compare", "context", "requests", "live",
];

/// What the panes beneath hold that a key or a click would change.
fn beneath(a: &App) -> (Pane, Pane, usize, usize, bool) {
    (
        a.focus(),
        a.main(),
        a.conversation().list(ConvView::Model).selected,
        a.events_state().list().selected,
        a.timeline_view().is_some(),
    )
}

#[test]
fn with_any_view_on_top_a_click_anywhere_lands_on_it_and_opens_nothing_beneath() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let mut d = open(kind, dir.path());
        let (layers, panes) = (kinds(&d.app), beneath(&d.app));
        // Every tenth cell of the screen, the gauge, the panes and the input among them.
        for y in (0..40).step_by(3) {
            for x in (0..120).step_by(10) {
                d.app.update(click(x, y));
                assert_eq!(kinds(&d.app), layers, "{kind}: a click at {x},{y}");
            }
        }
        let g = d.app.areas().unwrap().gauge;
        d.app.update(click(g.x + g.width / 2, g.y + g.height / 2));
        assert_eq!(kinds(&d.app), layers, "{kind}: a click on the gauge");
        assert_eq!(beneath(&d.app), panes, "{kind}: a click reached the panes");
        d.app.update(mouse(MouseEventKind::ScrollUp, 5, 5));
        assert_eq!(
            beneath(&d.app),
            panes,
            "{kind}: the wheel moved a pane beneath"
        );
        assert_eq!(kinds(&d.app), layers, "{kind}: the wheel");
    }
}

#[test]
fn with_any_view_on_top_keys_go_to_it_and_esc_closes_it_alone() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let mut d = open(kind, dir.path());
        let (layers, panes) = (kinds(&d.app), beneath(&d.app));
        // Keys every pane beneath would take: move, another pane, the timeline.
        for k in [KeyCode::Up, KeyCode::Char('k'), KeyCode::Char('g')] {
            d.app.update(key(k));
            assert_eq!(beneath(&d.app), panes, "{kind}: {k:?} reached the panes");
            assert_eq!(kinds(&d.app), layers, "{kind}: {k:?}");
        }
        let fx = d.app.update(key(KeyCode::Esc));
        if kind == "live" {
            // `ctxlab watch`'s own view has nothing beneath it to return to: Esc quits.
            assert_eq!(fx, vec![Effect::Quit], "{kind}");
            continue;
        }
        assert_eq!(
            kinds(&d.app),
            layers[..layers.len() - 1].to_vec(),
            "{kind}: Esc closes the view on top and only it"
        );
        assert_eq!(beneath(&d.app), panes, "{kind}: Esc reached the panes");
    }
}

/// The defect this came from: with the live view open, a click where the gauge sits
/// underneath opened the context view beneath it, and keys then went to that unseen view
/// (the hint line showed its keys).
#[test]
fn with_the_live_view_open_a_click_on_the_gauge_opens_nothing_beneath_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = open("live", dir.path());
    let g = d.app.areas().unwrap().gauge;
    d.app.update(click(g.x + g.width / 2, g.y + g.height / 2));
    assert!(
        d.app.context_view().is_none(),
        "a click under the live view opened the context view beneath it"
    );
    let hints = screen(&mut d.app, 120, 40)
        .lines()
        .nth(39)
        .unwrap()
        .to_string();
    assert!(hints.contains("G latest"), "the live view's keys: {hints}");
    // Esc goes to the view on top: `ctxlab watch`'s own live view, which quits.
    let fx = d.app.update(key(KeyCode::Esc));
    assert_eq!(fx, vec![Effect::Quit]);
}

/// A view opened from another sits on top of it: the help over the live view takes the
/// keys, and Esc comes back to the live view, still following.
#[test]
fn a_view_opened_from_another_is_on_top_and_esc_returns_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = open("live", dir.path());
    press(&mut d.app, '?');
    assert_eq!(kinds(&d.app), vec!["live", "help"]);
    let g = d.app.areas().unwrap().gauge;
    d.app.update(click(g.x + 1, g.y + 1));
    assert_eq!(kinds(&d.app), vec!["live", "help"]);
    assert!(
        d.app.update(key(KeyCode::Esc)).is_empty(),
        "no follower stops"
    );
    assert_eq!(kinds(&d.app), vec!["live"]);
    // Opening one of a kind already open replaces it, so a kind is never open twice.
    press(&mut d.app, '?');
    press(&mut d.app, '?');
    assert_eq!(kinds(&d.app), vec!["live"], "`?` in the help closes it");
}

/// The view drawn last is the one with the keys: the live view's frame covers the
/// context view's title when both are open, and the hint line offers the top one's keys.
#[test]
fn the_view_on_top_is_drawn_last() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = open("context", dir.path());
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("Where the context goes"), "{text}");
    follow(&mut d.app);
    assert_eq!(kinds(&d.app), vec!["context", "live"]);
    let text = screen(&mut d.app, 120, 40);
    assert!(!text.contains("Where the context goes"), "{text}");
    assert!(text.contains(" Live "), "{text}");
    assert!(text.lines().nth(39).unwrap().contains("G latest"));
}

/// The drawing order, cell by cell: with the help opened over any other view, every cell of
/// the help's frame is exactly what the help draws there alone (`Layer::draw`), so the view
/// beneath it, which covers the same cells, was drawn before it and nothing after.
#[test]
fn with_the_help_over_any_view_every_cell_of_its_frame_is_the_helps() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    let draw = |paint: &dyn Fn(&mut ratatui::Frame)| -> Buffer {
        let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
        t.draw(|f| paint(f)).unwrap();
        t.backend().buffer().clone()
    };
    // Not over the help itself or the legend (`?` there replaces them).
    for kind in KINDS
        .into_iter()
        .filter(|k| !["help", "legend"].contains(k))
    {
        let dir = tempfile::tempdir().unwrap();
        let mut d = open(kind, dir.path());
        d.app.update(Msg::Resize(120, 40));
        press(&mut d.app, '?');
        assert_eq!(
            kinds(&d.app),
            vec![kind, "help"],
            "{kind}: `?` opens the help over it"
        );
        let app = &d.app;
        let whole = draw(&|f| ctxlab::tui::render(app, f));
        let full = Rect::new(0, 0, 120, 40);
        let ctx = app.draw_ctx();
        let alone = draw(&|f| app.top_layer().unwrap().draw(f, full, &ctx));
        // The help's frame: the box around every cell it drew.
        let drawn: Vec<(u16, u16)> = (0..40)
            .flat_map(|y| (0..120).map(move |x| (x, y)))
            .filter(|&(x, y)| alone[(x, y)].symbol() != " ")
            .collect();
        let (x0, x1) = (
            drawn.iter().map(|c| c.0).min(),
            drawn.iter().map(|c| c.0).max(),
        );
        let (y0, y1) = (
            drawn.iter().map(|c| c.1).min(),
            drawn.iter().map(|c| c.1).max(),
        );
        let (x0, x1, y0, y1) = (x0.unwrap(), x1.unwrap(), y0.unwrap(), y1.unwrap());
        assert!(x1 - x0 > 60 && y1 - y0 > 20, "{kind}: the help's frame");
        // What is beneath shows outside it, so it was drawn.
        assert_ne!(whole, alone, "{kind}: the view beneath drew nothing");
        for y in y0..=y1 {
            for x in x0..=x1 {
                assert_eq!(
                    whole[(x, y)],
                    alone[(x, y)],
                    "{kind}: cell {x},{y} of the help's frame was drawn over"
                );
            }
        }
    }
}
