//! The `?` overlay at the smallest supported size (80x24): every key's description reads
//! whole (long ones wrap between words instead of being cut at the frame), and scrolling
//! reaches the last row.

use crate::support::{key, screen, session};
use crossterm::event::KeyCode;
use ctxlab::tui::keys::HELP;

#[test]
fn help_descriptions_wrap_and_the_last_one_is_reachable_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    crate::support::focus(&mut d.app, '1');
    d.app.update(key(KeyCode::Char('?')));
    // Every screen while scrolling down, one row at a time, read as one text.
    let mut seen = String::new();
    for _ in 0..HELP.len() * 3 {
        seen.push_str(&screen(&mut d.app, 80, 24));
        d.app.update(key(KeyCode::Char('j')));
    }
    // The words of the overlay's rows, frame characters taken out.
    let words: std::collections::HashSet<String> = seen
        .split(|c: char| c.is_whitespace() || "┃│".contains(c))
        .map(str::to_string)
        .collect();
    for (keys, what) in HELP {
        for word in what.split_whitespace() {
            assert!(
                words.contains(word),
                "{keys:?}: the word {word:?} of {what:?} is never shown whole"
            );
        }
    }
    // G shows the last row at the bottom.
    d.app.update(key(KeyCode::Char('G')));
    let last = screen(&mut d.app, 80, 24);
    let (_, what) = HELP[HELP.len() - 1];
    let tail = what.split_whitespace().last().unwrap();
    assert!(
        last.contains(tail),
        "G does not reach the last row:\n{last}"
    );
}
