//! A tool_use the model sent without an id or a name: never run with `""`, answered with an
//! error the model reads, and the tool pair stays valid (a missing id gets a synthetic one).

use serde_json::{Value, json};

use super::{Answer, Harness, text};
use crate::common::agent::{check_tool_pairs, result_block, result_text, stop_reason};
use ctxlab::agent::AgentEvent;
use ctxlab::message::{Message, block};

/// The tool_result block answering `id` in the request's message `index`, with its text.
fn error_result(messages: &[Message], index: usize, id: &str) -> String {
    let b = result_block(&messages[index], id).unwrap_or_else(|| panic!("no result for {id}"));
    assert_eq!(b.get("is_error"), Some(&Value::Bool(true)), "{id}: {b}");
    result_text(b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_use_without_an_id_gets_a_synthetic_id_and_an_error_instead_of_running() {
    let uses = vec![
        json!({"type": "tool_use", "name": "bash", "input": {"command": "echo ran > missing.txt"}}),
        json!({"type": "tool_use", "id": "", "name": "bash", "input": {"command": "echo ran > empty.txt"}}),
    ];
    let mut h = Harness::start(vec![Answer::Reply(uses, "tool_use"), text("understood")]);
    let done = h.turn("run it").await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    assert!(
        !h.ws.path().join("missing.txt").exists(),
        "a call without id ran"
    );
    assert!(
        !h.ws.path().join("empty.txt").exists(),
        "a call with id \"\" ran"
    );
    let failed: Vec<&str> = done
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished {
                id, is_error: true, ..
            } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed, ["ctxlab_missing_id_1_0", "ctxlab_missing_id_1_1"]);

    // The model's next request pairs each tool_use with its error under the same new id.
    let reqs = h.main_requests();
    assert_eq!(reqs.len(), 2);
    let msgs = &reqs[1].messages;
    check_tool_pairs(msgs).unwrap();
    let ids: Vec<&str> = msgs[1]
        .tool_uses()
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .collect();
    assert_eq!(ids, ["ctxlab_missing_id_1_0", "ctxlab_missing_id_1_1"]);
    for id in ids {
        let text = error_result(msgs, 2, id);
        assert!(
            text.starts_with("Not run: the tool call had no id") && text.contains(id),
            "{text}"
        );
    }
    h.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_use_without_a_name_is_an_error_the_model_sees_and_the_batch_goes_on() {
    let uses = vec![
        json!({"type": "tool_use", "id": "toolu_noname", "input": {"command": "echo ran > a.txt"}}),
        json!({"type": "tool_use", "id": "toolu_emptyname", "name": "", "input": {"command": "echo ran > b.txt"}}),
        block::tool_use(
            "toolu_ok",
            "bash",
            json!({"command": "echo second > second.txt"}),
        ),
    ];
    let mut h = Harness::start(vec![Answer::Reply(uses, "tool_use"), text("understood")]);
    let done = h.turn("run them").await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    assert!(!h.ws.path().join("a.txt").exists());
    assert!(!h.ws.path().join("b.txt").exists());
    assert!(
        h.ws.path().join("second.txt").is_file(),
        "the valid call after them still ran"
    );

    let msgs = &h.main_requests()[1].messages;
    check_tool_pairs(msgs).unwrap();
    for id in ["toolu_noname", "toolu_emptyname"] {
        let text = error_result(msgs, 2, id);
        assert_eq!(
            text,
            "Not run: the tool call has no tool name. Call one of the offered tools by its name.",
            "{id}"
        );
    }
    let ok = result_block(&msgs[2], "toolu_ok").unwrap();
    assert_eq!(ok.get("is_error"), None, "{ok}");
    h.quit().await;
}
