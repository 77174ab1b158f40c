//! `claude_line`'s tests: a line parsed into fields is the line read from its JSON.

use super::*;

/// The header as the reader read it from a JSON map.
fn header(l: &ClaudeLine) -> Vec<String> {
    vec![
        format!("{:?}", (&l.kind, &l.subtype, &l.uuid, &l.parent)),
        format!("{:?}", (l.is_sidechain, l.is_meta, l.is_compact_summary)),
        format!("{:?}", (&l.timestamp, &l.session_id, &l.version, &l.cwd)),
        format!("{:?}", (&l.git_branch, &l.agent_id, &l.request_id)),
        format!("{:?}", (&l.request_ref, &l.summary, &l.rest)),
        format!("{:?}", &l.message),
    ]
}

#[test]
fn a_parsed_line_is_the_line_read_from_its_json() {
    for text in [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"isMeta":true,"message":{"role":"user","content":"hi"},"toolUseResult":{"stdout":"x"}}"#,
        r#"{"type":"assistant","parentUuid":"u\u0031","isSidechain":"yes","uuid":5,"requestId":"r","message":{"id":"m"}}"#,
        r#"{"type":"system","subtype":"compact_boundary","parentUuid":[1,{"a":2}],"compactMetadata":{"preTokens":9},"type":"summary","summary":"t"}"#,
        r#"{"isSidechain":true,"isSidechain":false,"cwd":{"x":[null]},"gitBranch":"main","agentId":"a","sessionId":"s","version":"2","timestamp":"t","requestRef":"q","rendered":[],"shapeHash":"h","id":"i","shape":{},"params":null,"microcompactMetadata":{}}"#,
        r#"{"message":{"id":"m","id":7,"model":"x","role":"assistant","content":null,"usage":{"input_tokens":5,"output_tokens":2.0,"cache_read_input_tokens":-1,"x":[1],"cache_creation":{"e":3}}}}"#,
        r#"{"message":{"content":[{"type":"text","text":"t"}],"usage":[1]},"message":{"content":"late","usage":"u"}}"#,
        r#"{"message":"text"}"#,
        r#"{"message":[{"content":"x"}]}"#,
        r#"{}"#,
    ] {
        let parsed = ClaudeLine::parse(text).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let read = ClaudeLine::of_value(value).unwrap();
        assert_eq!(header(&parsed), header(&read), "{text}");
    }
    let l =
        ClaudeLine::parse(r#"{"parentUuid":"p","isSidechain":true,"isSidechain":false}"#).unwrap();
    assert_eq!(l.parent, ParentField::Text("p".into()));
    assert!(!l.is_sidechain);
}

#[test]
fn what_is_no_object_or_no_json_is_malformed_as_before() {
    // The warnings the map parse this replaced gave (its words are in the output).
    for (text, said) in [
        (
            "[1]",
            "invalid type: sequence, expected a JSON object at line 1 column 0",
        ),
        ("{\"type\":", "EOF while parsing a value at line 1 column 8"),
        ("{\"a\":1} x", "trailing characters at line 1 column 9"),
        (
            "\"x\"",
            "invalid type: string \"x\", expected a JSON object at line 1 column 3",
        ),
    ] {
        let new = ClaudeLine::parse(text).unwrap_err().to_string();
        assert_eq!(new, said, "{text}");
    }
    // A lone surrogate escape anywhere in the message was an error (the message was
    // parsed whole); out of it, where the key is skipped, it was none.
    assert!(ClaudeLine::parse(r#"{"message":{"role":"\ud800"}}"#).is_err());
    assert!(ClaudeLine::parse(r#"{"toolUseResult":"\ud800"}"#).is_ok());
    // Numbers out of range were no error: they are none now.
    assert!(ClaudeLine::parse(r#"{"uuid":1e999,"message":[1e999],"x":1e999}"#).is_ok());
    assert!(matches!(
        ClaudeLine::of_value(Value::Bool(true)),
        Err(Unread::NotObject)
    ));
}
