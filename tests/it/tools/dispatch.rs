//! Dispatch: the compact tool, bad calls as one-line errors, the tool specs.

use super::*;

#[tokio::test]
async fn compact_requests_compaction_and_runs_nothing() {
    let f = fixture();
    let cancel = CancellationToken::new();
    let limits = ToolLimits::default();
    assert_eq!(
        run_tool(
            &f.ws,
            "compact",
            &json!({"focus": "the parser"}),
            &limits,
            &cancel
        )
        .await,
        ToolOutcome::CompactRequested {
            focus: Some("the parser".into())
        }
    );
    assert_eq!(
        run_tool(&f.ws, "compact", &json!({}), &limits, &cancel).await,
        ToolOutcome::CompactRequested { focus: None }
    );
}

#[tokio::test]
async fn bad_calls_become_one_line_errors() {
    let f = fixture();
    let cases = [
        ("nope", json!({}), "Unknown tool: nope"),
        (
            "bash",
            json!({}),
            "Invalid input: missing required field `command`",
        ),
        (
            "bash",
            json!({"command": 5}),
            "Invalid input: `command` must be a string",
        ),
        (
            "read_file",
            json!("x"),
            "Invalid input: the tool input must be a JSON object",
        ),
        (
            "write_file",
            json!({"path": "x"}),
            "Invalid input: missing required field `content`",
        ),
        (
            "read_file",
            json!({"path": "x", "limit": -1}),
            "Invalid input: `limit` must be a non-negative integer",
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(
            f.call(name, input).await,
            (expected.to_string(), true),
            "{name}"
        );
    }
}

#[test]
fn tool_specs_are_complete() {
    let specs = tool_specs();
    assert_eq!(specs.len(), 6);
    for spec in &specs {
        assert!(spec.description.len() > 40, "{}", spec.name);
        assert_eq!(spec.input_schema["type"], "object");
    }
}
