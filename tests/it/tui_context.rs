//! Where the context goes in the workbench (`w` in the timeline) and in the exported page,
//! on the real tour: the view opens on the timeline's selected call, moves, closes, is
//! offered in the hint line; every call's categories sum to its size; snapshots at 80x24
//! and 120x40.

use crate::common::html::check;
use crate::common::tour::tour;
use crate::support::{key, screen};
use crate::tui_timeline::tour_app;
use crossterm::event::KeyCode;
use ctxlab::timeline::breakdown::of_timeline;
use ctxlab::tui::App;

pub(crate) fn masked(text: String) -> String {
    text.replace(&tour().workspace.display().to_string(), "/workspace")
}

/// The tour with the timeline open on call `number`.
pub(crate) fn on_call(number: usize) -> App {
    let mut a = tour_app();
    a.update(key(KeyCode::Char('t')));
    a.update(key(KeyCode::Char('g')));
    for _ in 1..number {
        a.update(key(KeyCode::Char('j')));
    }
    a
}

#[test]
fn w_in_the_timeline_opens_the_selected_call_by_category() {
    let mut a = on_call(3);
    assert!(masked(screen(&mut a, 120, 40)).contains("w context"));
    a.update(key(KeyCode::Char('w')));
    let v = a.context_view().expect("the view opens");
    assert_eq!(v.selected(), 2);
    let call = v.call().unwrap();
    assert_eq!(call.call, 3);
    let sum: u64 = call.categories.iter().map(|c| c.tokens).sum();
    assert_eq!(sum, call.total_tokens);
    // The live request records its system prompt and tools.
    assert!(call.tokens_of("system_prompt") > 0);
    assert!(call.tokens_of("tool_definitions") > 0);
    assert_eq!(call.tokens_of("not_in_file"), 0);
    a.update(key(KeyCode::Char('l')));
    assert_eq!(a.context_view().unwrap().selected(), 3);
    a.update(key(KeyCode::Char('h')));
    a.update(key(KeyCode::Char('h')));
    assert_eq!(a.context_view().unwrap().selected(), 1);
    a.update(key(KeyCode::Esc));
    assert!(a.context_view().is_none());
    assert!(a.timeline_view().is_some(), "Esc closes only the view");
}

#[test]
fn every_live_call_sums_and_compaction_shows_as_summaries() {
    let a = tour_app();
    let b = of_timeline(a.timeline());
    assert_eq!(b.calls.len(), a.timeline().calls.len());
    for c in &b.calls {
        let sum: u64 = c.categories.iter().map(|x| x.tokens).sum();
        assert_eq!(sum, c.total_tokens, "call {}", c.call);
        assert!(c.estimate, "a live call names no model: an estimate");
    }
    // The tour compacts: a later call carries the summary, the first none.
    assert_eq!(b.calls[0].tokens_of("summaries"), 0);
    assert!(b.calls.iter().any(|c| c.tokens_of("summaries") > 0));
}

#[test]
fn the_exported_page_stacks_each_call_by_category() {
    let a = tour_app();
    let page = ctxlab::timeline::html::page(a.timeline());
    check(&page).unwrap();
    assert!(page.contains("<h2 id=\"context\">Where the context goes</h2>"));
    let stacks = page.matches("<g class=\"stack\">").count();
    assert_eq!(stacks, a.timeline().calls.len());
    assert!(page.contains("data-category=\"summaries\""));
    assert!(page.contains("data-category=\"system_prompt\""));
}

#[test]
fn snapshot_context_view() {
    let last = tour_app().timeline().calls.len();
    let mut a = on_call(last);
    a.update(key(KeyCode::Char('w')));
    for (w, h) in [(80, 24), (120, 40)] {
        let text = masked(screen(&mut a, w, h));
        insta::assert_snapshot!(format!("context_{w}x{h}"), text);
    }
}
