//! What a follower holds (issue 39, item 5): bounded by what it shows, not by the lines it
//! read, and forgetting what it reported changes no item it reports.

use super::*;

/// Line `n` of a conversation of one-word turns (as `scripts/gen_claude_session.py
/// --tiny-lines` writes): prompts, answers with their usage, now and then a tool call and
/// its result; every `rewind_every` lines a prompt goes back to a parent far behind, after
/// a call of a tool use alone (whose answer is reported when it closes, as abandoned).
fn claude_line(n: usize, rewind_every: usize) -> String {
    let rewinds = |n: usize| rewind_every > 0 && n > 0 && n.is_multiple_of(rewind_every);
    let parent = match n {
        0 => "null".to_string(),
        n if rewinds(n) => format!(r#""u{}""#, n - 700),
        n => format!(r#""u{}""#, n - 1),
    };
    let head = format!(r#""uuid":"u{n}","parentUuid":{parent},"sessionId":"s1""#);
    if n > 0 && n % 1000 == 500 {
        // A compaction, every other one without its token counts (filled from the calls).
        let meta = if n % 2000 == 500 {
            r#","compactMetadata":{"trigger":"auto","preTokens":9000}"#
        } else {
            ""
        };
        return format!(r#"{{"type":"system","subtype":"compact_boundary",{head}{meta}}}"#);
    }
    if n.is_multiple_of(2) {
        let content = if n.is_multiple_of(10) && n > 0 && !rewinds(n) {
            format!(
                r#"[{{"type":"tool_result","tool_use_id":"t{}","content":"ok"}}]"#,
                n - 1
            )
        } else {
            format!(r#""go {n}""#)
        };
        format!(r#"{{"type":"user",{head},"message":{{"role":"user","content":{content}}}}}"#)
    } else {
        let block = if n % 10 == 9 || rewinds(n + 1) {
            format!(r#"{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{"command":"ls"}}}}"#)
        } else {
            r#"{"type":"text","text":"ok"}"#.to_string()
        };
        format!(
            r#"{{"type":"assistant",{head},"requestId":"r{n}","message":{{"id":"m{n}","role":"assistant","content":[{block}],"usage":{{"input_tokens":{},"output_tokens":1}}}}}}"#,
            1000 + n
        )
    }
}

/// Line `n` of a Codex rollout of one-word turns: a prompt, a tool call and its output, an
/// answer, its token count, and a compaction now and then.
fn codex_lines(turns: usize) -> Vec<String> {
    let mut lines = vec![
        r#"{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/p","cli_version":"0.50.0"}}"#.to_string(),
        r#"{"timestamp":"2025-10-01T10:00:00Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/p"}}"#.to_string(),
    ];
    let item = |p: String| {
        format!(r#"{{"timestamp":"2025-10-01T10:00:01Z","type":"response_item","payload":{p}}}"#)
    };
    for t in 0..turns {
        lines.push(item(format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"go {t}"}}]}}"#
        )));
        lines.push(item(format!(
            r#"{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"ls\"]}}","call_id":"k{t}"}}"#
        )));
        lines.push(item(format!(
            r#"{{"type":"function_call_output","call_id":"k{t}","output":"ok"}}"#
        )));
        lines.push(item(
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}"#.to_string(),
        ));
        lines.push(format!(
            r#"{{"timestamp":"2025-10-01T10:00:02Z","type":"event_msg","payload":{{"type":"token_count","info":{{"last_token_usage":{{"input_tokens":{},"cached_input_tokens":0,"output_tokens":1}},"model_context_window":272000}}}}}}"#,
            1000 + t
        ));
        if t % 300 == 299 {
            lines.push(
                r#"{"timestamp":"2025-10-01T10:00:03Z","type":"compacted","payload":{"message":"Summary."}}"#.to_string(),
            );
        }
    }
    lines
}

/// Follows `lines`, forgetting what was reported or (`keep_all`) not; the items reported
/// and what the follower holds at the end.
pub(super) fn follow(lines: &[String], keep_all: bool) -> (Vec<LiveItem>, usize) {
    follow_indexing(lines, keep_all, UUID_TAIL)
}

/// `follow`, a Claude Code follower indexing at most `uuid_cap` line uuids.
fn follow_indexing(lines: &[String], keep_all: bool, uuid_cap: usize) -> (Vec<LiveItem>, usize) {
    let mut live = LiveSession::new();
    live.keep_all = keep_all;
    live.uuid_cap = uuid_cap;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        live.push_line(i + 1, l, &mut out);
    }
    (out, live.held_items())
}

