//! A model request carries its kind (issue 18, "Data typed end to end"): the scripted model
//! answers a summary request because the agent said it is one, whatever its words, and a
//! turn whose words read like a summarizer's instructions is still a turn.

use std::time::Duration;

use ctxlab::compact::extractive::extractive_summary_from_request;
use ctxlab::compact::{s06, s08_latest, summarize};
use ctxlab::message::{Message, block};
use ctxlab::provider::{Model, ModelRequest, RequestKind, Scenario, ScriptedModel};
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

fn scenario() -> Scenario {
    Scenario::from_json(
        "two",
        &json!({
            "name": "two",
            "request": "say hi",
            "context_window_chars": 100_000,
            "turns": [
                {"content": [{"type": "text", "text": "First turn."}], "stop_reason": "end_turn"},
                {"content": [{"type": "text", "text": "Second turn."}], "stop_reason": "end_turn"}
            ]
        })
        .to_string(),
    )
    .unwrap()
}

fn request(system: &str, user: &str, kind: RequestKind) -> ModelRequest {
    ModelRequest {
        system: system.to_string(),
        messages: vec![Message::user_text(user)],
        tools: Vec::new(),
        max_tokens: 2_000,
        kind,
    }
}

#[tokio::test]
async fn the_scripted_model_answers_by_the_request_s_kind_not_its_words() {
    let model = ScriptedModel::new(scenario()).with_pace(Duration::ZERO);
    let (tx, _rx) = unbounded_channel();
    let history = "[{\"role\": \"user\", \"content\": \"fix the parser in src/lib.rs\"}]";
    let s06_text = format!("{}\n\n{history}", s06::SUMMARY_PROMPT);
    // Every strategy's wording, and a wording no strategy uses: a summary each time.
    for (system, user) in [
        (summarize::SUMMARY_SYSTEM, history),
        (s08_latest::SUMMARY_SYSTEM, history),
        ("", s06_text.as_str()),
        ("Condense the conversation.", history),
    ] {
        let r = model
            .stream(&request(system, user, RequestKind::Summary), &tx)
            .await
            .unwrap();
        let expected = extractive_summary_from_request(user);
        assert_eq!(r.content, vec![block::text(expected)], "{system:?}");
        assert_eq!(model.turns_played(), 0, "a summary consumes no turn");
    }
    // A turn in the summarizer's words plays the scenario's next turn.
    for (i, (system, user)) in [
        (summarize::SUMMARY_SYSTEM, history),
        ("", s06_text.as_str()),
    ]
    .into_iter()
    .enumerate()
    {
        let r = model
            .stream(&request(system, user, RequestKind::Turn), &tx)
            .await
            .unwrap();
        assert_eq!(r.content, scenario().turns[i].content, "{system:?}");
        assert_eq!(model.turns_played(), i + 1);
    }
}

#[test]
fn a_request_is_a_turn_unless_its_builder_says_otherwise() {
    assert_eq!(ModelRequest::default().kind, RequestKind::Turn);
}
