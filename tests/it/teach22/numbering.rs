//! One numbering of messages everywhere: from 0, the index in the session, as the
//! conversation pane shows it (calls and compactions count from 1). The compare view used
//! to number the same message one higher than the conversation.

use crate::support::{key, screen, settle};
use crossterm::event::KeyCode;
use ctxlab::agent::answer_cut_text;
use ctxlab::compact::PipelineConfig;
use ctxlab::message::{Message, block};
use ctxlab::tui::App;
use serde_json::json;

/// A request, three bash calls with their results, an answer.
fn session() -> Vec<Message> {
    let mut out = vec![Message::user_text("read three files")];
    for id in ["a", "b", "c"] {
        out.push(Message::assistant_blocks(vec![block::tool_use(
            id,
            "bash",
            json!({"command": format!("cat {id}.txt")}),
        )]));
        out.push(Message::user_blocks(vec![block::tool_result(
            id,
            format!("contents of {id}.txt {}", "x".repeat(300)),
        )]));
    }
    out.push(Message::assistant_blocks(vec![block::text("done")]));
    out
}

#[test]
fn the_compare_view_numbers_a_message_as_the_conversation_does() {
    let mut a = App::new(
        std::env::temp_dir().join("ctxlab-teach22-numbering"),
        "scripted".into(),
        PipelineConfig::default(),
        true,
    );
    a.update(key(KeyCode::Esc));
    let messages = session();
    let fx = crate::compare_view::open_compare_live(&mut a, &messages, None);
    assert!(settle(&mut a, fx).is_empty());
    // The last call, the piece of `c`'s result: message 6 of the session.
    a.update(key(KeyCode::Char('G')));
    let v = a.compare().expect("open");
    let pieces = v.pieces();
    let c = pieces
        .iter()
        .position(|p| p.tool_use_id.as_deref() == Some("c") && p.message == 6)
        .expect("c's result is a piece of message 6");
    assert!(messages[6].is_tool_result_message());
    while a.compare().map(|v| v.piece()) != Some(c) {
        let before = a.compare().map(|v| v.piece());
        a.update(key(KeyCode::Char(if before < Some(c) { 'j' } else { 'k' })));
        assert_ne!(a.compare().map(|v| v.piece()), before, "the cursor moves");
    }
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen(&mut a, w, h);
        assert!(
            text.contains("msg 6 ·"),
            "msg numbered from 0 at {w}x{h}:\n{text}"
        );
        assert!(!text.contains("msg 7 ·"), "{text}");
    }
}

#[test]
fn an_answer_cut_names_its_message_from_0() {
    let text = answer_cut_text(1_000, 1);
    assert!(text.contains("(message 1:"), "{text}");
}
