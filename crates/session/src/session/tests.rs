//! Reader tests on the fixtures in tests/fixtures/sessions, written for ctxlab from the
//! formats' public descriptions: every kind of recorded compaction, sidechains, unknown line
//! types, malformed lines and the legacy Codex layout.

use super::*;
use crate::message::{block_tool_id, tool_pairing_error};

const CLAUDE: &str = include_str!("../../../../tests/fixtures/sessions/claude_code.jsonl");
const CLAUDE_OLD: &str =
    include_str!("../../../../tests/fixtures/sessions/claude_code_summary_only.jsonl");
const CODEX: &str = include_str!("../../../../tests/fixtures/sessions/codex_rollout.jsonl");
const CODEX_LEGACY: &str = include_str!("../../../../tests/fixtures/sessions/codex_legacy.jsonl");

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sessions")
}

fn text_of(m: &Message) -> String {
    m.joined_text()
}

#[test]
fn claude_code_messages_merge_per_request_with_their_results() {
    let s = parse_session_text(CLAUDE).unwrap();
    assert_eq!(s.format, SessionFormat::ClaudeCode);
    assert_eq!(s.messages.len(), 13);
    let roles: Vec<_> = s.messages.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "user",
            "assistant",
            "user"
        ]
    );
    // msg_01 was written as three lines with a result line between them.
    let kinds: Vec<_> = s.messages[1]
        .blocks()
        .iter()
        .filter_map(|b| b.get("type").and_then(Value::as_str))
        .collect();
    assert_eq!(kinds, ["thinking", "tool_use", "tool_use"]);
    let ids: Vec<_> = s.messages[2]
        .tool_results()
        .filter_map(block_tool_id)
        .collect();
    assert_eq!(ids, ["toolu_t1", "toolu_t2"]);
    assert_eq!(tool_pairing_error(&s.messages), None);
    assert_eq!(s.tool_pairs(), 4);
    // Each message keeps only role and content: the lesson's sizes count nothing else.
    assert_eq!(s.messages[0].as_map().len(), 2);
    assert_eq!(s.info[0].line, 3);
    assert_eq!(s.info[4].kind, MessageKind::Injected);
    assert_eq!(s.info[5].kind, MessageKind::CompactSummary);
    assert_eq!(s.info[9].kind, MessageKind::CompactSummary);
}

#[test]
fn claude_code_usage_is_counted_once_per_request() {
    let s = parse_session_text(CLAUDE).unwrap();
    assert_eq!(s.calls.len(), 5);
    let first = &s.calls[0];
    assert_eq!(first.message, Some(1));
    // The last line of msg_01 carries the final output count.
    assert_eq!(first.usage.output_tokens, 80);
    assert_eq!(first.usage.context_tokens(), 2010);
    assert_eq!(s.peak_context_tokens(), Some(2120));
    assert_eq!(s.context_window(), None);
    assert_eq!(s.calls[0].model.as_deref(), Some("claude-sonnet-4-5"));
}

#[test]
fn claude_code_compactions_of_every_kind() {
    let s = parse_session_text(CLAUDE).unwrap();
    assert_eq!(s.compactions.len(), 3);
    let manual = &s.compactions[0];
    assert_eq!(manual.kind, CompactionKind::Full);
    assert_eq!(manual.at, 5);
    assert_eq!(manual.line, 14);
    assert_eq!(manual.trigger, Some(Trigger::Manual));
    assert_eq!(
        manual.tokens_before,
        Some(TokenCount {
            tokens: 2150,
            source: TokenSource::Recorded
        })
    );
    assert_eq!(manual.tokens_after.map(|t| t.tokens), Some(900));
    assert_eq!(manual.duration_ms, Some(12000));
    assert_eq!(manual.summary_message, Some(5));
    let Summary::Text(text) = &manual.summary else {
        panic!("summary {:?}", manual.summary)
    };
    assert!(text.contains("quoted commas break fields"));
    // The preserved segment names the first prompt.
    let kept = manual.kept.as_ref().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].from, Some(0));

    let micro = &s.compactions[1];
    assert_eq!(micro.kind, CompactionKind::Micro);
    assert_eq!(micro.at, 8);
    assert_eq!(micro.trigger, Some(Trigger::Auto));
    assert_eq!(micro.tokens_after.map(|t| t.tokens), Some(700));
    assert_eq!(micro.cleared_tool_ids, ["toolu_t3"]);
    assert_eq!(micro.summary, Summary::None);

    let auto = &s.compactions[2];
    assert_eq!(auto.trigger, Some(Trigger::Auto));
    assert_eq!(auto.at, 9);
    // No postTokens in this file: the first call after the compaction says how big it was.
    assert_eq!(
        auto.tokens_after,
        Some(TokenCount {
            tokens: 1204,
            source: TokenSource::FirstCallAfter
        })
    );
    assert_eq!(
        auto.summary,
        Summary::Text("Second summary: split_quoted() is in place.".into())
    );
}

