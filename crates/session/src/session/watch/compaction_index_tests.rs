use std::io::Write;

use super::*;

fn call(id: &str, input: u64) -> String {
    format!(
        r#"{{"type":"assistant","isSidechain":false,"message":{{"id":"{id}","model":"claude-sonnet-4-6","usage":{{"input_tokens":{input},"cache_read_input_tokens":5,"cache_creation_input_tokens":0,"output_tokens":3}}}}}}"#
    )
}

fn boundary(trigger: &str, pre: u64, post: u64) -> String {
    format!(
        r#"{{"type":"system","subtype":"compact_boundary","isSidechain":false,"compactMetadata":{{"trigger":"{trigger}","preTokens":{pre},"postTokens":{post}}}}}"#
    )
}

fn append(path: &Path, lines: &[String]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

#[test]
fn the_count_covers_the_whole_file_and_a_run_reads_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let data = dir.path().join("data");
    // A compaction, then far more than the old status line's 256 KB window of calls.
    append(&path, &[call("m1", 1000), boundary("auto", 170_000, 9_000)]);
    let filler = format!(
        r#"{{"type":"user","message":{{"content":"{}"}}}}"#,
        "x".repeat(4000)
    );
    append(&path, &vec![filler; 200]);
    append(&path, &[call("m2", 12_000)]);
    let first = indexed(&path, Some(&data)).unwrap();
    assert!(first.complete);
    assert_eq!(first.index.compactions, 1);
    assert_eq!(first.index.last_auto_pre_tokens, Some(170_000));
    assert_eq!(first.index.compacted_since_last_call(), None);
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(first.index.scanned, len);

    // The next run starts where this one stopped: a second compaction is counted on top.
    append(&path, &[boundary("manual", 20_000, 3_000)]);
    let second = indexed(&path, Some(&data)).unwrap();
    assert_eq!(second.index.compactions, 2);
    // A manual compaction does not move where the agent compacts by itself.
    assert_eq!(second.index.last_auto_pre_tokens, Some(170_000));
    let after = second.index.compacted_since_last_call().unwrap();
    assert_eq!(after.post_tokens, Some(3_000));
    assert_eq!(after.trigger.as_deref(), Some("manual"));
    // The saved index says where it stopped: a scan from there with no budget finds it all.
    let saved = load(&data)
        .entries
        .remove(&path.to_string_lossy().into_owned())
        .unwrap();
    let resumed = scan(&path, saved, 0).unwrap();
    assert!(resumed.complete);
    assert_eq!(resumed.index.compactions, 2);
}

#[test]
fn quoted_words_in_a_tool_output_are_not_compactions_or_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    append(
        &path,
        &[
            call("m1", 500),
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"grep: \"subtype\":\"compact_boundary\" and \"type\":\"assistant\""}]}}"#.to_string(),
        ],
    );
    let s = scan(&path, TranscriptIndex::default(), u64::MAX).unwrap();
    assert_eq!(s.index.compactions, 0);
    assert_eq!(s.index.last_call, Some(0));
    assert_eq!(call_at(&path, 0).map(|(n, _)| n), Some(505));
}

#[test]
fn a_replaced_or_shrunk_file_is_scanned_again_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    append(
        &path,
        &[
            call("m1", 1),
            boundary("auto", 10, 1),
            boundary("auto", 10, 1),
        ],
    );
    let first = scan(&path, TranscriptIndex::default(), u64::MAX).unwrap();
    assert_eq!(first.index.compactions, 2);
    std::fs::remove_file(&path).unwrap();
    append(&path, &[call("other", 1), boundary("auto", 10, 1)]);
    let again = scan(&path, first.index, u64::MAX).unwrap();
    assert_eq!(
        again.index.compactions, 1,
        "the old count is not carried over"
    );
}

#[test]
fn a_budget_smaller_than_the_file_is_finished_by_the_next_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lines: Vec<String> = (0..50).map(|_| boundary("auto", 10, 1)).collect();
    append(&path, &lines);
    let mut index = TranscriptIndex::default();
    let mut runs = 0;
    loop {
        let s = scan(&path, index, 1000).unwrap();
        runs += 1;
        index = s.index;
        if s.complete {
            break;
        }
        assert!(runs < 100);
    }
    assert!(runs > 1);
    assert_eq!(index.compactions, 50);
}

#[test]
fn a_corrupt_index_file_is_an_empty_index() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(FILE_NAME), b"{not json").unwrap();
    assert!(load(dir.path()).entries.is_empty());
}
