use std::io::Write;

use super::*;

fn options(dir: &Path, width: usize) -> StatusOptions<'_> {
    StatusOptions {
        max_width: width,
        data_dir: Some(dir),
        settings: AgentSettings::default(),
        at_risk_within: None,
    }
}

fn input(path: &Path, current: Option<u64>, percent: Option<u64>) -> String {
    let usage = current.map_or("null".to_string(), |n| {
        format!(r#"{{"input_tokens":{n},"output_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}"#)
    });
    let percent = percent.map_or("null".to_string(), |p| p.to_string());
    format!(
        r#"{{"transcript_path":{:?},"model":{{"id":"claude-sonnet-4-6","display_name":"Sonnet 4.6"}},"context_window":{{"context_window_size":200000,"current_usage":{usage},"used_percentage":{percent}}}}}"#,
        path.to_string_lossy()
    )
}

fn write(path: &Path, lines: &[&str]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

const CALL: &str = r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":48000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":3}}}"#;
const MANUAL: &str = r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":48004,"postTokens":2730}}"#;
const AUTO: &str = r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":170251,"postTokens":9000}}"#;

#[test]
fn bad_input_is_one_short_line() {
    let dir = tempfile::tempdir().unwrap();
    for input in ["", "nope", "{}"] {
        let line = status_line(input, &options(dir.path(), 120));
        assert!(line.starts_with("ctxlab: no status"), "{line}");
        assert!(
            !line.contains('\n') && line.chars().count() <= 120,
            "{line}"
        );
    }
}

#[test]
fn before_the_first_call_it_is_a_new_session_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("not-yet.jsonl");
    let line = status_line(&input(&missing, None, None), &options(dir.path(), 120));
    assert_eq!(line, "Sonnet 4.6 · new session");
    let empty = dir.path().join("empty.jsonl");
    write(&empty, &[r#"{"type":"user","message":{"content":"hi"}}"#]);
    let line = status_line(&input(&empty, None, None), &options(dir.path(), 120));
    assert_eq!(line, "Sonnet 4.6 · new session");
}

#[test]
fn claude_codes_own_figures_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write(&path, &[CALL]);
    // The transcript says 48,000; Claude Code says 80,000 and 40%: its figures are shown.
    let line = status_line(
        &input(&path, Some(80_000), Some(40)),
        &options(dir.path(), 120),
    );
    assert_eq!(
        line,
        "Sonnet 4.6 · ctx 80,000/200,000 (40%) · no compaction · 87,000 to go (auto-compacts at 167,000)"
    );
    // Without them, the transcript's last call.
    let line = status_line(&input(&path, None, None), &options(dir.path(), 120));
    assert_eq!(
        line,
        "Sonnet 4.6 · ctx 48,000/200,000 (24%) · no compaction · 119,000 to go (auto-compacts at 167,000)"
    );
}

#[test]
fn right_after_a_compaction_the_context_is_its_post_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write(&path, &[CALL, MANUAL]);
    // Claude Code still passes the call before the compaction.
    let line = status_line(
        &input(&path, Some(48_000), Some(24)),
        &options(dir.path(), 120),
    );
    assert_eq!(
        line,
        "Sonnet 4.6 · ctx 2,730/200,000 (1%) after compaction · 1 compaction · 164,270 to go (auto-compacts at 167,000)"
    );
}

#[test]
fn the_headroom_is_to_claude_codes_own_threshold_and_a_manual_compaction_never_moves_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    // A manual compaction well below the rule: the rule's 167,000 stands.
    write(&path, &[CALL, MANUAL, CALL]);
    let line = status_line(&input(&path, Some(50_000), None), &options(dir.path(), 200));
    assert!(
        line.ends_with("117,000 to go (auto-compacts at 167,000)"),
        "{line}"
    );
    // An automatic one above it confirms it.
    write(&path, &[AUTO, CALL]);
    let line = status_line(&input(&path, Some(50_000), None), &options(dir.path(), 200));
    assert_eq!(
        line,
        "Sonnet 4.6 · ctx 50,000/200,000 (25%) · 2 compactions · 117,000 to go (auto-compacts at 167,000)"
    );
    // CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 lowers it to half the window less the answer's share.
    let mut o = options(dir.path(), 200);
    o.settings.claude_percent = Some((50.0, "$CLAUDE_AUTOCOMPACT_PCT_OVERRIDE".into()));
    let line = status_line(&input(&path, Some(50_000), None), &o);
    assert!(
        line.ends_with("40,000 to go (auto-compacts at 90,000)"),
        "{line}"
    );
}

#[test]
fn the_line_fits_the_width_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write(&path, &[CALL, AUTO, CALL]);
    let full = status_line(&input(&path, Some(50_000), None), &options(dir.path(), 200));
    assert!(full.contains("to go"), "{full}");
    for width in [20, 40, 60, 80, 100] {
        let line = status_line(
            &input(&path, Some(50_000), None),
            &options(dir.path(), width),
        );
        assert!(
            unicode_width::UnicodeWidthStr::width(line.as_str()) <= width,
            "{width}: {line}"
        );
    }
    // The headroom gives way before the compactions do.
    let line = status_line(&input(&path, Some(50_000), None), &options(dir.path(), 80));
    assert_eq!(line, "Sonnet 4.6 · ctx 50,000/200,000 (25%) · 1 compaction");
    assert!(full.ends_with("to go (auto-compacts at 167,000)"), "{full}");
}

