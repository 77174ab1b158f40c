//! The Codex 0.171 reader on a rollout the real CLI wrote (tests/fixtures/sessions/
//! codex_0171.jsonl, long texts trimmed by scripts/real_agents/trim_codex_rollout.py):
//! every number is checked against the file's own records (`token_usage_record`,
//! `compacted`) and against the scripted server's log of the same run
//! (tests/fixtures/upstream/codex_0171.jsonl: each request's kind and the usage it reported).

use serde_json::Value;

use super::detail::Detail;
use super::numbers::SessionNumbers;
use super::summary::SessionSummary;
use super::*;
use crate::message::Role;

const ROLLOUT: &str = include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl");
const UPSTREAM: &str = include_str!("../../../../tests/fixtures/upstream/codex_0171.jsonl");

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn session() -> Session {
    parse_session_text(ROLLOUT).unwrap()
}

/// (response_id, input tokens, output tokens) of every `token_usage_record`, in order.
fn records() -> Vec<(String, u64, u64)> {
    lines(ROLLOUT)
        .iter()
        .filter(|l| l["type"] == "token_usage_record")
        .map(|l| {
            let p = &l["payload"];
            (
                p["response_id"].as_str().unwrap().to_string(),
                p["usage"]["input_tokens"].as_u64().unwrap(),
                p["usage"]["output_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn compacted_lines() -> Vec<Value> {
    lines(ROLLOUT)
        .into_iter()
        .filter(|l| l["type"] == "compacted")
        .map(|l| l["payload"].clone())
        .collect()
}

/// (kind, input tokens) of every request the server answered, in order.
fn upstream() -> Vec<(String, u64)> {
    lines(UPSTREAM)
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_string(),
                r["usage"]["input_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_calls_are_the_records_less_the_compactions_own() {
    let s = session();
    let own: Vec<String> = compacted_lines()
        .iter()
        .map(|p| p["compaction_response_id"].as_str().unwrap().to_string())
        .collect();
    let main: Vec<(u64, u64)> = records()
        .into_iter()
        .filter(|r| !own.contains(&r.0))
        .map(|r| (r.1, r.2))
        .collect();
    let got: Vec<(u64, u64)> = s
        .calls
        .iter()
        .map(|c| (c.usage.context_tokens(), c.usage.output_tokens))
        .collect();
    assert_eq!(got, main);
    // The server saw the same calls: every request but the summaries.
    let answered: Vec<u64> = upstream()
        .into_iter()
        .filter(|u| u.0 != "summary")
        .map(|u| u.1)
        .collect();
    let inputs: Vec<u64> = got.iter().map(|g| g.0).collect();
    assert_eq!(inputs, answered);
    // Each call is an answer in the conversation, and knows the context window.
    assert_eq!(SessionNumbers::of(&s).calls, s.calls.len());
    assert!(s.calls.iter().all(|c| c.context_window == Some(258_400)));
}

#[test]
fn each_compaction_costs_its_own_call_and_counts_the_main_calls_around_it() {
    let s = session();
    let compacted = compacted_lines();
    assert_eq!(s.compactions.len(), compacted.len());
    let server = upstream();
    let summaries: Vec<usize> = (0..server.len())
        .filter(|&i| server[i].0 == "summary")
        .collect();
    assert_eq!(summaries.len(), compacted.len());
    for (k, c) in s.compactions.iter().enumerate() {
        let p = &compacted[k];
        let own = c.own_call.unwrap();
        let latest = &p["latest_token_usage_record"];
        assert_eq!(latest["response_id"], p["compaction_response_id"]);
        assert_eq!(
            Some(own.context_tokens()),
            latest["usage"]["input_tokens"].as_u64()
        );
        let at = summaries[k];
        assert_eq!(own.context_tokens(), server[at].1);
        // Before: the main call that made Codex compact; after: the next call.
        let before = c.tokens_before.unwrap();
        assert_eq!(before.source, TokenSource::LastCallBefore);
        assert_eq!(before.tokens, server[at - 1].1, "compaction {k}");
        assert_ne!(before.tokens, own.context_tokens());
        assert_eq!(c.tokens_after.unwrap().tokens, server[at + 1].1);
        assert_eq!(
            c.summary,
            Summary::Text(p["message"].as_str().unwrap().into())
        );
    }
}

#[test]
fn the_summary_item_is_no_conversation_message() {
    let s = session();
    let outputs: Vec<String> = lines(ROLLOUT)
        .iter()
        .filter(|l| l["metadata"]["compaction_output"] == true)
        .map(|l| {
            l["payload"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(outputs.len(), s.compactions.len());
    for text in &outputs {
        assert!(
            !s.messages
                .iter()
                .any(|m| m.joined_text().contains(text.as_str())),
            "the summary item became a message"
        );
    }
    assert_eq!(
        s.skipped.get("compaction summary item"),
        Some(&outputs.len())
    );
    // A compaction happens after the results of the call that triggered it.
    for c in &s.compactions {
        assert!(s.messages[c.at - 1].is_tool_result_message());
    }
}

#[test]
fn kept_is_what_codex_retained_and_the_rest_is_reinjected_or_the_summary() {
    let s = session();
    for (k, p) in compacted_lines().iter().enumerate() {
        let c = &s.compactions[k];
        let items = p["replacement_history"].as_array().unwrap();
        let meta = p["replacement_history_metadata"].as_array().unwrap();
        let retained: Vec<&Value> = items
            .iter()
            .zip(meta)
            .filter(|(_, m)| m.get("retained_source").is_some())
            .map(|(i, _)| i)
            .collect();
        let kept = c.kept.as_ref().unwrap();
        assert_eq!(kept.len(), retained.len(), "compaction {k}");
        for (kept, item) in kept.iter().zip(&retained) {
            let text = item["content"][0]["text"].as_str().unwrap();
            assert_eq!(kept.message.joined_text(), text);
            // The copy points at the prompt as it was first typed.
            let from = kept.from.unwrap();
            assert_eq!(s.messages[from].joined_text(), text);
            assert_eq!(s.info[from].kind, MessageKind::Conversation);
            assert!(from < c.at);
        }
        let r = c.replacement.as_ref().unwrap();
        let history = c.new_history().unwrap();
        assert_eq!(history.len(), items.len());
        for (m, item) in history.iter().zip(items) {
            assert_eq!(m.role(), item["role"].as_str().unwrap());
        }
        assert_eq!(r.reinjected, items.len() - retained.len() - 1);
        let summary = r.summary.unwrap();
        assert_eq!(
            history[summary].joined_text(),
            p["message"].as_str().unwrap()
        );
        // The developer instructions stay developer messages in the new history.
        assert!(history.iter().any(|m| m.role_kind() == Role::Developer));
        // The model's view after the compaction starts with the whole new history.
        let view: Vec<Message> = history.into_iter().cloned().collect();
        assert_eq!(s.context_after(k), view);
    }
}

#[test]
fn every_line_type_is_read_and_the_compaction_item_gives_the_duration() {
    let s = session();
    let summary = SessionSummary::of(&s);
    assert!(
        summary.unknown_types.is_empty(),
        "{:?}",
        summary.unknown_types
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let count = |t: &str| lines(ROLLOUT).iter().filter(|l| l["type"] == t).count();
    assert_eq!(s.skipped.get("world_state"), Some(&count("world_state")));
    let durations: Vec<u64> = lines(ROLLOUT)
        .iter()
        .filter(|l| l["payload"]["item"]["type"] == "ContextCompaction")
        .map(|l| {
            let p = &l["payload"];
            p["completed_at_ms"].as_u64().unwrap() - p["started_at_ms"].as_u64().unwrap()
        })
        .collect();
    let got: Vec<u64> = s
        .compactions
        .iter()
        .map(|c| c.duration_ms.unwrap())
        .collect();
    assert_eq!(got, durations);
    let line = summary.compactions[0].describe(0);
    assert!(line.contains(&format!(", {} ms;", durations[0])), "{line}");
    // The system prompt is the session's base instructions.
    let meta = &lines(ROLLOUT)[0]["payload"];
    assert_eq!(
        s.meta.system_prompt.as_deref(),
        meta["base_instructions"]["text"].as_str()
    );
    // The compactions' calls are counted apart, their output in the session's.
    assert_eq!(summary.compaction_calls, s.compactions.len());
    let written: u64 = records().iter().map(|r| r.2).sum();
    assert_eq!(summary.output_tokens, written);
}

#[test]
fn an_unknown_line_type_is_listed_by_name() {
    let text = format!(
        "{ROLLOUT}{}\n",
        r#"{"timestamp":"2026-12-02T07:53:21.000Z","ordinal":119,"type":"brand_new_line","payload":{}}"#
    );
    let s = parse_session_text(&text).unwrap();
    let summary = SessionSummary::of(&s);
    assert_eq!(
        summary.unknown_types.into_iter().collect::<Vec<_>>(),
        [("brand_new_line".to_string(), 1)]
    );
}

/// The fixture's turns `reps` times over, as `scripts/gen_codex_session.py --template`
/// writes them: fresh ids each time, each prompt its own text, and each `compacted` line
/// repeating the whole replacement history (every prompt so far with its
/// `retained_source`, then the re-injected messages and the summary).
fn repeated(reps: usize) -> String {
    let template = lines(ROLLOUT);
    let mut out = vec![template[0].to_string()];
    let mut prompts: Vec<(Value, Value)> = Vec::new();
    for rep in 0..reps {
        for line in &template[1..] {
            let mut text = line.to_string();
            for prefix in ["\"call_", "\"resp_", "\"msg_", "\"fc_", "\"fco_"] {
                text = text.replace(prefix, &format!("{prefix}r{rep}x"));
            }
            let mut line: Value = serde_json::from_str(&text).unwrap();
            let p = &mut line["payload"];
            let kinds = &p["internal_chat_message_metadata_passthrough"]["content_item_kinds"];
            if p["role"] == "user" && *kinds == serde_json::json!(["user.text"]) {
                let t = format!("{} (part {rep})", p["content"][0]["text"].as_str().unwrap());
                p["content"][0]["text"] = Value::String(t);
                let meta = serde_json::json!({"retained_source": {"id": {"message_id": p["id"]}}});
                prompts.push((p.clone(), meta));
            }
            if line["type"] == "compacted" {
                let p = &mut line["payload"];
                let items = p["replacement_history"].as_array().unwrap().clone();
                let meta = p["replacement_history_metadata"]
                    .as_array()
                    .unwrap()
                    .clone();
                let anew = items
                    .into_iter()
                    .zip(meta)
                    .filter(|(_, m)| m.get("retained_source").is_none());
                let both: Vec<(Value, Value)> = prompts.iter().cloned().chain(anew).collect();
                p["replacement_history"] = both.iter().map(|b| b.0.clone()).collect();
                p["replacement_history_metadata"] = both.iter().map(|b| b.1.clone()).collect();
            }
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// Steps the reader took on `text`, and the file's size in items (its lines and the items
/// of its replacement histories).
fn work_and_size(text: &str) -> (u64, u64) {
    let parsed = super::lines::parse_json_lines(text, 1);
    let items: u64 = parsed
        .iter()
        .map(|l| {
            let v = l.value.as_ref().unwrap();
            1 + v["payload"]["replacement_history"]
                .as_array()
                .map_or(0, |a| a.len() as u64)
        })
        .sum();
    let (s, work) = super::codex::read_codex_counting(parsed, SessionFormat::Codex, Detail::Full);
    assert!(s.compactions.iter().all(|c| c.kept.is_some()));
    (work, items)
}

#[test]
fn reading_a_rollout_twice_as_long_takes_about_twice_the_work() {
    let (w1, n1) = work_and_size(&repeated(8));
    let (w2, n2) = work_and_size(&repeated(16));
    let (w4, n4) = work_and_size(&repeated(32));
    // The file grows faster than the repetitions (each compaction lists every prompt so
    // far); the work follows the file, step for step.
    for ((wa, na), (wb, nb)) in [((w1, n1), (w2, n2)), ((w2, n2), (w4, n4))] {
        let file = nb as f64 / na as f64;
        let work = wb as f64 / wa as f64;
        assert!(file > 2.0, "the input doubled at least: {file}");
        assert!(work <= file * 1.1, "work x{work:.2} for a file x{file:.2}");
    }
    // Each kept prompt was found where it was first typed, however far back.
    let s = parse_session_text(&repeated(16)).unwrap();
    let last = s.compactions.last().unwrap().kept.as_ref().unwrap();
    assert_eq!(last.len(), 16 * 3);
    assert!(last.iter().all(|k| k.from.is_some()));
}

/// Messages a read holds: the conversation's, and those of each compaction's new history.
fn held_messages(s: &Session) -> usize {
    let histories: usize = s
        .compactions
        .iter()
        .map(|c| {
            c.kept.as_ref().map_or(0, Vec::len) + c.replacement.as_ref().map_or(0, |r| r.anew.len())
        })
        .sum();
    s.messages.len() + histories
}

/// A numbers-only read (`inspect`, the listings, `watch`) prints the same summary as a
/// full read, but holds no compaction's new history: what it holds follows the
/// conversation, while the rollout (every compaction repeating every prompt so far) grows
/// faster. Issue 36: a 2 GB rollout took 1 GB of memory, mostly those copies.
#[test]
fn a_numbers_only_read_counts_each_new_history_without_holding_it() {
    let read = |text: &str, detail| {
        let parsed = super::lines::parse_json_lines(text, 1);
        super::codex::read_codex(parsed, SessionFormat::Codex, detail)
    };
    let (small, large) = (repeated(16), repeated(32));
    let full = read(&small, Detail::Full);
    let lean = read(&small, Detail::Numbers);
    assert_eq!(SessionSummary::of(&lean), SessionSummary::of(&full));
    let roles = |s: &Session| {
        s.messages
            .iter()
            .map(|m| m.role().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(roles(&lean), roles(&full));
    assert!(lean.compactions.len() >= 16);
    for (l, f) in lean.compactions.iter().zip(&full.compactions) {
        assert!(l.kept.is_none() && l.replacement.is_none());
        assert_eq!(l.kept_messages(), f.kept_messages());
        assert_eq!(l.reinjected_messages(), f.reinjected_messages());
    }
    assert_eq!(held_messages(&lean), lean.messages.len());
    // Twice the turns: the full read holds far more than twice (the copies), the
    // numbers-only read twice what it held.
    let (full2, lean2) = (read(&large, Detail::Full), read(&large, Detail::Numbers));
    let grew = |a: &Session, b: &Session| held_messages(b) as f64 / held_messages(a) as f64;
    assert!(grew(&full, &full2) > 2.5, "{}", grew(&full, &full2));
    assert!(grew(&lean, &lean2) <= 2.1, "{}", grew(&lean, &lean2));
}
