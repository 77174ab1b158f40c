//! The live reader against the whole-file readers, on fixtures written from the formats.

use super::*;
use crate::session::watch::live_item::{SUBJECT_CHARS, tool_subject};
use crate::session::{CompactionKind, parse_session_text};

pub(crate) const CLAUDE: &[&str] = &[
    r#"{"type":"user","sessionId":"s1","uuid":"u1","cwd":"/p","timestamp":"2025-10-01T10:00:00Z","message":{"role":"user","content":"Fix the bug"}}"#,
    r#"{"type":"assistant","sessionId":"s1","uuid":"a1","requestId":"r1","timestamp":"2025-10-01T10:00:01Z","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Looking."}],"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":1}}}"#,
    r#"{"type":"assistant","sessionId":"s1","uuid":"a2","requestId":"r1","timestamp":"2025-10-01T10:00:02Z","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":40}}}"#,
    r#"{"type":"user","sessionId":"s1","uuid":"u2","timestamp":"2025-10-01T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt"}]}}"#,
    r#"{"type":"progress","sessionId":"s1","data":{}}"#,
    r#"{"type":"assistant","sessionId":"s1","uuid":"a3","isSidechain":true,"agentId":"x","message":{"id":"m9","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"sub"}],"usage":{"input_tokens":99999,"output_tokens":1}}}"#,
    r#"{"type":"assistant","sessionId":"s1","uuid":"a4","requestId":"r2","timestamp":"2025-10-01T10:00:04Z","message":{"id":"m2","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":5,"cache_read_input_tokens":1400,"cache_creation_input_tokens":100,"output_tokens":3}}}"#,
    r#"{"type":"system","subtype":"compact_boundary","sessionId":"s1","uuid":"c1","timestamp":"2025-10-01T10:00:05Z","compactMetadata":{"trigger":"auto","preTokens":167012}}"#,
    r#"{"type":"user","sessionId":"s1","uuid":"u3","isCompactSummary":true,"timestamp":"2025-10-01T10:00:06Z","message":{"role":"user","content":"This session is being continued. Summary: the bug is fixed."}}"#,
    r#"{"type":"brand-new-line-type","sessionId":"s1"}"#,
    r#"{"type":"system","subtype":"microcompact_boundary","sessionId":"s1","timestamp":"2025-10-01T10:00:07Z","microcompactMetadata":{"trigger":"auto","preTokens":5000,"tokensSaved":3000,"compactedToolIds":["t1"]}}"#,
    r#"{"type":"user","sessionId":"s1","uuid":"u4","timestamp":"2025-10-01T10:00:08Z","message":{"role":"user","content":"Thanks"}}"#,
    r#"{"type":"assistant","sessionId":"s1","uuid":"a5","requestId":"r3","timestamp":"2025-10-01T10:00:09Z","message":{"id":"m3","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Welcome."}],"usage":{"input_tokens":5,"cache_read_input_tokens":20000,"cache_creation_input_tokens":0,"output_tokens":3}}}"#,
];

pub(crate) const CODEX: &[&str] = &[
    r#"{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/p","cli_version":"0.50.0"}}"#,
    r#"{"timestamp":"2025-10-01T10:00:00Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/p"}}"#,
    r#"{"timestamp":"2025-10-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]}}"#,
    r#"{"timestamp":"2025-10-01T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"k1"}}"#,
    r#"{"timestamp":"2025-10-01T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"k1","output":"a.txt"}}"#,
    r#"{"timestamp":"2025-10-01T10:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1200,"output_tokens":30},"last_token_usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":30},"model_context_window":272000}}}"#,
    r#"{"timestamp":"2025-10-01T10:00:04Z","type":"compacted","payload":{"message":"Summary: listed the files."}}"#,
    r#"{"timestamp":"2025-10-01T10:00:04Z","type":"event_msg","payload":{"type":"context_compacted"}}"#,
    r#"{"timestamp":"2025-10-01T10:00:05Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2400,"output_tokens":90},"last_token_usage":{"input_tokens":1150,"cached_input_tokens":0,"output_tokens":60},"model_context_window":272000}}}"#,
    r#"{"timestamp":"2025-10-01T10:00:06Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#,
    r#"{"timestamp":"2025-10-01T10:00:06Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2700,"output_tokens":95},"last_token_usage":{"input_tokens":300,"cached_input_tokens":0,"output_tokens":5},"model_context_window":272000}}}"#,
];

fn feed(lines: &[&str]) -> (LiveSession, Vec<LiveItem>) {
    let mut live = LiveSession::new();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        live.push_line(i + 1, l, &mut out);
    }
    (live, out)
}

