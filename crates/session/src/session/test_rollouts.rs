//! Test data the crate's tests share: a real rollout made long.

/// Codex 0.171's rollout repeated `reps` times with fresh message and call ids (the first
/// line, the session's meta, once): each repetition adds its turns and a compaction whose
/// replacement history repeats the earlier ones.
pub(crate) fn repeated_codex_0171(reps: usize) -> String {
    let rollout = include_str!("../../../../tests/fixtures/sessions/codex_0171.jsonl");
    let mut text = String::new();
    for rep in 0..reps {
        for line in rollout.lines().skip(usize::from(rep > 0)) {
            let line = line
                .replace("msg_", &format!("msg_r{rep}_"))
                .replace("call_", &format!("call_r{rep}_"));
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

/// The repeated rollout of `reps` repetitions written to a file in a new temporary
/// directory (kept while the directory lives).
pub(crate) fn repeated_file(reps: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, repeated_codex_0171(reps)).unwrap();
    (dir, path)
}

/// Every file below the test fixtures' folder `under` (all of them: "") whose name ends
/// in one of `exts`, in the order the folders list them.
pub(crate) fn fixture_files(under: &str, exts: &[&str]) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, exts: &[&str], out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, exts, out);
            } else if path
                .extension()
                .is_some_and(|e| exts.iter().any(|x| e == *x))
            {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut out = Vec::new();
    walk(&root.join(under), exts, &mut out);
    out
}

/// Writes the repeated rollout at 4, 8 and 16 repetitions and asserts that, each time the
/// input `measure` gives for a file (and its text) doubles, the work it gives rises no more
/// than 1.1 times as much: `what` names the input in the messages.
pub(crate) fn assert_work_follows_input(
    what: &str,
    measure: impl Fn(&std::path::Path, &str) -> (f64, f64),
) {
    let dir = tempfile::tempdir().unwrap();
    let mut figures = Vec::new();
    for reps in [4, 8, 16] {
        let path = dir.path().join(format!("r{reps}.jsonl"));
        let text = repeated_codex_0171(reps);
        std::fs::write(&path, &text).unwrap();
        figures.push(measure(&path, &text));
    }
    for pair in figures.windows(2) {
        let more = pair[1].0 / pair[0].0;
        let work = pair[1].1 / pair[0].1;
        assert!(more > 1.9, "the {what} doubled: x{more}");
        assert!(work <= more * 1.1, "work x{work:.2} for x{more:.2} {what}");
    }
}

/// One `compacted` line whose history is `items`, with `metadata` and `message`, after a
/// session's meta and one typed prompt.
fn compacted(items: &str, metadata: &str, message: &str) -> String {
    format!(
        concat!(
            r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{{"id":"s","cwd":"/p"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Fix it"}}]}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"compacted","payload":{{"message":{message},"replacement_history":{items}{metadata}}}}}"#,
            "\n"
        ),
        message = message,
        items = items,
        metadata = metadata,
    )
}

/// Rollouts of one compaction each whose history holds items of every odd shape a hostile
/// or future file may hold, under every kind of metadata and summary message; then
/// histories that are no list, a payload that is no object, a line cut short. Each with
/// what it is, its text, and whether its history is a list (read item by item; the odd
/// ones are read as a whole parse reads them, or not at all).
pub(crate) fn odd_histories() -> Vec<(String, String, bool)> {
    let items = [
        // Typed, injected, developer, system, the summary by its text and by its mark.
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"  <environment_context>x"}]}"#,
        r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}"#,
        r#"{"type":"message","role":"system","content":[{"type":"text","text":"S"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"The summary \u00e9"}]}"#,
        r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"The summary \u00e9"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":["compaction.summary"]}}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"y"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":"compaction.summary"}}"#,
        // Two texts, an image, text of the wrong kind or shape, no content, content no list.
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:x"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"reasoning_text","text":"a"},7,"s",{"type":"input_text","text":5}]}"#,
        r#"{"type":"message","role":"user"}"#,
        r#"{"type":"message","role":"user","content":"plain"}"#,
        r#"{"type":"message","role":7,"content":[{"type":"input_text","text":"a"}]}"#,
        r#"{"type":"message","role":"tool","content":[]}"#,
        // Answers: text, refusal, none.
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text"}]}"#,
        // Other kinds: calls, outputs, reasoning, the encrypted summary, unknown, odd.
        r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}"#,
        r#"{"type":"function_call","arguments":"{}","call_id":"c2"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"done"}"#,
        r#"{"type":"custom_tool_call_output","output":"done"}"#,
        r#"{"type":"local_shell_call","id":"l1","action":{"cmd":"ls"}}"#,
        r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}]}"#,
        r#"{"type":"reasoning","content":[{"type":"reasoning_text","text":"t"}]}"#,
        r#"{"type":"reasoning","encrypted_content":"gAAA"}"#,
        r#"{"type":"compaction","encrypted_content":"gAAA"}"#,
        r#"{"type":"ghost_snapshot"}"#,
        r#"{"type":"web_search_call","id":"w","action":{"query":"q"}}"#,
        r#"{"type":"mystery"}"#,
        r#"{}"#,
        r#"{"type":5}"#,
        r#"[1,2]"#,
        r#""text""#,
        r#"null"#,
        r#"{"type":"message","type":"function_call","name":"n","call_id":"c3","role":"user"}"#,
    ];
    let history = format!("[{}]", items.join(","));
    let n = items.len();
    let retained = r#"{"retained_source":{"id":"x"}}"#;
    let metadatas = [
        String::new(),
        format!(
            r#","replacement_history_metadata":[{}]"#,
            vec![retained; n].join(",")
        ),
        // Shorter than the history, null and odd entries, a list that is no list.
        format!(
            r#","replacement_history_metadata":[{retained},{{"retained_source":null}},7,{{}},[1],{retained}]"#
        ),
        r#","replacement_history_metadata":{"a":1}"#.to_string(),
    ];
    let mut all = Vec::new();
    for metadata in &metadatas {
        for message in [r#""The summary \u00e9""#, r#""""#, "7", "null"] {
            let text = compacted(&history, metadata, message);
            all.push((format!("{metadata} / {message}"), text, true));
        }
    }
    for odd in [
        compacted("{}", "", r#""m""#),
        compacted("7", "", r#""m""#),
        compacted(r#"[{"type":"message"}"#, "", r#""m""#),
        "{\"type\":\"compacted\",\"payload\":[\"replacement_history\"]}\n".to_string(),
        "{\"type\":\"compacted\",\"payload\":{\"replacement_history\":[]},\"payload\":1}\n"
            .to_string(),
    ] {
        all.push((odd.clone(), odd, false));
    }
    all
}
