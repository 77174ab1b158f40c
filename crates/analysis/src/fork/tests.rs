//! The fork writers on files cut from the real agents' (tests/fixtures/fork: a Claude Code
//! 2.1.332 session with one `/compact`, a Codex 0.171.0 rollout with two automatic
//! compactions, long strings shortened): what each fork holds, read back with ctxlab's own
//! readers. The real agents resuming these forks is the harness's check
//! (scripts/real_agents/forks.py).

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::session::parse_session_text;

const CLAUDE: &str = include_str!("../../../../tests/fixtures/fork/claude_compacted.jsonl");
const CODEX: &str = include_str!("../../../../tests/fixtures/fork/codex_two_compactions.jsonl");
const CLAUDE_ID: &str = "faeab8ab-add3-45e7-bdde-a922c75ea6fa";
const CODEX_ID: &str = "01a235be-4d65-7363-b46b-b4bccb9a10e4";

fn options(before: usize, summary: SummaryChoice) -> ForkOptions {
    ForkOptions {
        before,
        summary,
        focus: None,
        summary_text: None,
        model: None,
        config: None,
        out: Some(PathBuf::from("/nonexistent-fork-out")),
        homes: AgentHomes::default(),
        now_ms: 1_796_200_000_000,
    }
}

fn fork(text: &str, o: &ForkOptions) -> Result<Fork, ForkError> {
    let session = parse_session_text(text).unwrap();
    make_fork_of(&session, text, o)
}