fn calls(items: &[LiveItem]) -> Vec<(u64, bool)> {
    items
        .iter()
        .filter_map(|i| match i {
            LiveItem::Call(c) => Some((c.context_tokens, c.summary)),
            _ => None,
        })
        .collect()
}

#[test]
fn claude_lines_give_each_call_compaction_and_tool_call_once() {
    let (live, items) = feed(CLAUDE);
    // One call per request (r1 spans two lines), the subagent's call kept off.
    assert_eq!(
        calls(&items),
        [(1210, false), (1505, false), (20005, false)]
    );
    let compactions: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            LiveItem::Compaction {
                compaction, update, ..
            } => Some((compaction.kind, *update, compaction.summary.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 3, "{compactions:?}");
    assert_eq!(compactions[0].0, CompactionKind::Full);
    assert!(!compactions[0].1);
    // The summary line after the boundary adds to the same compaction.
    assert!(compactions[1].1);
    assert!(matches!(&compactions[1].2, Summary::Text(t) if t.contains("bug is fixed")));
    assert_eq!(compactions[2].0, CompactionKind::Micro);
    let tools: Vec<_> = items
        .iter()
        .filter(|i| matches!(i, LiveItem::ToolCall { .. }))
        .collect();
    assert_eq!(tools.len(), 1);
    assert!(items.iter().any(
        |i| matches!(i, LiveItem::Skipped { what, .. } if what.contains("brand-new-line-type"))
    ));
    assert_eq!(live.sidechain_lines(), 1);
    // The same model as the whole-file reader's, as far as it has closed.
    let whole = parse_session_text(&CLAUDE.join("\n")).unwrap();
    let s = live.session().unwrap();
    assert_eq!(s.compactions.len(), whole.compactions.len());
    assert_eq!(
        s.compactions[0].tokens_before,
        whole.compactions[0].tokens_before
    );
    assert_eq!(whole.calls.len(), 3);
    assert_eq!(s.messages[..], whole.messages[..s.messages.len()]);
    assert_eq!(s.skipped, whole.skipped);
}

#[test]
fn codex_token_counts_are_calls_and_the_compactions_own_call_is_off_the_curve() {
    let (live, items) = feed(CODEX);
    assert_eq!(calls(&items), [(1200, false), (1150, true), (300, false)]);
    let first = items.iter().find_map(|i| match i {
        LiveItem::Compaction {
            compaction,
            update: false,
            ..
        } => Some(compaction.clone()),
        _ => None,
    });
    let first = first.unwrap();
    assert!(matches!(&first.summary, Summary::Text(t) if t.contains("listed")));
    // Not recorded on the line: the last call before it, as the whole-file reader says.
    let before = first.tokens_before.unwrap();
    assert_eq!(before.tokens, 1200);
    assert!(before.is_estimate());
    let whole = parse_session_text(&CODEX.join("\n")).unwrap();
    assert_eq!(live.session().unwrap().calls, whole.calls);
    // The whole-file reader fills the count after the file ends, when the compaction's
    // own token_count (1,150) already counts as "before" it; read live, the count is
    // filled when the compaction is written, from the last main call.
    assert_eq!(whole.compactions.len(), 1);
}

#[test]
fn a_file_of_no_known_format_is_given_up_on_after_the_detection_lines() {
    let mut live = LiveSession::new();
    let mut out = Vec::new();
    for i in 0..DETECT_LINES {
        live.push_line(i + 1, r#"{"hello": 1}"#, &mut out);
    }
    assert!(live.is_unknown());
    assert!(out.is_empty());
}

#[test]
fn lines_before_the_format_is_known_are_read_once_it_is() {
    let mut lines = vec!["not json at all"];
    lines.extend_from_slice(CLAUDE);
    let (_, items) = feed(&lines);
    assert_eq!(calls(&items).len(), 3);
    assert!(
        items
            .iter()
            .any(|i| matches!(i, LiveItem::Warning(w) if w.line == 1))
    );
}

/// The next call's tool call is reported with the line that writes it, not when its
/// message closes later: the count of the open call's blocks already reported belongs
/// to the call it was counted on.
#[test]
fn a_later_calls_tool_call_comes_with_its_own_line() {
    let call = |n: usize| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"a{n}","requestId":"r{n}","message":{{"id":"m{n}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{}}}}],"usage":{{"input_tokens":10,"output_tokens":1}}}}}}"#
        )
    };
    let result = |n: usize| {
        format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"u{n}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{n}","content":"ok"}}]}}}}"#
        )
    };
    let mut live = LiveSession::new();
    let mut out = Vec::new();
    live.push_line(1, CLAUDE[0], &mut out);
    live.push_line(2, &call(1), &mut out);
    live.push_line(3, &result(1), &mut out);
    out.clear();
    live.push_line(4, &call(2), &mut out);
    assert!(
        out.iter()
            .any(|i| matches!(i, LiveItem::ToolCall { id, line: 4, .. } if id == "t2")),
        "{out:?}"
    );
}

