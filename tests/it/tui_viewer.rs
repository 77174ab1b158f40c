//! The text viewer's wrapping, drawn into a `TestBackend`: long prose breaks between
//! words (a word longer than the line still breaks), wide characters take their display
//! width, and scrolling walks the same wrapped rows the renderer draws.

use crate::support::{focus, key, screen, session, type_text};
use crossterm::event::KeyCode;
use ctxlab::agent::AgentEvent;
use ctxlab::message::Message;
use ctxlab::tui::app::{Layer, OutputFile, Viewer};
use ctxlab::tui::work::{Done, Work};
use ctxlab::tui::{App, Effect, Msg};
use ctxlab::util::display_width;

/// Words of many lengths, so a char-by-char wrap would cut some of them.
fn prose(words: usize) -> String {
    const W: [&str; 9] = [
        "parser",
        "reads",
        "each",
        "quoted",
        "field",
        "until",
        "the",
        "closing",
        "delimiter",
    ];
    (0..words)
        .map(|i| format!("{}{i}", W[i % W.len()]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Opens `lines` in the viewer the way a user does: an output listed, selected in the
/// outputs pane, Enter, and the read job's text arriving.
fn open(app: &mut App, lines: Vec<String>) {
    let root = app.workspace().to_path_buf();
    let outputs = vec![OutputFile {
        relative: "long text".into(),
        bytes: 1,
        age_secs: None,
    }];
    app.update(Msg::Done(Done::FilesListed {
        root,
        outputs,
        transcripts: Vec::new(),
    }));
    focus(app, '3');
    let fx = app.update(key(KeyCode::Enter));
    let [Effect::Work(Work::ReadOutput { id, relative, .. })] = &fx[..] else {
        panic!("Enter asks for the output: {fx:?}");
    };
    app.update(Msg::Done(Done::OutputRead {
        id: *id,
        relative: relative.clone(),
        result: Ok(lines),
    }));
}

fn viewer(app: &App) -> &Viewer {
    match app.top_layer() {
        Some(Layer::Viewer(v)) => v,
        other => panic!("the viewer is not open: {other:?}"),
    }
}

/// The chars of `line` from display column `from` up to (not including) `to`.
fn columns(line: &str, from: usize, to: usize) -> String {
    let mut col = 0;
    let mut out = String::new();
    for c in line.chars() {
        if col >= from && col < to {
            out.push(c);
        }
        col += display_width(c.encode_utf8(&mut [0; 4]));
    }
    out
}

/// The text of each body row the viewer draws (without the line-number column), from the
/// screen: the rows inside the overlay's frame that start with a line number or `↪`.
fn body_rows(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.contains("┏ View"))
        .expect("the viewer's frame");
    let head = lines[top];
    let at = head.find("┏ View").unwrap();
    let left = display_width(&head[..at]);
    let right = left
        + display_width(
            &head[at..]
                .chars()
                .take_while(|&c| c != '┓')
                .collect::<String>(),
        );
    let mut out = Vec::new();
    for line in &lines[top + 1..] {
        let inner = columns(line, left + 1, right);
        let num = columns(&inner, 0, 4);
        let t = num.trim();
        if t == "↪" || (!t.is_empty() && t.chars().all(|c| c.is_ascii_digit())) {
            out.push(columns(&inner, 4, usize::MAX));
        }
    }
    out
}

#[test]
fn prose_wraps_between_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let text = prose(60);
    let words: std::collections::HashSet<&str> = text.split(' ').collect();
    open(&mut d.app, vec![text.clone()]);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let rows = body_rows(&screen(&mut d.app, w, h));
        assert!(rows.len() > 3, "the line wraps at {w}x{h}: {rows:?}");
        for row in &rows {
            for word in row.split_whitespace() {
                assert!(
                    words.contains(word),
                    "a word is cut at the pane edge at {w}x{h}: {word:?} in {row:?}"
                );
            }
        }
        // Nothing is lost or repeated: the rows read back as the line.
        let joined = rows
            .iter()
            .map(|r| r.trim_end())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined, text, "at {w}x{h}");
    }
}

#[test]
fn a_word_longer_than_the_line_still_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let path = format!(".task_outputs/tool-results/{}.txt", "x".repeat(150));
    open(&mut d.app, vec![format!("saved to {path} ok")]);
    let rows = body_rows(&screen(&mut d.app, 80, 24));
    assert_eq!(rows[0].trim_end(), "saved to", "{rows:?}");
    let rest: String = rows[1..].iter().map(|r| r.trim_end()).collect();
    assert_eq!(
        rest,
        format!("{path} ok"),
        "the long word reads whole across its cuts: {rows:?}"
    );
    assert!(rows.len() >= 4, "{rows:?}");
}

