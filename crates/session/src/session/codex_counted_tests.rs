//! A numbers-only read that counts each replacement history while parsing
//! (`codex_counted`) gives the session the full parse gives (issue 36): on every Codex
//! fixture, on a generated rollout of repeated compactions, and on histories of every odd
//! shape a hostile or future file may hold.

use super::codex::read_codex;
use super::codex_counted::parse_codex_counting_here;
use super::detail::Detail;
use super::lines::parse_json_lines_here;
use super::model::{Session, SessionFormat};
use super::numbers::SessionNumbers;

/// The session a numbers-only read makes of `text`, its lines parsed by `counting` or
/// whole.
fn numbers_read(text: &str, counting: bool) -> Session {
    let lines = if counting {
        parse_codex_counting_here(text, 1)
    } else {
        parse_json_lines_here(text, 1)
    };
    let format = super::detect_text(text).unwrap_or(SessionFormat::Codex);
    read_codex(lines, format, Detail::Numbers)
}

fn assert_same(text: &str, what: &str) -> Session {
    let counted = numbers_read(text, true);
    let full = numbers_read(text, false);
    assert_eq!(format!("{counted:?}"), format!("{full:?}"), "{what}");
    counted
}

#[test]
fn every_codex_fixture_reads_the_same_counted_as_parsed_whole() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sessions");
    let mut with_histories = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("codex") || !name.ends_with(".jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let s = assert_same(&text, &name);
        if s.compactions.iter().any(|c| c.counted.is_some()) {
            with_histories += 1;
        }
    }
    // The fixtures the real Codex wrote do hold counted histories (the path is taken).
    assert!(with_histories >= 2, "{with_histories}");
}

/// Codex 0.171's rollout repeated with growing histories (as scripts/gen_codex_session.py
/// does): the counts of every compaction, its numbers and warnings are the full parse's.
#[test]
fn a_rollout_of_repeated_compactions_counts_as_parsed_whole() {
    let rollout = include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl");
    let mut text = String::new();
    for rep in 0..4 {
        for line in rollout.lines().skip(usize::from(rep > 0)) {
            text.push_str(&line.replace("msg_", &format!("msg_r{rep}_")));
            text.push('\n');
        }
    }
    let s = assert_same(&text, "repeated");
    assert!(s.compactions.len() >= 8, "{}", s.compactions.len());
    assert!(s.compactions.iter().all(|c| c.counted.is_some()));
    assert!(SessionNumbers::of(&s).calls > 0);
}

/// One `compacted` line whose history is `items`, with `metadata` and `message`.
fn compacted(items: &str, metadata: &str, message: &str) -> String {
    format!(
        concat!(
            r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{{"id":"s","cwd":"/p"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Fix it"}}]}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"compacted","payload":{{"message":{message},"replacement_history":{items}{metadata}}}}}"#,
            "\n"
        ),
        message = message,
        items = items,
        metadata = metadata,
    )
}

#[test]
fn histories_of_every_shape_count_as_parsed_whole() {
    let items = [
        // Typed, injected, developer, system, the summary by its text and by its mark.
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"  <environment_context>x"}]}"#,
        r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}"#,
        r#"{"type":"message","role":"system","content":[{"type":"text","text":"S"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"The summary \u00e9"}]}"#,
        r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"The summary \u00e9"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":["compaction.summary"]}}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"y"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":"compaction.summary"}}"#,
        // Two texts, an image, text of the wrong kind or shape, no content, content no list.
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:x"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"reasoning_text","text":"a"},7,"s",{"type":"input_text","text":5}]}"#,
        r#"{"type":"message","role":"user"}"#,
        r#"{"type":"message","role":"user","content":"plain"}"#,
        r#"{"type":"message","role":7,"content":[{"type":"input_text","text":"a"}]}"#,
        r#"{"type":"message","role":"tool","content":[]}"#,
        // Answers: text, refusal, none.
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text"}]}"#,
        // Other kinds: calls, outputs, reasoning, the encrypted summary, unknown, odd.
        r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}"#,
        r#"{"type":"function_call","arguments":"{}","call_id":"c2"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"done"}"#,
        r#"{"type":"custom_tool_call_output","output":"done"}"#,
        r#"{"type":"local_shell_call","id":"l1","action":{"cmd":"ls"}}"#,
        r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}]}"#,
        r#"{"type":"reasoning","content":[{"type":"reasoning_text","text":"t"}]}"#,
        r#"{"type":"reasoning","encrypted_content":"gAAA"}"#,
        r#"{"type":"compaction","encrypted_content":"gAAA"}"#,
        r#"{"type":"ghost_snapshot"}"#,
        r#"{"type":"web_search_call","id":"w","action":{"query":"q"}}"#,
        r#"{"type":"mystery"}"#,
        r#"{}"#,
        r#"{"type":5}"#,
        r#"[1,2]"#,
        r#""text""#,
        r#"null"#,
        r#"{"type":"message","type":"function_call","name":"n","call_id":"c3","role":"user"}"#,
    ];
    let history = format!("[{}]", items.join(","));
    let n = items.len();
    let retained = r#"{"retained_source":{"id":"x"}}"#;
    let metadatas = [
        String::new(),
        format!(
            r#","replacement_history_metadata":[{}]"#,
            vec![retained; n].join(",")
        ),
        // Shorter than the history, null and odd entries, a list that is no list.
        format!(
            r#","replacement_history_metadata":[{retained},{{"retained_source":null}},7,{{}},[1],{retained}]"#
        ),
        r#","replacement_history_metadata":{"a":1}"#.to_string(),
    ];
    for metadata in &metadatas {
        for message in [r#""The summary \u00e9""#, r#""""#, "7", "null"] {
            let text = compacted(&history, metadata, message);
            let s = assert_same(&text, &format!("{metadata} / {message}"));
            assert!(s.compactions[0].counted.is_some(), "{metadata} / {message}");
        }
    }
    // A history that is no list, a payload that is no object, a line cut short: as before.
    for odd in [
        compacted("{}", "", r#""m""#),
        compacted("7", "", r#""m""#),
        compacted(r#"[{"type":"message"}"#, "", r#""m""#),
        "{\"type\":\"compacted\",\"payload\":[\"replacement_history\"]}\n".to_string(),
        "{\"type\":\"compacted\",\"payload\":{\"replacement_history\":[]},\"payload\":1}\n"
            .to_string(),
    ] {
        assert_same(&odd, &odd);
    }
}
