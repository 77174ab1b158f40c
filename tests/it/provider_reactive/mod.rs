//! The agent over the real HTTP providers against a local stub that behaves like llama.cpp's
//! `llama-server` with a small window: it counts the prompt, answers an over-long one with
//! its real overflow body (`400`, `exceed_context_size_error`, `n_prompt_tokens`, `n_ctx`;
//! or Anthropic's `prompt is too long: N tokens > M maximum`), and answers everything else.
//! What is checked: a request that alone exceeds the window is refused without a summary
//! request and leaves the history as it was; an overflowing session recovers through a
//! reactive compaction sized to the window the server named (and when a later attempt finds
//! nothing more to summarize, the server's error is shown); `/compact` fits a configured
//! window and flags a summary cut at its token limit; a cut-off answer runs no tool; the
//! cached share of the prompt reaches the gauge.

use std::sync::Arc;

use crate::common::agent::{HistoryMirror, stop_reason, until_done};
use crate::support::{Driver, screen};
use ctxlab::agent::{AgentEvent, AgentSetup, ErrorKind, INCOMPLETE_RESULT, UserCommand, spawn};
use ctxlab::compact::{Change, PipelineConfig, Stage, Strategy};
use ctxlab::message::Message;
use ctxlab::provider::{OpenAiModel, RetryPolicy};
use ctxlab::tools::Workspace;
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, ResponseTemplate};

mod stub;
use stub::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_window_on_its_own_is_refused_without_a_summary() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let mut s = session(wire, "stop", None).await;
        let long = "Please read this very long request carefully. ".repeat(60);
        let done = s.turn(&long).await;
        assert_eq!(stop_reason(&done), Some("error"));
        let errs = errors(&done);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, ErrorKind::ContextTooLong);
        let tokens = prompt_tokens(&s.bodies().await[0]);
        assert!(tokens > WINDOW);
        let numbers = format!("{tokens} tokens > {WINDOW} (the server's count)");
        assert!(errs[0].1.contains(&numbers), "{}", errs[0].1);
        assert!(
            errs[0]
                .1
                .contains("the request exceeds the model's context window on its own"),
            "{}",
            errs[0].1
        );
        assert!(
            errs[0].1.contains("the request was not kept"),
            "{}",
            errs[0].1
        );
        // One request, no summary request, no reactive stage, no transcript: the history
        // is as it was before the request (empty), the request that cannot be sent is not
        // kept in it.
        assert_eq!(s.bodies().await.len(), 1);
        assert!(s.summary_bodies().await.is_empty());
        assert!(report_of(&done, Stage::ReactiveCompact).is_none());
        assert!(s.mirror.messages.is_empty(), "{:?}", s.mirror.messages);
        assert!(!s.ws.path().join(".transcripts").exists());

        // The session goes on: a short request is answered, and sent alone.
        let done = s.turn("hi").await;
        assert_eq!(stop_reason(&done), Some("end_turn"));
        let last = s.bodies().await.pop().unwrap();
        assert!(!last.to_string().contains("very long request"));
        assert_eq!(s.mirror.messages.len(), 2);
    }
}