/// Held at most, whatever the length of the file: the messages and their origins behind
/// the last reported (`WHOLE_TAIL`, forgotten `FORGET_BATCH` at a time), the calls
/// (`CALLS_TAIL`, the same), the tool ids remembered, and a few open.
const HELD_BOUND: usize = 2 * (WHOLE_TAIL + FORGET_BATCH) + CALLS_TAIL + FORGET_BATCH + 256 + 32;

#[test]
fn a_follower_holds_a_window_not_every_line_it_read() {
    // Claude Code's: `a_claude_follower_indexes_the_uuids_since_the_last_compaction`.
    let (_, held1) = follow(&codex_lines(1_000), false);
    let (_, held2) = follow(&codex_lines(2_000), false);
    assert!(
        held1 <= HELD_BOUND && held2 <= HELD_BOUND,
        "a Codex follower holds {held1} items after 1000 turns, {held2} after 2000"
    );
    // What it forgot was there to forget.
    let (_, all) = follow(&codex_lines(2_000), true);
    assert!(all > 4 * HELD_BOUND, "{all}");
}

#[test]
fn forgetting_what_was_reported_changes_no_item() {
    // Rewinds far behind the window, compactions with and without their token counts.
    let claude: Vec<String> = (0..6_000).map(|i| claude_line(i, 1_230)).collect();
    let (kept, _) = follow(&claude, true);
    let (forgot, _) = follow(&claude, false);
    assert!(kept.len() > 6_000, "{}", kept.len());
    assert!(
        kept.iter()
            .any(|i| matches!(i, LiveItem::Message(m) if m.kind == MessageKind::Abandoned)),
        "the rewinds abandon a branch"
    );
    assert_eq!(kept, forgot);
    let codex = codex_lines(2_000);
    let (kept, _) = follow(&codex, true);
    let (forgot, _) = follow(&codex, false);
    assert!(
        kept.iter()
            .filter(|i| matches!(i, LiveItem::Compaction { .. }))
            .count()
            >= 6
    );
    assert_eq!(kept, forgot);
    // A real 0.171 rollout, its turns written again under new call ids.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/sessions/codex_0171.jsonl"
    ))
    .unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for k in 0..30 {
        for l in text.lines().skip(1) {
            lines.push(l.replace("call_", &format!("call_{k}_")));
        }
    }
    let (kept, _) = follow(&lines, true);
    let (forgot, _) = follow(&lines, false);
    assert!(kept.len() > 1_000, "{}", kept.len());
    assert_eq!(kept, forgot);
}

#[test]
fn a_claude_follower_indexes_the_uuids_since_the_last_compaction() {
    // A compaction every 1,000 lines: the uuids of the lines since the last one stay.
    let claude = |n: usize| (0..n).map(|i| claude_line(i, 0)).collect::<Vec<_>>();
    let (_, held1) = follow(&claude(5_000), false);
    let (_, held2) = follow(&claude(10_000), false);
    let bound = HELD_BOUND + 1_000;
    assert!(
        held1 <= bound && held2 <= bound,
        "{held1} items held after 5000 lines, {held2} after 10000"
    );
    let (_, all) = follow(&claude(10_000), true);
    assert!(all > 10_000, "{all}");
}

#[test]
fn a_claude_follower_that_never_sees_a_compaction_indexes_a_bounded_number_of_uuids() {
    // No compaction; a prompt rewinds 700 lines back every 1,230 lines.
    let lines: Vec<String> = (0..8_000)
        .map(|i| claude_line(i, 1_230))
        .filter(|l| !l.contains("compact_boundary"))
        .collect();
    let warned = |items: &[LiveItem]| {
        items
            .iter()
            .filter(|i| matches!(i, LiveItem::Warning(w) if w.message == UUIDS_DROPPED))
            .count()
    };
    let (kept, _) = follow(&lines, true);
    // A cap above the rewinds' reach: the same items, the drop said once.
    let (bounded, held) = follow_indexing(&lines, false, 2_000);
    assert!(held <= HELD_BOUND + 2_000, "{held} items held");
    assert_eq!(warned(&bounded), 1);
    let without: Vec<LiveItem> = bounded
        .into_iter()
        .filter(|i| !matches!(i, LiveItem::Warning(w) if w.message == UUIDS_DROPPED))
        .collect();
    assert_eq!(kept, without);
    assert!(
        kept.iter()
            .any(|i| matches!(i, LiveItem::Message(m) if m.kind == MessageKind::Abandoned)),
        "the rewinds abandon a branch"
    );
    // A cap below it: the rewinds are missed, as the warning said they would be.
    let (short, held) = follow_indexing(&lines, false, 400);
    assert!(held <= HELD_BOUND + 400, "{held} items held");
    assert_eq!(warned(&short), 1);
    assert!(
        !short
            .iter()
            .any(|i| matches!(i, LiveItem::Message(m) if m.kind == MessageKind::Abandoned))
    );
}
