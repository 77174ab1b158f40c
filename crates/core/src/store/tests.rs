//! The store's naming, reuse and dry-run rules, on temp dirs.

use super::*;

#[test]
fn safe_ids_name_their_file_as_is() {
    assert_eq!(tool_result_stem(Some("toolu_01.A-b")), "toolu_01.A-b");
    assert_eq!(tool_result_stem(None), "unknown");
    assert_eq!(tool_result_stem(Some("")), "unknown");
    let s64 = "a".repeat(64);
    assert_eq!(tool_result_stem(Some(&s64)), s64);
}

#[test]
fn unsafe_ids_are_sanitized_and_hashed() {
    // sha256("../escape") starts with these 8 hex digits (checked with Python's hashlib).
    let hex = {
        let d = Sha256::digest(b"../escape");
        d.iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(
        tool_result_stem(Some("../escape")),
        format!(".._escape-{hex}")
    );
    assert!(tool_result_stem(Some("..")).starts_with("..-"));
    assert!(tool_result_stem(Some(".")).starts_with(".-"));
    let long = "x".repeat(65);
    let stem = tool_result_stem(Some(&long));
    assert_eq!(stem.len(), 64 + 1 + 8);
    assert_eq!(tool_result_stem(Some("a/b")).len(), 3 + 1 + 8);
    assert!(tool_result_stem(Some("é")).starts_with("_-"));
}

#[test]
fn taken_names_are_reused_only_for_identical_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let a = store.persist_tool_result(Some("t1"), "first").unwrap();
    assert_eq!(a.path, ".task_outputs/tool-results/t1.txt");
    assert_eq!(a.status, WriteStatus::Created);
    let again = store.persist_tool_result(Some("t1"), "first").unwrap();
    assert_eq!(again.status, WriteStatus::Reused);
    assert_eq!(again.path, a.path);
    let b = store.persist_tool_result(Some("t1"), "second").unwrap();
    assert_eq!(b.path, ".task_outputs/tool-results/t1-2.txt");
    assert_eq!(
        fs::read_to_string(dir.path().join(&a.path)).unwrap(),
        "first"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join(&b.path)).unwrap(),
        "second"
    );
}

#[test]
fn transcripts_never_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let a = store.write_transcript(1_700_000_000, "x\n").unwrap();
    let b = store.write_transcript(1_700_000_000, "x\n").unwrap();
    assert_eq!(a.path, ".transcripts/transcript_1700000000.jsonl");
    assert_eq!(b.path, ".transcripts/transcript_1700000000-2.jsonl");
    assert_eq!(store.list_transcripts().len(), 2);
}

#[test]
fn saved_copies_must_be_files_inside_the_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let f = store.persist_tool_result(Some("t1"), "text").unwrap();
    assert_eq!(store.saved_tool_result(&f.path), Some(f.path.clone()));
    assert_eq!(
        store.saved_tool_result(&format!("./{}", f.path)),
        Some(f.path.clone())
    );
    for bad in [
        ".task_outputs/tool-results/missing.txt",
        ".task_outputs/tool-results",
        ".task_outputs/tool-results/../tool-results/t1.txt",
        "/etc/passwd",
        "t1.txt",
    ] {
        assert_eq!(store.saved_tool_result(bad), None, "{bad}");
    }
    let dry = store.dry_run();
    let g = dry.persist_tool_result(Some("t2"), "other").unwrap();
    assert_eq!(dry.saved_tool_result(&g.path), Some(g.path.clone()));
    assert_eq!(store.saved_tool_result(&g.path), None);
}

#[test]
fn named_transcripts_keep_to_their_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let a = store.write_transcript_named("../x", "t\n").unwrap();
    assert_eq!(a.path, ".transcripts/transcript____x.jsonl");
    let b = store.write_transcript_named("00ff", "t\n").unwrap();
    let c = store.write_transcript_named("00ff", "u\n").unwrap();
    assert_eq!(b.path, ".transcripts/transcript_00ff.jsonl");
    assert_eq!(c.path, ".transcripts/transcript_00ff-2.jsonl");
}

#[test]
fn dry_run_names_like_the_real_store_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    store.persist_tool_result(Some("t1"), "old").unwrap();
    let dry = store.dry_run();
    assert_eq!(
        dry.persist_tool_result(Some("t1"), "new").unwrap().path,
        ".task_outputs/tool-results/t1-2.txt"
    );
    assert_eq!(
        dry.persist_tool_result(Some("t1"), "newer").unwrap().path,
        ".task_outputs/tool-results/t1-3.txt"
    );
    assert!(
        !dir.path()
            .join(".task_outputs/tool-results/t1-2.txt")
            .exists()
    );
    assert_eq!(store.list_tool_results().len(), 1);
}