#[test]
fn a_count_still_in_progress_says_so_and_never_claims_the_context_after_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    // Far more than one run scans, each MiB ending on a compaction: the first runs count,
    // and the line says so without taking a compaction in the middle for the last event.
    let filler = format!(
        r#"{{"type":"user","message":{{"content":"{}"}}}}"#,
        "y".repeat(1 << 20)
    );
    let blocks = (crate::session::watch::compaction_index::SCAN_BYTES_PER_RUN >> 20) + 8;
    let mut f = std::fs::File::create(&path).unwrap();
    for _ in 0..blocks {
        writeln!(f, "{filler}").unwrap();
        writeln!(f, "{CALL}").unwrap();
        writeln!(f, "{MANUAL}").unwrap();
    }
    writeln!(f, "{CALL}").unwrap();
    drop(f);
    let first = status_line(&input(&path, Some(48_000), None), &options(dir.path(), 200));
    assert!(first.contains("compactions (counting)"), "{first}");
    assert!(!first.contains("after compaction"), "{first}");
    let mut line = first;
    for _ in 0..10 {
        line = status_line(&input(&path, Some(48_000), None), &options(dir.path(), 200));
        if !line.contains("counting") {
            break;
        }
    }
    assert!(line.contains(&format!("· {blocks} compactions")), "{line}");
    assert!(line.contains("ctx 48,000/"), "{line}");
}

#[test]
fn near_the_threshold_it_counts_the_facts_at_risk_as_watch_does_from_the_tail_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forgot/eval_claude.jsonl");
    std::fs::copy(&fixture, &path).unwrap();
    // The same count as `watch --text`'s list, which reads the whole session.
    let whole = crate::forgot::at_risk::at_risk(&crate::session::load_session(&path).unwrap(), 5);
    assert!(whole.total > 0, "{whole:#?}");
    let far = status_line(
        &input(&path, Some(100_000), None),
        &options(dir.path(), 200),
    );
    assert!(!far.contains("at risk"), "{far}");
    let near = status_line(
        &input(&path, Some(150_000), None),
        &options(dir.path(), 200),
    );
    assert!(
        near.contains(&format!(" · {} at risk · 17,000 to go", whole.total)),
        "{near}"
    );
    // 0 turns it off; a narrow line drops the headroom first, then the count.
    let mut off = options(dir.path(), 200);
    off.at_risk_within = Some(0);
    assert!(!status_line(&input(&path, Some(150_000), None), &off).contains("at risk"));
    let narrow = status_line(&input(&path, Some(150_000), None), &options(dir.path(), 75));
    assert!(narrow.ends_with("at risk"), "{narrow}");
    // A tail cut at the cap says so.
    assert_eq!(
        super::statusline_risk::part(3, true).as_deref(),
        Some("3+ at risk")
    );
    assert_eq!(super::statusline_risk::part(0, false), None);
}

/// While the index is still counting, the last compaction it knows is not the file's: the
/// tail from there would hold what a later compaction summarised, so no count at risk is
/// shown until the index reaches the end (then the tail's count, as `forgot` gives it).
#[test]
fn while_the_index_counts_no_facts_at_risk_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forgot/eval_claude.jsonl");
    let filler = format!(
        r#"{{"type":"user","message":{{"content":"Do not touch src/old_{{}}.rs {}"}}}}"#,
        "y".repeat(1 << 20)
    );
    let blocks = (crate::session::watch::compaction_index::SCAN_BYTES_PER_RUN >> 20) + 4;
    let mut f = std::fs::File::create(&path).unwrap();
    for _ in 0..blocks {
        writeln!(f, "{filler}").unwrap();
    }
    f.write_all(&std::fs::read(&fixture).unwrap()).unwrap();
    drop(f);
    let whole =
        crate::forgot::at_risk::at_risk(&crate::session::load_session(&fixture).unwrap(), 5);
    assert!(whole.total > 0);
    let first = status_line(
        &input(&path, Some(150_000), None),
        &options(dir.path(), 200),
    );
    assert!(first.contains("(counting)"), "{first}");
    assert!(!first.contains("at risk"), "{first}");
    let mut line = first;
    for _ in 0..10 {
        line = status_line(
            &input(&path, Some(150_000), None),
            &options(dir.path(), 200),
        );
        if !line.contains("counting") {
            break;
        }
    }
    assert!(
        line.contains(&format!("· 1 compaction · {} at risk ·", whole.total)),
        "{line}"
    );
}

#[test]
fn a_count_of_thousands_of_compactions_groups_its_digits_as_every_other_figure() {
    use crate::session::watch::compaction_index::TranscriptIndex;
    let scanned = |complete| {
        let mut index = TranscriptIndex::default();
        index.compactions = 6_421;
        Scanned { index, complete }
    };
    assert_eq!(compactions_part(&scanned(true)), "6,421 compactions");
    assert_eq!(
        compactions_part(&scanned(false)),
        "6,421+ compactions (counting)"
    );
}