/// Under `guarded` (three reactive attempts) a request over the window on its own is
/// first summarized into the compacted message, whose authoritative request still holds
/// it; the retry overflows again and the next attempt finds nothing but that summary to
/// summarize. Since a compaction of this turn already ran, the user sees the server's
/// error as it said it, not "exceeds the window on its own" (which would claim the
/// history was left as it was).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_reactive_attempt_that_finds_nothing_shows_the_servers_error() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let config = PipelineConfig::for_strategy(Strategy::Guarded);
        let mut s = session_with(wire, "stop", None, config).await;
        let long = "Please read this very long request carefully. ".repeat(60);
        let done = s.turn(&long).await;
        assert_eq!(stop_reason(&done), Some("error"));
        // The first attempt compacted: one summary request, one reactive report.
        assert_eq!(s.summary_bodies().await.len(), 1);
        assert!(report_of(&done, Stage::ReactiveCompact).is_some());
        let errs = errors(&done);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, ErrorKind::ContextTooLong);
        let last = s.bodies().await.pop().unwrap();
        let tokens = prompt_tokens(&last);
        assert!(tokens > WINDOW, "the retry overflowed too: {tokens}");
        let server_words = match wire {
            Wire::OpenAi => format!(
                "request ({tokens} tokens) exceeds the available context size ({WINDOW} tokens)"
            ),
            Wire::Anthropic => format!("prompt is too long: {tokens} tokens > {WINDOW} maximum"),
        };
        assert!(errs[0].1.contains(&server_words), "{}", errs[0].1);
        assert!(
            !errs[0].1.contains("on its own"),
            "not the first attempt's explanation: {}",
            errs[0].1
        );
        // The compacted history stays: the summary holding the request.
        assert_eq!(s.mirror.messages.len(), 1, "{:?}", s.mirror.messages);
        assert!(s.mirror.messages[0].text().unwrap().contains(long.trim()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_own_tool_result_overflows_keeps_its_history_for_compact() {
    let mut s = session(Wire::OpenAi, "stop", None).await;
    std::fs::write(s.ws.path().join("big.txt"), "pollen count 42\n".repeat(200)).unwrap();
    let done = s.turn(READ_BIG).await;
    assert_eq!(stop_reason(&done), Some("error"));
    let errs = errors(&done);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, ErrorKind::ContextTooLong);
    assert!(errs[0].1.contains("the last 3 messages"), "{}", errs[0].1);
    assert!(
        errs[0].1.contains("the history is unchanged"),
        "{}",
        errs[0].1
    );
    assert!(s.summary_bodies().await.is_empty());
    // The request, the call and its result stay: the work of the turn is not thrown away.
    assert_eq!(s.mirror.messages.len(), 3);
    assert_eq!(s.mirror.messages[0], Message::user_text(READ_BIG));

    // `/compact` rescues the session: the summary request fits the window learned from the
    // error, and the next request is answered.
    let seen = s.compact(None).await;
    assert!(errors(&seen).is_empty(), "{:?}", errors(&seen));
    assert_eq!(stop_reason(&seen), Some("compacted"));
    s.mirror.apply_all(&seen);
    assert_eq!(s.summary_bodies().await.len(), 1);
    assert!(prompt_tokens(&s.summary_bodies().await[0]) <= WINDOW);
    let done = s.turn("and now?").await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflowing_session_recovers_through_a_reactive_compaction_sized_to_the_window() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let mut s = session(wire, "stop", None).await;
        let prompt = |n: usize| format!("Fact {n}: {}", "the bees like lavender. ".repeat(13));
        let mut recovered = None;
        for n in 1..=8 {
            let done = s.turn(&prompt(n)).await;
            assert_eq!(
                stop_reason(&done),
                Some("end_turn"),
                "turn {n}: {:?}",
                errors(&done)
            );
            if let Some(report) = report_of(&done, Stage::ReactiveCompact) {
                recovered = Some((n, report));
                break;
            }
        }
        let (turn, report) = recovered.expect("the session overflowed within 8 turns");
        assert!(turn >= 3, "something preceded the tail: turn {turn}");
        // The window came from the overflow error; the summary request was sized to it.
        let summaries = s.summary_bodies().await;
        assert_eq!(summaries.len(), 1);
        let input = summary_input(&summaries[0]);
        assert!(
            input.chars().count() <= input_chars_for_window(),
            "{} chars",
            input.chars().count()
        );
        assert_eq!(output_limit(&summaries[0]), WINDOW / 4);
        assert!(prompt_tokens(&summaries[0]) <= WINDOW);
        assert!(
            report.reason.contains(&format!(
                "summary input cut to {} chars to fit a {WINDOW}-token window",
                input_chars_for_window()
            )),
            "{}",
            report.reason
        );
        assert!(
            report.reason.contains("the server counted ")
                && report.reason.contains(" tokens > 512"),
            "{}",
            report.reason
        );
        // The retried request fits, and starts with the reactive summary.
        let last = s.bodies().await.pop().unwrap();
        assert!(prompt_tokens(&last) <= WINDOW);
        assert!(
            s.mirror.messages[0]
                .text()
                .unwrap()
                .starts_with("[Reactive compact]")
        );
        assert_eq!(s.mirror.messages.len(), 7, "summary, 5 kept, the answer");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_fits_a_configured_window_and_flags_a_summary_cut_at_its_limit() {
    let mut s = session(Wire::OpenAi, "length", Some(WINDOW)).await;
    for n in 0..3 {
        let done = s
            .turn(&format!("{n}: {}", "notes about the hive. ".repeat(12)))
            .await;
        assert_eq!(stop_reason(&done), Some("end_turn"));
    }
    let seen = s.compact(Some("the hives".into())).await;
    assert!(errors(&seen).is_empty(), "{:?}", errors(&seen));
    assert_eq!(stop_reason(&seen), Some("compacted"));
    let report = report_of(&seen, Stage::CompactHistory).expect("a compact_history report");
    let summaries = s.summary_bodies().await;
    assert_eq!(
        summaries.len(),
        1,
        "sized before sending: no failed first try"
    );
    assert_eq!(output_limit(&summaries[0]), WINDOW / 4);
    assert!(prompt_tokens(&summaries[0]) <= WINDOW);
    assert!(
        report.reason.contains("to fit a 512-token window"),
        "{}",
        report.reason
    );
    assert!(
        report.reason.contains("summary max_tokens 2,000 -> 128"),
        "{}",
        report.reason
    );
    assert!(
        report
            .reason
            .contains("the summary stopped at its 128-token limit and may be incomplete"),
        "{}",
        report.reason
    );
    assert!(matches!(
        &report.changes[..],
        [Change::Summarized {
            summary_cut: true,
            ..
        }]
    ));
    assert!(report.summary().contains("summary cut at its token limit"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_without_a_known_window_learns_it_from_the_summarys_overflow() {
    let mut s = session(Wire::OpenAi, "stop", None).await;
    // Just under the window for a normal call; the summary's own instructions push the
    // unsized summary request over it.
    let done = s.turn(&"the queen is marked blue. ".repeat(60)).await;
    assert_eq!(stop_reason(&done), Some("end_turn"));
    let seen = s.compact(None).await;
    assert!(errors(&seen).is_empty(), "{:?}", errors(&seen));
    assert_eq!(stop_reason(&seen), Some("compacted"));
    let summaries = s.summary_bodies().await;
    assert_eq!(summaries.len(), 2, "one overflow, one sized retry");
    assert!(prompt_tokens(&summaries[0]) > WINDOW);
    assert!(prompt_tokens(&summaries[1]) <= WINDOW);
    let report = report_of(&seen, Stage::CompactHistory).unwrap();
    assert!(
        report.reason.contains("to fit a 512-token window"),
        "{}",
        report.reason
    );
    assert!(
        s.ws.path()
            .join(".transcripts/transcript_1700000000.jsonl")
            .is_file()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_answer_runs_none_of_its_tool_calls() {
    let server = MockServer::start().await;
    // The answer stops at its token limit inside a `write_file` call's arguments.
    let chunk = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let body = [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_w", "type": "function",
                   "function": {"name": "write_file", "arguments": "{\"path\": \"notes.txt\", \"content\": \"aaaa"}}]}),
            None,
        ),
        chunk(json!({}), Some("length")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let ws = tempfile::tempdir().unwrap();
    let model = OpenAiModel::new("m")
        .unwrap()
        .with_base_url(server.uri())
        .with_retry(RetryPolicy::no_retries());
    let setup = AgentSetup::new(
        Arc::new(model),
        Workspace::new(ws.path()).unwrap(),
        PipelineConfig::default(),
    );
    let (commands, mut events, _handle) = spawn(setup);
    commands
        .send(UserCommand::Submit("write the notes".into()))
        .unwrap();
    let done = until_done(&mut events, STEP).await;
    assert_eq!(stop_reason(&done), Some("max_tokens"));
    assert!(
        !done
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolStarted { .. }))
    );
    assert!(!ws.path().join("notes.txt").exists());
    let mut mirror = HistoryMirror::default();
    mirror.apply_all(&done);
    let results = mirror.messages.last().unwrap();
    let result = results.tool_results().next().unwrap();
    assert_eq!(result["tool_use_id"], "call_w");
    assert_eq!(result["content"], INCOMPLETE_RESULT);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cached_share_reaches_the_usage_event_and_the_gauge() {
    let mut s = session(Wire::Anthropic, "stop", None).await;
    let done = s.turn("hello there").await;
    let usage = done
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Usage {
                input_tokens,
                cached_input_tokens,
                ..
            } => Some((*input_tokens, *cached_input_tokens)),
            _ => None,
        })
        .expect("a usage event");
    let tokens = prompt_tokens(&s.bodies().await[0]);
    assert_eq!(usage, (Some(tokens), Some(tokens - 1)));

    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::new(dir.path(), true);
    d.send(AgentEvent::Usage {
        input_tokens: Some(2_081),
        output_tokens: Some(7),
        cached_input_tokens: Some(2_080),
    });
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("API 2,081 (2,080 cached)"), "{text}");
    // Without a cache the gauge reads as before.
    d.send(AgentEvent::Usage {
        input_tokens: Some(81),
        output_tokens: Some(7),
        cached_input_tokens: None,
    });
    let text = screen(&mut d.app, 120, 40);
    assert!(text.contains("API 81"), "{text}");
    assert!(!text.contains("cached"), "{text}");
}

