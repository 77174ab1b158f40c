//! Session lines written from the formats (Claude Code's JSONL, Codex's rollout envelope),
//! numbered so each call, compaction and message can be told apart in the output.

pub fn claude_user(n: usize, text: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s1","uuid":"u{n}","cwd":"/p","timestamp":"2025-10-01T10:00:{n:02}Z","message":{{"role":"user","content":"{text}"}}}}"#
    )
}

pub fn claude_call(n: usize, cache_read: u64) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s1","uuid":"a{n}","requestId":"r{n}","timestamp":"2025-10-01T10:00:{n:02}Z","message":{{"id":"m{n}","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{"command":"ls {n}"}}}}],"usage":{{"input_tokens":10,"cache_read_input_tokens":{cache_read},"cache_creation_input_tokens":100,"output_tokens":7}}}}}}"#
    )
}

pub fn claude_result(n: usize) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s1","uuid":"r{n}","timestamp":"2025-10-01T10:00:{n:02}Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{n}","content":"files of {n}"}}]}}}}"#
    )
}

pub fn claude_boundary(pre: u64) -> String {
    format!(
        r#"{{"type":"system","subtype":"compact_boundary","sessionId":"s1","uuid":"cb","timestamp":"2025-10-01T10:01:00Z","compactMetadata":{{"trigger":"auto","preTokens":{pre}}}}}"#
    )
}

pub fn claude_summary() -> String {
    r#"{"type":"user","sessionId":"s1","uuid":"cs","isCompactSummary":true,"timestamp":"2025-10-01T10:01:01Z","message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: listed the files."}}"#.to_string()
}

pub fn claude_micro(ids: &[&str]) -> String {
    let ids: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
    format!(
        r#"{{"type":"system","subtype":"microcompact_boundary","sessionId":"s1","timestamp":"2025-10-01T10:01:02Z","microcompactMetadata":{{"trigger":"auto","preTokens":9000,"tokensSaved":4000,"compactedToolIds":[{}]}}}}"#,
        ids.join(",")
    )
}

pub fn codex_meta(cwd: &str, id: &str) -> String {
    format!(
        r#"{{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{{"id":"{id}","cwd":"{cwd}","cli_version":"0.50.0"}}}}"#
    )
}

pub fn codex_user(text: &str) -> String {
    format!(
        r#"{{"timestamp":"2025-10-01T10:00:01Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
    )
}

pub fn codex_tool(n: usize) -> [String; 2] {
    [
        format!(
            r#"{{"timestamp":"2025-10-01T10:00:02Z","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"ls\"]}}","call_id":"k{n}"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2025-10-01T10:00:03Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"k{n}","output":"out {n}"}}}}"#
        ),
    ]
}

pub fn codex_tokens(total: u64, last_input: u64) -> String {
    format!(
        r#"{{"timestamp":"2025-10-01T10:00:04Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"output_tokens":1}},"last_token_usage":{{"input_tokens":{last_input},"cached_input_tokens":0,"output_tokens":1}},"model_context_window":272000}}}}}}"#
    )
}

pub fn codex_compacted() -> [String; 2] {
    [
        r#"{"timestamp":"2025-10-01T10:00:05Z","type":"compacted","payload":{"message":"Summary: listed the files."}}"#.to_string(),
        r#"{"timestamp":"2025-10-01T10:00:05Z","type":"event_msg","payload":{"type":"context_compacted"}}"#.to_string(),
    ]
}
