//! Codex rollouts written for the tests of `forgot`'s walk and memo.

use serde_json::json;

/// A Codex rollout of `turns` turns (the line shapes of the fixture `codex_rollout`), each a
/// prompt, an answer and a compaction whose replacement history keeps the turn's prompt or,
/// with `every_prompt`, every prompt typed so far (as Codex does while they fit).
pub(crate) fn rollout(turns: usize, every_prompt: bool) -> String {
    let line = |kind: &str, payload: serde_json::Value| {
        json!({"timestamp": "2025-11-02T09:00:00.000Z", "type": kind, "payload": payload})
            .to_string()
    };
    let prompt = |t: usize| {
        json!({"type": "message", "role": "user",
               "content": [{"type": "input_text", "text": format!("Fix bug {t} in src/a{t}.rs")}]})
    };
    let mut out = vec![line(
        "session_meta",
        json!({"id": "r", "cli_version": "0.55.0"}),
    )];
    for t in 0..turns {
        out.push(line("response_item", prompt(t)));
        out.push(line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": format!("Fixed; error E{t} is gone.")}]}),
        ));
        let first = if every_prompt { 0 } else { t };
        let kept: Vec<_> = (first..=t).map(prompt).collect();
        out.push(line(
            "compacted",
            json!({"message": format!("Summary {t}"), "replacement_history": kept}),
        ));
        out.push(line("event_msg", json!({"type": "context_compacted"})));
    }
    out.join("\n")
}
