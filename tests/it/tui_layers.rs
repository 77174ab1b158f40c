//! The covering views as layers: whatever view is on top gets the keys and the mouse, and
//! nothing reaches a view beneath it (issue 32, "a view is one thing").

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ctxlab::session::watch::Chosen;
use ctxlab::tui::live::{LiveMsg, LiveOptions};
use ctxlab::tui::{App, Effect, Msg};

use crate::support::{Driver, key, session};

fn click(x: u16, y: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

/// The fake session (it has model calls, so a click on the gauge would open the context
/// view) with the live view following a file on top of it.
fn live_over_a_session(dir: &std::path::Path) -> Driver {
    let mut d = session(dir, false);
    d.app.update(Msg::Live(LiveMsg::Setup(LiveOptions::new(false).following(
        Chosen {
            path: PathBuf::from("/tmp/project/s1.jsonl"),
            why: "named".into(),
            scope: None,
        },
    ))));
    let fx = d.app.update(Msg::LoopStarted);
    assert!(fx.iter().any(|e| matches!(e, Effect::Follow(_))));
    d
}

fn gauge_centre(a: &App) -> (u16, u16) {
    let g = a.areas().unwrap().gauge;
    (g.x + g.width / 2, g.y + g.height / 2)
}

#[test]
fn with_the_live_view_open_a_click_on_the_gauge_opens_nothing_beneath_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = live_over_a_session(dir.path());
    assert!(d.app.live_view().is_some());
    let (x, y) = gauge_centre(&d.app);
    d.app.update(click(x, y));
    assert!(
        d.app.context_view().is_none(),
        "a click under the live view opened the context view beneath it"
    );
    // Esc goes to the view on top: the live view closes and its follower stops.
    let fx = d.app.update(key(KeyCode::Esc));
    assert_eq!(fx, vec![Effect::StopFollowing]);
    assert!(d.app.live_view().is_none());
}