/// An answer stopped at its output limit (`finish_reason: "length"`, `stop_reason:
/// "max_tokens"`) is not a normal row: an `AnswerCut` event names the limit and the
/// message, and the workbench's events pane and hint line say it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_answer_is_marked_in_the_events_and_the_workbench() {
    for (wire, sse) in [
        (
            Wire::OpenAi,
            [
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "1. a\n2. b\n3."}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
            ]
            .iter()
            .map(|c| format!("data: {c}\n\n"))
            .collect::<String>()
                + "data: [DONE]\n\n",
        ),
        (
            Wire::Anthropic,
            format!(
                "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 0}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "1. a\n2. b\n3."}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 512}}),
            ),
        ),
    ] {
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream"))
            .mount(&server)
            .await;
        let model: Arc<dyn ctxlab::provider::Model> = match wire {
            Wire::OpenAi => Arc::new(
                OpenAiModel::new("m")
                    .unwrap()
                    .with_base_url(server.uri())
                    .with_retry(RetryPolicy::no_retries()),
            ),
            Wire::Anthropic => Arc::new(
                ctxlab::provider::AnthropicModel::new(ctxlab::provider::ApiKey::new("k"), "m")
                    .unwrap()
                    .with_base_url(server.uri())
                    .with_retry(RetryPolicy::no_retries()),
            ),
        };
        let ws = tempfile::tempdir().unwrap();
        let mut setup = AgentSetup::new(
            model,
            Workspace::new(ws.path()).unwrap(),
            PipelineConfig::default(),
        );
        setup.max_tokens = 512;
        let (commands, mut events, _handle) = spawn(setup);
        commands
            .send(UserCommand::Submit("list everything".into()))
            .unwrap();
        let done = until_done(&mut events, STEP).await;
        assert_eq!(stop_reason(&done), Some("max_tokens"));
        let cut: Vec<_> = done
            .iter()
            .filter_map(|e| match e {
                AgentEvent::AnswerCut { max_tokens, index } => Some((*max_tokens, *index)),
                _ => None,
            })
            .collect();
        assert_eq!(cut, vec![(512, 1)]);

        let dir = tempfile::tempdir().unwrap();
        let mut d = Driver::new(dir.path(), true);
        for ev in done {
            d.send(ev);
        }
        let text = screen(&mut d.app, 120, 40);
        assert!(text.contains("answer cut at max_tokens: 512"), "{text}");
    }
}