/// Issue 39, item 5: a follower's memory grew about 0.9 KB a line (the builder held every
/// message it had already shown). Now what it holds of the messages stays the same
/// however many lines it read, and each message is still shown once, with its preview.
#[test]
fn a_follower_holds_what_it_has_yet_to_show_not_every_line_it_read() {
    let line = |n: usize| {
        let text = format!("{n} {}", "word ".repeat(80));
        if n.is_multiple_of(2) {
            format!(
                r#"{{"type":"user","sessionId":"s1","uuid":"u{n}","timestamp":"2025-10-01T10:00:00Z","message":{{"role":"user","content":"{text}"}}}}"#
            )
        } else {
            format!(
                r#"{{"type":"assistant","sessionId":"s1","uuid":"a{n}","requestId":"r{n}","timestamp":"2025-10-01T10:00:01Z","message":{{"id":"m{n}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":10,"output_tokens":1}}}}}}"#
            )
        }
    };
    let held = |lines: usize| {
        let mut live = LiveSession::new();
        let mut out = Vec::new();
        let mut shown = 0;
        for n in 0..lines {
            live.push_line(n + 1, &line(n), &mut out);
            shown += out
                .drain(..)
                .filter(|i| matches!(i, LiveItem::Message(m) if m.preview.contains("word")))
                .count();
        }
        let s = live.session().unwrap();
        let bytes: usize = s.messages.iter().map(|m| m.joined_text().len()).sum();
        let strings = s.info.iter().filter(|i| i.uuid.is_some()).count();
        (shown, bytes, strings)
    };
    let (shown1, bytes1, strings1) = held(1_000);
    let (shown2, bytes2, strings2) = held(2_000);
    // Every message was shown, with its text (the open call's last one while it is open).
    assert_eq!((shown1, shown2), (1_000, 2_000));
    // A window of the newest messages (`WHOLE_TAIL`, forgotten `FORGET_BATCH` at a time:
    // `live_held_tests`), whatever the lines read.
    let most = WHOLE_TAIL + FORGET_BATCH + 2;
    for (bytes, strings) in [(bytes1, strings1), (bytes2, strings2)] {
        assert!(
            bytes <= most * 500 && strings <= most,
            "message content held grows with the lines read: {bytes1} then {bytes2}, \
             {strings1} then {strings2} origins"
        );
    }
}

/// Issue 38: the rows came as tool call, model call, text, result, and a compaction before
/// the messages its line closed (line numbers 840, 828, 839). Now every item comes in the
/// order of the lines that wrote it, the call before its text and the text before its
/// tool calls, each once.
#[test]
fn items_come_in_the_order_of_the_file_and_a_tool_call_names_its_command() {
    let (_, items) = feed(CLAUDE);
    let lines: Vec<(usize, &str)> = items
        .iter()
        .filter_map(|i| {
            let kind = match i {
                LiveItem::Call(_) => "call",
                LiveItem::Compaction { update: true, .. } => return None,
                LiveItem::Compaction { .. } => "compaction",
                LiveItem::Message(_) => "message",
                LiveItem::ToolCall { .. } => "tool",
                LiveItem::Skipped { .. } => "skipped",
                LiveItem::Warning(_) => return None,
            };
            Some((i.order(0).0, kind))
        })
        .collect();
    let mut sorted = lines.clone();
    sorted.sort_by_key(|(line, _)| *line);
    assert_eq!(lines, sorted, "not in file order: {lines:?}");
    assert_eq!(
        lines[..5],
        [
            (1, "message"),
            (2, "call"),
            (2, "message"),
            (3, "tool"),
            (4, "message")
        ]
    );
    // "Looking." is reported once, while its call was open.
    let looking = items
        .iter()
        .filter(|i| matches!(i, LiveItem::Message(m) if m.preview == "Looking."))
        .count();
    assert_eq!(looking, 1);
    assert!(
        items.iter().any(
            |i| matches!(i, LiveItem::ToolCall { name, subject, .. } if name == "Bash" && subject == "ls")
        ),
        "{items:?}"
    );
}