#[test]
fn wide_characters_take_their_display_width() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let cjk = (0..40)
        .map(|i| format!("解析器{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let emoji = (0..40)
        .map(|i| format!("🎉ok{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    open(&mut d.app, vec![cjk.clone(), emoji.clone()]);
    let width = 80 * 90 / 100 - 2 - 4;
    let sc = screen(&mut d.app, 80, 24);
    let rows = body_rows(&sc);
    assert!(rows.len() > 4, "{sc}");
    let words: std::collections::HashSet<&str> = cjk.split(' ').chain(emoji.split(' ')).collect();
    for row in &rows {
        assert!(
            display_width(row.trim_end()) <= width,
            "a row is wider than the pane: {row:?}"
        );
        for word in row.split_whitespace() {
            assert!(
                words.contains(word),
                "a wide word is cut: {word:?} in {row:?}"
            );
        }
    }
}

#[test]
fn scrolling_walks_the_rows_the_renderer_draws() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let lines = vec![prose(40), "short".to_string(), prose(70), prose(25)];
    open(&mut d.app, lines);
    let first = body_rows(&screen(&mut d.app, 80, 24));
    // Every row drawn at the top in turn, one `j` at a time, is the next row of the
    // whole text as drawn from the start (which needs a screen as tall as the text).
    let mut all = Vec::new();
    {
        let mut tall = session(dir.path(), true);
        open(&mut tall.app, viewer(&d.app).lines().to_vec());
        let rows = body_rows(&screen(&mut tall.app, 80, 200));
        all.extend(rows);
    }
    assert_eq!(first[..], all[..first.len()]);
    for (k, want) in all.iter().enumerate().skip(1) {
        d.app.update(key(KeyCode::Char('j')));
        let top = body_rows(&screen(&mut d.app, 80, 24));
        assert_eq!(&top[0], want, "after {k} presses of j");
    }
    // G shows the end: the last row drawn is the text's last row.
    d.app.update(key(KeyCode::Char('g')));
    d.app.update(key(KeyCode::Char('G')));
    let bottom = body_rows(&screen(&mut d.app, 80, 24));
    assert_eq!(bottom.last(), all.last(), "G shows the last wrapped row");
    let body_h = (24 * 85 / 100) - 2 - 1;
    assert_eq!(bottom.len(), body_h, "G fills the page");
}

#[test]
fn a_search_match_is_brought_to_the_top_on_its_wrapped_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    open(&mut d.app, vec!["short".to_string(), prose(70)]);
    screen(&mut d.app, 80, 24);
    d.app.update(key(KeyCode::Char('/')));
    crate::support::type_text(&mut d.app, "closing52");
    d.app.update(key(KeyCode::Enter));
    let rows = body_rows(&screen(&mut d.app, 80, 24));
    assert!(
        rows[0].split_whitespace().any(|w| w == "closing52"),
        "the match's row is drawn first, its word whole: {rows:?}"
    );
    assert!(
        viewer(&d.app).top_row() > 0,
        "the match is on a later wrapped row"
    );
}

/// At 80 columns the footer with a match still names every key (shortened, not cut).
#[test]
fn the_footer_keeps_its_keys_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    open(
        &mut d.app,
        (0..400).map(|i| format!("row {i} ok")).collect(),
    );
    screen(&mut d.app, 80, 24);
    d.app.update(key(KeyCode::Char('/')));
    crate::support::type_text(&mut d.app, "ok");
    d.app.update(key(KeyCode::Enter));
    for _ in 0..150 {
        d.app.update(key(KeyCode::Char('n')));
    }
    let text = screen(&mut d.app, 80, 24);
    let footer = text
        .lines()
        .find(|l| l.contains("match 151/400"))
        .unwrap_or_else(|| panic!("no footer:\n{text}"));
    for part in ["line 151/400", "search", "n N", "w", "Esc"] {
        assert!(footer.contains(part), "{part:?} missing: {footer}");
    }
    assert!(!footer.contains('…'), "{footer}");
}

#[test]
fn the_viewer_wraps_and_brings_a_far_match_into_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), false);
    let a = &mut d.app;
    let long = format!("{}needle{}", "a".repeat(700), "b".repeat(300));
    a.update(Msg::Agent(AgentEvent::MessageAppended {
        message: Message::user_text(format!("first line\n{long}\nlast line")),
    }));
    crate::support::focus(a, '1');
    a.update(key(KeyCode::Char('G')));
    a.update(key(KeyCode::Char('o')));
    a.update(key(KeyCode::Char('/')));
    type_text(a, "needle");
    a.update(key(KeyCode::Enter));
    let text = screen(a, 80, 24);
    let Some(Layer::Viewer(v)) = &a.top_layer() else {
        panic!("no viewer");
    };
    assert_eq!(v.matches().len(), 1);
    assert_eq!(v.top(), 1);
    assert!(v.top_row() > 0, "the match is on a later wrapped row");
    assert!(text.contains("needle"), "the match is on screen:\n{text}");
    // Without wrapping, the view scrolls sideways to the match.
    a.update(key(KeyCode::Char('w')));
    a.update(key(KeyCode::Char('n')));
    let text = screen(a, 80, 24);
    let Some(Layer::Viewer(v)) = &a.top_layer() else {
        panic!("no viewer");
    };
    assert!(v.no_wrap() && v.left() > 600, "left {}", v.left());
    assert!(text.contains("needle"), "the match is on screen:\n{text}");
    a.update(key(KeyCode::Char('h')));
    let Some(Layer::Viewer(v2)) = &a.top_layer() else {
        panic!("no viewer");
    };
    assert!(v2.left() < 700);
}
