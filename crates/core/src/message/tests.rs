use super::*;
use serde_json::json;

#[test]
fn round_trip_keeps_unknown_fields_and_key_order() {
    let text = r#"{"content":[{"zeta":1,"type":"mystery","alpha":[1.5,null]},{"type":"tool_use","name":"bash","id":"t1","input":{"b":1,"a":2},"cache_control":{"type":"ephemeral"}}],"role":"assistant","extra":true}"#;
    let m: Message = serde_json::from_str(text).unwrap();
    assert_eq!(serde_json::to_string(&m).unwrap(), text);
    assert!(m.has_tool_use());
    assert_eq!(m.tool_uses().count(), 1);
}

#[test]
fn string_content_is_never_a_tool_result_message() {
    let m = Message::user_text("tool_result");
    assert!(!m.is_tool_result_message());
    let texts = Message::user_blocks(vec![block::text("hi")]);
    assert!(!texts.is_tool_result_message());
    let r = Message::user_blocks(vec![block::tool_result("a", "x")]);
    assert!(r.is_tool_result_message());
    let a = Message::assistant_blocks(vec![block::tool_result("a", "x")]);
    assert!(!a.is_tool_result_message());
}

#[test]
fn bad_shapes_are_rejected_with_a_reason() {
    assert_eq!(
        Message::from_value(json!([1])),
        Err(MessageError::NotAnObject("a list"))
    );
    assert_eq!(
        Message::from_value(json!({"content": "x"})),
        Err(MessageError::MissingRole)
    );
    assert_eq!(
        Message::from_value(json!({"role": "user", "content": 3})),
        Err(MessageError::BadContent("a number"))
    );
    assert_eq!(
        Message::from_value(json!({"role": "user", "content": ["x"]})),
        Err(MessageError::BadBlock {
            index: 0,
            found: "a string"
        })
    );
    assert!(
        Message::from_value(
            json!({"role": "user", "content": [{"type": "tool_result", "content": null}]})
        )
        .is_ok()
    );
}

#[test]
fn tool_results_in_document_order() {
    let h = vec![
        Message::user_text("go"),
        Message::user_blocks(vec![
            block::tool_result("a", "1"),
            block::text("t"),
            block::tool_result("b", "2"),
        ]),
        Message::assistant_blocks(vec![block::tool_result("x", "no")]),
        Message::user_blocks(vec![block::tool_result("c", "3")]),
    ];
    let ids: Vec<_> = tool_results(&h)
        .map(|(m, b, v)| (m, b, block_tool_id(v).unwrap().to_string()))
        .collect();
    assert_eq!(
        ids,
        vec![(1, 0, "a".into()), (1, 2, "b".into()), (3, 0, "c".into())]
    );
}

#[test]
fn pairing_errors_name_the_message() {
    let ok = vec![
        Message::user_text("go"),
        Message::assistant_blocks(vec![block::tool_use("a", "bash", json!({}))]),
        Message::user_blocks(vec![block::tool_result("a", "x")]),
    ];
    assert_eq!(tool_pairing_error(&ok), None);
    assert!(
        tool_pairing_error(&ok[..2])
            .unwrap()
            .starts_with("message 1: tool_use")
    );
    let orphan = vec![ok[0].clone(), ok[2].clone()];
    assert!(
        tool_pairing_error(&orphan)
            .unwrap()
            .starts_with("message 1: tool_result")
    );
    let wrong_role = vec![Message::assistant_blocks(vec![block::tool_result(
        "a", "x",
    )])];
    assert!(
        tool_pairing_error(&wrong_role)
            .unwrap()
            .contains("in a assistant message")
    );
}

#[test]
fn mutation_drops_the_cached_size() {
    let mut m = Message::user_blocks(vec![block::tool_result("a", "xyz")]);
    let before = m.estimate_size();
    m.blocks_mut().unwrap()[0]["content"] = json!("x");
    assert_eq!(m.estimate_size(), before - 2);
}

#[test]
fn history_size_is_python_list_length() {
    assert_eq!(estimate_size(&[]), 2);
    let one = vec![Message::user_text("hi")];
    // {'role': 'user', 'content': 'hi'} is 33 chars, inside [ ].
    assert_eq!(estimate_size(&one), 35);
    let two = vec![Message::user_text("hi"), Message::user_text("hi")];
    assert_eq!(estimate_size(&two), 2 + 33 + 2 + 33);
}

/// The fingerprint is the message's: the same for a copy and for the same text read again,
/// another for another message, and computed again after the blocks change.
#[test]
fn the_fingerprint_follows_the_message() {
    let text = r#"{"role":"user","content":[{"type":"text","text":"fix a.rs"}]}"#;
    let m: Message = serde_json::from_str(text).unwrap();
    let again: Message = serde_json::from_str(text).unwrap();
    assert_eq!(m.fingerprint(), again.fingerprint());
    assert_eq!(m.clone().fingerprint(), m.fingerprint());
    assert_ne!(
        m.fingerprint(),
        Message::user_text("fix a.rs").fingerprint()
    );
    assert_ne!(
        Message::user_text("a").fingerprint(),
        Message::user_text("b").fingerprint()
    );
    let mut changed = m.clone();
    changed.blocks_mut().unwrap()[0]["text"] = json!("fix b.rs");
    assert_ne!(changed.fingerprint(), m.fingerprint());
}

/// The text key is the same for equal messages whatever the order of their keys, kept by a
/// copy, another for another role or text, and computed again after the blocks change.
#[test]
fn the_text_key_follows_the_role_and_texts() {
    let a: Message =
        serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"fix a.rs"}]}"#)
            .unwrap();
    let b: Message =
        serde_json::from_str(r#"{"content":[{"text":"fix a.rs","type":"text"}],"role":"user"}"#)
            .unwrap();
    assert_eq!(a, b);
    assert_eq!(a.text_key(), b.text_key());
    assert_eq!(a.clone().text_key(), a.text_key());
    let answer = Message::assistant_blocks(vec![json!({"type": "text", "text": "fix a.rs"})]);
    assert_ne!(a.text_key(), answer.text_key());
    let mut changed = a.clone();
    changed.blocks_mut().unwrap()[0]["text"] = json!("fix b.rs");
    assert_ne!(changed.text_key(), a.text_key());
}

/// A copy of a message shares its fields until one of them is changed, which changes that
/// copy alone.
#[test]
fn copies_share_their_fields_until_one_changes() {
    let m = Message::user_blocks(vec![block::tool_result("a", "xyz")]);
    let size = m.estimate_size();
    let copy = m.clone();
    assert!(copy.shares_fields(&m));
    assert!(!Message::user_blocks(vec![block::tool_result("a", "xyz")]).shares_fields(&m));
    let mut changed = m.clone();
    changed.blocks_mut().unwrap()[0]["content"] = json!("x");
    assert!(!changed.shares_fields(&m));
    assert_eq!(changed.estimate_size(), size - 2);
    assert_eq!(m.estimate_size(), size);
    assert_eq!(copy, m);
}