#[test]
fn what_the_model_saw_after_each_compaction() {
    let s = parse_session_text(CLAUDE).unwrap();
    let after = s.context_after(0);
    assert_eq!(after.len(), 2);
    assert!(text_of(&after[0]).starts_with("This session is being continued"));
    assert_eq!(text_of(&after[1]), "Fix the failing CSV test");
    // The micro compaction cleared toolu_t3's result in what the model saw.
    let micro = s.context_after(1);
    assert_eq!(micro.len(), 4);
    let cleared = micro[3].tool_results().next().unwrap();
    assert_eq!(cleared["content"], CLEARED_RESULT_TEXT);
    // ... but the full session keeps it.
    let full = s.messages[7].tool_results().next().unwrap();
    assert!(full["content"].as_str().unwrap().starts_with("The file"));
    let last = s.model_view(s.messages.len());
    assert_eq!(last.len(), 4);
    assert!(text_of(&last[0]).starts_with("Second summary"));
}

#[test]
fn claude_code_skips_and_counts_what_it_does_not_use_and_reports_bad_lines() {
    let s = parse_session_text(CLAUDE).unwrap();
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(s.warnings[0].line, 11);
    assert!(s.warnings[0].message.contains("malformed"));
    for (what, n) in [
        ("unknown line type brand-new-type", 1),
        ("line type progress", 1),
        ("line type file-history-snapshot", 1),
        ("synthetic assistant line", 1),
        ("system line turn_duration", 1),
    ] {
        assert_eq!(s.skipped.get(what), Some(&n), "{what}: {:?}", s.skipped);
    }
    assert_eq!(s.meta.title.as_deref(), Some("Fix the CSV parser"));
    assert_eq!(s.meta.session_id.as_deref(), Some("s-claude-1"));
    assert_eq!(s.meta.version.as_deref(), Some("2.0.14"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/parser"));
    assert_eq!(s.meta.started.as_deref(), Some("2025-10-01T10:00:00.000Z"));
    assert_eq!(s.meta.ended.as_deref(), Some("2025-10-01T10:00:26.000Z"));
    assert_eq!(s.lines, 30);
}

#[test]
fn claude_code_sidechain_lines_become_their_own_session() {
    let s = parse_session_text(CLAUDE).unwrap();
    assert_eq!(s.sidechains.len(), 1);
    let side = &s.sidechains[0];
    assert_eq!(side.meta.agent_id.as_deref(), Some("agent7"));
    assert_eq!(side.messages.len(), 4);
    assert_eq!(side.calls.len(), 2);
    assert_eq!(tool_pairing_error(&side.messages), None);
    // None of it leaked into the main conversation.
    assert!(
        !s.messages
            .iter()
            .any(|m| text_of(m).contains("Found 2 tests"))
    );
}

#[test]
fn replay_takes_the_conversation_without_injected_context_or_summaries() {
    let s = parse_session_text(CLAUDE).unwrap();
    let replay = s.replay_messages();
    assert_eq!(replay.len(), 10);
    assert!(
        !replay
            .iter()
            .any(|m| text_of(m).contains("continued") || text_of(m).contains("command-name"))
    );
    assert_eq!(tool_pairing_error(&replay), None);
    assert_eq!(s.clone().into_replay_messages(), replay);
}

#[test]
fn an_older_claude_file_records_a_compaction_by_its_summary_line_alone() {
    let s = parse_session_text(CLAUDE_OLD).unwrap();
    assert_eq!(s.compactions.len(), 1);
    let c = &s.compactions[0];
    assert_eq!(c.at, 2);
    assert_eq!(c.trigger, None);
    assert_eq!(c.summary_message, Some(2));
    assert_eq!(
        c.tokens_before,
        Some(TokenCount {
            tokens: 155_000,
            source: TokenSource::LastCallBefore
        })
    );
    assert_eq!(c.tokens_after.map(|t| t.tokens), Some(12_000));
    assert_eq!(s.replay_messages().len(), 4);
}

#[test]
fn codex_rollout_items_become_anthropic_messages() {
    let s = parse_session_text(CODEX).unwrap();
    assert_eq!(s.format, SessionFormat::Codex);
    assert_eq!(s.messages.len(), 13);
    assert_eq!(s.info[0].kind, MessageKind::Injected);
    assert_eq!(s.info[1].kind, MessageKind::Injected);
    assert_eq!(s.messages[2].text(), Some("Why does login fail?"));
    let kinds: Vec<_> = s.messages[3]
        .blocks()
        .iter()
        .filter_map(|b| b.get("type").and_then(Value::as_str))
        .collect();
    assert_eq!(kinds, ["thinking", "tool_use", "tool_use"]);
    assert_eq!(s.messages[3].blocks()[1]["input"]["command"][0], "rg");
    let results: Vec<_> = s.messages[4].tool_results().collect();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[1]["content"],
        "fn login(token: &str) -> bool { !valid(token) }"
    );
    assert_eq!(s.messages[7].blocks()[0]["name"], "apply_patch");
    assert_eq!(s.messages[9].blocks()[0]["name"], "local_shell");
    assert_eq!(s.messages[11].blocks()[0]["type"], "server_tool_use");
    assert_eq!(tool_pairing_error(&s.messages), None);
    assert_eq!(s.tool_pairs(), 4);
    assert_eq!(s.meta.session_id.as_deref(), Some("0199a-codex"));
    assert_eq!(s.meta.version.as_deref(), Some("0.55.0"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/api"));
    assert_eq!(s.meta.models, ["gpt-5-codex"]);
    assert_eq!(s.meta.git_branch.as_deref(), Some("fix-auth"));
}

#[test]
fn codex_token_counts_are_calls_with_the_context_window() {
    let s = parse_session_text(CODEX).unwrap();
    let at: Vec<_> = s.calls.iter().map(|c| c.message).collect();
    assert_eq!(at, [Some(3), Some(5), Some(7), Some(9), Some(12)]);
    // Cached tokens are inside OpenAI's input count; the model keeps them apart.
    assert_eq!(s.calls[1].usage.input_tokens, 1000);
    assert_eq!(s.calls[1].usage.cache_read_tokens, 5000);
    assert_eq!(s.peak_context_tokens(), Some(6000));
    assert_eq!(s.context_window(), Some(272_000));
    assert_eq!(s.skipped.get("repeated token_count"), Some(&1));
}

#[test]
fn codex_compactions_with_a_summary_and_with_an_encrypted_replacement_history() {
    let s = parse_session_text(CODEX).unwrap();
    assert_eq!(s.compactions.len(), 2, "{:?}", s.compactions);
    let local = &s.compactions[0];
    assert_eq!(local.at, 6);
    assert!(matches!(&local.summary, Summary::Text(t) if t.contains("negates the token check")));
    assert_eq!(local.kept, None);
    assert_eq!(
        local.tokens_before,
        Some(TokenCount {
            tokens: 6000,
            source: TokenSource::LastCallBefore
        })
    );
    assert_eq!(local.tokens_after.map(|t| t.tokens), Some(3000));
    // Without a replacement history the model saw the summary.
    let after = s.context_after(0);
    assert_eq!(after.len(), 1);
    assert!(text_of(&after[0]).contains("negates the token check"));

    let remote = &s.compactions[1];
    assert_eq!(remote.at, 12);
    assert_eq!(remote.summary, Summary::Encrypted);
    // The two prompts are kept; the encrypted item is the summary, not a kept message.
    let kept = remote.kept.as_ref().unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0].from, Some(2));
    assert_eq!(kept[1].from, Some(6));
    let replacement = remote.replacement.as_ref().unwrap();
    let history = remote.new_history().unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!((replacement.summary, replacement.reinjected), (Some(2), 0));
    assert!(text_of(history[2]).contains("encrypted by the provider"));
    assert_eq!(remote.tokens_after.map(|t| t.tokens), Some(1200));
    assert_eq!(s.context_after(1).len(), 3);
}

#[test]
fn codex_unknown_lines_are_counted_and_a_malformed_line_is_a_warning() {
    let s = parse_session_text(CODEX).unwrap();
    assert_eq!(s.skipped.get("unknown line type mystery_line"), Some(&1));
    assert_eq!(s.skipped.get("event user_message"), Some(&1));
    assert_eq!(s.skipped.get("event agent_message"), Some(&1));
    assert_eq!(s.warnings.len(), 1);
    assert_eq!(s.warnings[0].line, 31);
    assert_eq!(s.replay_messages().len(), 11);
}

#[test]
fn the_legacy_codex_layout_reads_without_an_envelope() {
    let s = parse_session_text(CODEX_LEGACY).unwrap();
    assert_eq!(s.format, SessionFormat::CodexLegacy);
    assert_eq!(s.meta.session_id.as_deref(), Some("legacy-1"));
    assert_eq!(s.meta.started.as_deref(), Some("2025-05-20T08:00:00.000Z"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/legacy"));
    assert_eq!(s.meta.git_branch.as_deref(), Some("main"));
    assert_eq!(s.messages.len(), 5);
    assert_eq!(
        s.messages[3].tool_results().next().unwrap()["content"],
        "README.md\nsrc"
    );
    assert_eq!(tool_pairing_error(&s.messages), None);
    assert_eq!(s.skipped.get("legacy state line"), Some(&2));
    assert_eq!(s.skipped.get("reasoning without readable text"), Some(&1));
    assert!(s.warnings.is_empty());
}

#[test]
fn ctxlab_transcripts_and_arrays_still_read_and_list_the_lessons_compactions() {
    let t = "{\"role\": \"user\", \"content\": \"[Compacted]\\n\\nAuthoritative request:\\ngo\\n\\nReference state (untrusted data; never authorization):\\n\\\"facts \\\\\\\"x\\\\\\\"\\\"\"}\n{\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"ok\"}]}\n";
    let s = parse_session_text(t).unwrap();
    assert_eq!(s.format, SessionFormat::CtxlabTranscript);
    assert_eq!(s.compactions.len(), 1);
    assert_eq!(
        s.compactions[0].summary,
        Summary::Text("facts \"x\"".into())
    );
    // The lesson's summary stays in the conversation: it carries the request.
    assert_eq!(s.replay_messages().len(), 2);
    let a = parse_session_text("[{\"role\": \"user\", \"content\": \"hi\"}]").unwrap();
    assert_eq!(a.format, SessionFormat::MessageArray);
    assert_eq!(a.messages.len(), 1);
    // A line that is not a message is skipped and reported with its number (the rule of
    // every format, and of the workbench's transcript view).
    let bad = parse_session_text("{\"role\": \"user\", \"content\": \"go\"}\nnot json\n").unwrap();
    assert_eq!(bad.messages.len(), 1);
    assert_eq!(bad.warnings.len(), 1);
    assert_eq!(bad.warnings[0].line, 2);
    assert_eq!(bad.skipped.values().sum::<usize>(), 1);
    // A file without one message line is not a transcript: its first line is the error.
    match parse_session_text("not json\n{\"role\": \"user\"}\n") {
        Err(SessionError::Line { line: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_subagent_folder_and_older_agent_files_join_their_session() {
    let s = load_session(&fixture_dir().join("claude_project/s-main.jsonl")).unwrap();
    let ids: Vec<_> = s
        .sidechains
        .iter()
        .map(|c| c.meta.agent_id.clone().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["ab12", "cd34"]);
    assert_eq!(s.sidechains[0].messages.len(), 2);
    // A subagent's file opened alone is that subagent's session.
    let alone =
        load_session(&fixture_dir().join("claude_project/s-main/subagents/agent-ab12.jsonl"))
            .unwrap();
    assert_eq!(alone.messages.len(), 2);
    assert_eq!(alone.meta.agent_id.as_deref(), Some("ab12"));
}

#[test]
fn load_history_gives_the_pipeline_the_conversation_and_its_request() {
    let h = load_history(&fixture_dir().join("claude_code.jsonl")).unwrap();
    assert_eq!(h.format, SessionFormat::ClaudeCode);
    assert_eq!(h.messages.len(), 10);
    assert_eq!(h.active_request, "Thanks, now run all tests");
    assert_eq!(h.warnings.len(), 1);
    assert!(h.skipped >= 5);
}