#[test]
fn a_tool_subject_is_its_path_or_command_on_one_line_and_cut() {
    use serde_json::json;
    assert_eq!(
        tool_subject(&json!({"file_path": "/p/src/a.rs", "content": "x"})),
        "/p/src/a.rs"
    );
    assert_eq!(
        tool_subject(&json!({"command": ["bash", "-lc", "cargo test\n  -q"]})),
        "cargo test -q"
    );
    assert_eq!(tool_subject(&json!({"cmd": "ls"})), "ls");
    assert_eq!(tool_subject(&json!({"query": "x"})), "");
    let long = tool_subject(&json!({"command": "x".repeat(500)}));
    assert_eq!(long.chars().count(), SUBJECT_CHARS + 1);
}

/// The real Codex 0.171 over its WebSocket (the harness's `codex-ws` run, trimmed by
/// `scripts/real_agents/trim_codex_rollout.py`): the server compacts twice, and each time
/// the compaction's own call comes as a `token_usage_record` just before the `compacted`
/// line that names it, with nothing before it that says so. Read live, the calls are the
/// 16 the whole-file read counts (18 before: the two compactions' own calls), none of them
/// the compaction calls' 37,000 tokens, and both compactions are of kind "server".
#[test]
fn a_codex_server_compactions_own_call_is_not_a_call_live_either() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/sessions/codex_ws_0171.jsonl"
    ))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (live, items) = feed(&lines);
    let whole = parse_session_text(&text).unwrap();
    assert_eq!(whole.calls.len(), 16);
    let main: Vec<_> = calls(&items).into_iter().filter(|(_, s)| !s).collect();
    assert_eq!(main.len(), 16, "{main:?}");
    assert!(main.iter().all(|(t, _)| *t < 34_000), "{main:?}");
    assert_eq!(live.session().unwrap().calls, whole.calls);
    let kinds: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            LiveItem::Compaction {
                compaction,
                update: false,
                ..
            } => Some(compaction.kind),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [CompactionKind::Server, CompactionKind::Server]);
    assert!(
        whole
            .compactions
            .iter()
            .all(|c| c.kind == CompactionKind::Server)
    );
}

/// The line `watch --text` prints an item at, None for an item it does not print (an
/// answer of tool calls only: its tool lines say it).
fn printed_line(i: &LiveItem) -> Option<usize> {
    match i {
        LiveItem::Call(c) => Some(c.line),
        LiveItem::Compaction {
            update: true, at, ..
        } => Some(*at),
        LiveItem::Compaction { compaction, .. } => Some(compaction.line),
        LiveItem::Message(m) if m.preview.trim().is_empty() && m.tool_results == 0 => None,
        LiveItem::Message(m) => Some(m.line),
        LiveItem::ToolCall { line, .. } | LiveItem::Skipped { line, .. } => Some(*line),
        LiveItem::Warning(_) => None,
    }
}

/// Issue 38, on a rollout Codex 0.171 wrote: the reader closes an answer only after the
/// token count that reports its call, so "line 27: call" came before "line 26: assistant";
/// and a compaction's later detail took the compaction's own line (46 after 52). Now the
/// printed line numbers never go down, and each answer is reported once.
#[test]
fn a_codex_rollouts_printed_lines_never_go_down() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/sessions/codex_ws_0171.jsonl"
    ))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (_, items) = feed(&lines);
    let printed: Vec<usize> = items.iter().filter_map(printed_line).collect();
    assert!(printed.len() > 40, "{printed:?}");
    for w in printed.windows(2) {
        assert!(w[0] <= w[1], "{} before {}: {printed:?}", w[0], w[1]);
    }
    // Each answer once: as many as the whole-file read holds.
    let done = |role: &str, preview: &str| role == "assistant" && preview.starts_with("Done:");
    let live = items
        .iter()
        .filter(|i| matches!(i, LiveItem::Message(m) if done(&m.role, &m.preview)))
        .count();
    let whole = parse_session_text(&text).unwrap();
    let whole = whole
        .messages
        .iter()
        .filter(|m| done(m.role(), m.text().unwrap_or(&m.joined_text())))
        .count();
    assert!(live >= 2, "{live}");
    assert_eq!(live, whole, "answers reported once");
    // A compaction's later detail is reported at a later line than the compaction's own.
    assert!(items.iter().any(|i| matches!(i,
        LiveItem::Compaction { update: true, at, compaction, .. } if *at > compaction.line)));
}