fn values(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn texts_of(session: &Session) -> String {
    session
        .messages
        .iter()
        .map(|m| m.to_value().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn claude_none_is_the_history_before_the_boundary_under_new_ids() {
    let f = fork(CLAUDE, &options(1, SummaryChoice::None)).unwrap();
    let original = parse_session_text(CLAUDE).unwrap();
    let cut = original.compactions[0].line;
    let lines = values(&f.text);
    // Every line before the boundary, none from it on.
    let before = CLAUDE
        .lines()
        .take(cut - 1)
        .filter(|l| !l.trim().is_empty());
    assert_eq!(lines.len(), before.count());
    assert!(!f.text.contains("compact_boundary"));
    assert!(!f.text.contains(&format!("\"sessionId\":\"{CLAUDE_ID}\"")));
    // New uuids, a chain that holds together, the new session id on every line that had one.
    let uuids: HashSet<&str> = lines.iter().filter_map(|l| l["uuid"].as_str()).collect();
    let original_lines = values(CLAUDE);
    let old: HashSet<&str> = original_lines
        .iter()
        .filter_map(|v| v["uuid"].as_str())
        .collect();
    assert!(!uuids.is_empty() && uuids.is_disjoint(&old));
    for l in &lines {
        if let Some(p) = l["parentUuid"].as_str() {
            assert!(uuids.contains(p), "parent {p} is not in the fork");
        }
        if let Some(s) = l["sessionId"].as_str() {
            assert_eq!(s, f.session_id);
        }
    }
    // Read back: the conversation before the compaction, no compaction.
    let read = parse_session_text(&f.text).unwrap();
    assert!(read.compactions.is_empty());
    assert_eq!(read.messages.len(), original.compactions[0].at);
    assert_eq!(f.file_name, format!("{}.jsonl", f.session_id));
    assert!(
        f.holds.contains("23,994 tokens of a 200,000-token window"),
        "{}",
        f.holds
    );
}

#[test]
fn claude_none_refuses_a_history_over_the_window_and_says_by_how_much() {
    let text = CLAUDE.replace("\"preTokens\":23994", "\"preTokens\":230000");
    match fork(&text, &options(1, SummaryChoice::None)) {
        Err(ForkError::DoesNotFit {
            tokens,
            window,
            over,
            ..
        }) => {
            assert_eq!((tokens, window, over), (230_000, 200_000, 30_000));
        }
        other => panic!("expected DoesNotFit, got {other:?}"),
    }
}

#[test]
fn claude_summary_file_stands_in_behind_a_boundary() {
    let summary = SummaryChoice::Text("MY SUMMARY: keep notes.txt".into());
    let f = fork(CLAUDE, &options(1, summary)).unwrap();
    let lines = values(&f.text);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["subtype"], "compact_boundary");
    assert_eq!(lines[0]["parentUuid"], Value::Null);
    assert_eq!(lines[1]["isCompactSummary"], true);
    assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
    assert_eq!(lines[1]["cwd"], "/tmp/ra1/proj");
    assert_eq!(lines[1]["version"], "2.1.332");
    let read = parse_session_text(&f.text).unwrap();
    assert_eq!(read.compactions.len(), 1);
    let content = texts_of(&read);
    assert!(content.contains("MY SUMMARY: keep notes.txt"));
    assert!(!content.contains("Run the scripted steps"), "{content}");
}

#[test]
fn a_fork_of_a_fork_replaces_the_forks_own_summary() {
    let first = fork(
        CLAUDE,
        &options(1, SummaryChoice::Text("FIRST SUMMARY".into())),
    )
    .unwrap();
    let second = fork(
        &first.text,
        &options(1, SummaryChoice::Text("SECOND SUMMARY".into())),
    )
    .unwrap();
    assert!(second.text.contains("SECOND SUMMARY"));
    assert!(!second.text.contains("FIRST SUMMARY"));
    assert_ne!(second.session_id, first.session_id);
    // Its lines still name the working directory and version (copied from after the cut).
    assert!(second.text.contains("\"cwd\":\"/tmp/ra1/proj\""));
}

#[test]
fn codex_none_before_the_second_compaction_keeps_the_first_and_drops_the_compactions_call() {
    let f = fork(CODEX, &options(2, SummaryChoice::None)).unwrap();
    let lines = values(&f.text);
    let compacted = lines.iter().filter(|l| l["type"] == "compacted").count();
    assert_eq!(compacted, 1);
    // The second compaction's own summary output and usage record are not in it.
    assert!(
        !lines
            .iter()
            .any(|l| l["metadata"]["compaction_output"] == true
                && l["timestamp"].as_str() > Some("2026-12-02T07:53:19"))
    );
    let own_call = "resp_e9ade5dd5c304a0ea1ddb532";
    assert!(!f.text.contains(own_call));
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[0]["payload"]["id"], f.session_id.as_str());
    assert!(!f.text.contains(CODEX_ID));
    assert!(f.file_name.starts_with("rollout-2026-12-02T"));
    assert!(f.file_name.ends_with(&format!("-{}.jsonl", f.session_id)));
    let read = parse_session_text(&f.text).unwrap();
    assert_eq!(read.compactions.len(), 1);
    // The same tool calls as the original before its second compaction, none after.
    let original = parse_session_text(CODEX).unwrap();
    let calls = |messages: &[crate::message::Message]| -> Vec<String> {
        messages
            .iter()
            .flat_map(|m| {
                m.tool_uses()
                    .map(|b| b["id"].to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(
        calls(&read.messages),
        calls(&original.messages[..original.compactions[1].at])
    );
    assert!(calls(&original.messages).len() > calls(&read.messages).len());
    // The first compaction's own summary output stays (only the second's call is dropped).
    assert!(f.text.contains("\"compaction_output\":true"));
    assert!(f.holds.contains("258,400-token window"), "{}", f.holds);
}

#[test]
fn codex_none_before_the_first_compaction_has_none_and_nothing_after() {
    let f = fork(CODEX, &options(1, SummaryChoice::None)).unwrap();
    let read = parse_session_text(&f.text).unwrap();
    assert!(read.compactions.is_empty());
    let texts = texts_of(&read);
    assert!(texts.contains("Run the scripted steps again"));
    assert!(!texts.contains("And once more"));
    assert!(!f.text.contains("\"compaction_output\":true"));
}

#[test]
fn codex_summary_text_takes_the_summarys_place_in_codexs_own_list() {
    let summary = SummaryChoice::Text("MY CODEX SUMMARY".into());
    let f = fork(CODEX, &options(1, summary)).unwrap();
    let lines = values(&f.text);
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[1]["type"], "compacted");
    let p = &lines[1]["payload"];
    let message = p["message"].as_str().unwrap();
    assert!(
        message.starts_with("Another language model started"),
        "{message}"
    );
    assert!(message.ends_with("MY CODEX SUMMARY"));
    let history = p["replacement_history"].as_array().unwrap();
    let texts: Vec<String> = history
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(texts.iter().any(|t| t == "Run the scripted steps"));
    assert!(texts.iter().any(|t| t == message));
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("Summary of the session so far"))
    );
    // The state lines Codex wrote after the compaction follow, so it injects no context twice.
    assert!(
        lines[2..]
            .iter()
            .all(|l| l["type"] == "world_state" || l["type"] == "turn_context")
    );
    assert_eq!(parse_session_text(&f.text).unwrap().compactions.len(), 1);
}

#[test]
fn a_strategy_leaves_its_summary_in_both_formats() {
    for (text, before) in [(CLAUDE, 1), (CODEX, 2)] {
        let mut o = options(before, SummaryChoice::Strategy(Strategy::S08));
        o.summary_text = Some("S08 MARK".into());
        let f = fork(text, &o).unwrap();
        assert!(f.text.contains("S08 MARK"));
        let read = parse_session_text(&f.text).unwrap();
        assert_eq!(read.compactions.len(), 1, "{}", f.text);
        assert!(f.holds.contains("what s08 leaves"));
    }
}

#[test]
fn a_compaction_the_session_does_not_have_is_refused() {
    assert!(matches!(
        fork(CLAUDE, &options(2, SummaryChoice::None)),
        Err(ForkError::NoSuchCompaction { asked: 2, count: 1 })
    ));
    assert!(matches!(
        fork(CODEX, &options(0, SummaryChoice::None)),
        Err(ForkError::NoSuchCompaction { asked: 0, count: 2 })
    ));
}

#[test]
fn only_agent_sessions_are_forked() {
    let array = "[{\"role\":\"user\",\"content\":\"hi\"}]";
    assert!(matches!(
        fork(array, &options(1, SummaryChoice::None)),
        Err(ForkError::NotAnAgentSession(_))
    ));
}

#[test]
fn the_agents_place_and_the_resume_command() {
    let mut o = options(1, SummaryChoice::None);
    o.out = None;
    o.homes = AgentHomes {
        claude: Some(PathBuf::from("/h/.claude")),
        codex: Some(PathBuf::from("/h/.codex")),
    };
    let c = fork(CLAUDE, &o).unwrap();
    assert_eq!(c.dir, PathBuf::from("/h/.claude/projects/-tmp-ra1-proj"));
    assert_eq!(
        c.resume_command(),
        format!("cd /tmp/ra1/proj && claude --resume {}", c.session_id)
    );
    let x = fork(CODEX, &o).unwrap();
    assert_eq!(x.dir, PathBuf::from("/h/.codex/sessions/2026/12/02"));
    assert_eq!(
        x.resume_command(),
        format!("cd /tmp/ra2/proj && codex resume {}", x.session_id)
    );
}

/// A kept tail with a tool call and its result, as a strategy's reactive stage leaves one.
fn tail() -> Vec<crate::message::Message> {
    use crate::message::Message;
    vec![
        Message::user_text("THE SUMMARY"),
        Message::assistant_blocks(vec![
            serde_json::json!({"type": "text", "text": "Reading it."}),
            serde_json::json!({"type": "tool_use", "id": "call_k1", "name": "exec_command", "input": {"cmd": "cat notes.txt"}}),
        ]),
        Message::user_blocks(vec![serde_json::json!({
            "type": "tool_result", "tool_use_id": "call_k1", "content": "Keep this file unchanged."
        })]),
    ]
}

#[test]
fn a_kept_tail_keeps_its_tool_pair_in_both_formats() {
    let lines = lines::parse_lines(CLAUDE).unwrap();
    let cut = parse_session_text(CLAUDE).unwrap().compactions[0].line;
    let t = tail();
    let w = claude::with_messages(&lines, cut, &t[0], &t[1..], "new-id", 1, None).unwrap();
    let read = parse_session_text(&w.text).unwrap();
    assert_eq!(read.tool_pairs(), 1, "{}", w.text);
    assert!(texts_of(&read).contains("cat notes.txt"));
    // Each line chains to the one before it.
    let v = values(&w.text);
    for pair in v.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }

    let lines = lines::parse_lines(CODEX).unwrap();
    let cut = parse_session_text(CODEX).unwrap().compactions[1].line;
    let w = codex::with_messages(&lines, cut, &t, "new-id").unwrap();
    let v = values(&w.text);
    let history = v[1]["payload"]["replacement_history"].as_array().unwrap();
    let kinds: Vec<&str> = history.iter().filter_map(|i| i["type"].as_str()).collect();
    assert!(
        kinds.ends_with(&[
            "message",
            "message",
            "function_call",
            "function_call_output"
        ]),
        "{kinds:?}"
    );
    assert_eq!(v[1]["payload"]["message"], "THE SUMMARY");
    assert!(
        v[1]["payload"]
            .get("replacement_history_metadata")
            .is_none()
    );
    let read = parse_session_text(&w.text).unwrap();
    assert_eq!(read.compactions.len(), 1);
    assert!(
        read.compactions[0]
            .kept
            .as_ref()
            .is_some_and(|k| k.len() >= 3)
    );
}

/// A rollout of three windows (two compactions, each opening the next window): a summary
/// in place of the second compaction's stands in for the third window, keeps Codex's
/// chain of windows as Codex wrote it for that compaction, and holds nothing of the third
/// window's turns.
#[test]
fn codex_a_summary_before_the_second_of_three_windows_keeps_the_window_chain() {
    let summary = SummaryChoice::Text("SECOND WINDOW SUMMARY".into());
    let f = fork(CODEX, &options(2, summary)).unwrap();
    let lines = values(&f.text);
    let compacted: Vec<&Value> = lines.iter().filter(|l| l["type"] == "compacted").collect();
    assert_eq!(
        compacted.len(),
        1,
        "the last list is the history Codex resumes"
    );
    let p = &compacted[0]["payload"];
    assert_eq!(p["window_number"], 2);
    assert_eq!(
        p["previous_window_id"],
        "01a235be-609d-7cc2-8ae3-b1e901fe6fe2"
    );
    assert_eq!(p["first_window_id"], "01a235be-4d6a-7b02-a193-f25a4a8d365d");
    let users: Vec<&str> = p["replacement_history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "user")
        .filter_map(|i| i["content"][0]["text"].as_str())
        .collect();
    // The prompts of all three windows' turns so far, then the summary, and only one.
    for prompt in [
        "Run the scripted steps",
        "Run the scripted steps again",
        "And once more",
    ] {
        assert!(users.contains(&prompt), "{users:#?}");
    }
    let summaries: Vec<&&str> = users
        .iter()
        .filter(|t| t.starts_with("Another language model"))
        .collect();
    assert_eq!(summaries.len(), 1, "{users:#?}");
    assert!(summaries[0].ends_with("SECOND WINDOW SUMMARY"));
    // Nothing of the third window: no call after the second compaction.
    let read = parse_session_text(&f.text).unwrap();
    assert_eq!(read.compactions.len(), 1);
    assert!(read.calls.is_empty(), "{:#?}", read.calls);
}
