use super::*;
use crate::session::watch::compaction_index::{TranscriptIndex, scan};

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// On a session the real Claude Code 2.1.332 wrote: every request record and attachment
/// line is passed over, no line of the conversation is.
#[test]
fn only_records_and_attachments_are_passed_over() {
    let text =
        std::fs::read_to_string(fixture("tests/fixtures/sessions/claude_code_2_1_332.jsonl"))
            .unwrap();
    let mut over = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let kind = v["type"].as_str().unwrap_or("");
        let skipped = passed_over(line.as_bytes());
        if kind == "attachment" || kind.starts_with("api-request") {
            assert!(skipped, "{kind}: {}", &line[..line.len().min(200)]);
            over += 1;
        }
        if matches!(kind, "user" | "assistant" | "system") {
            assert!(!skipped, "{kind}: {}", &line[..line.len().min(200)]);
        }
    }
    assert!(over > 10, "{over}");
}

/// The count as `forgot::at_risk` gives it for the tail of `path` from `from`, read whole
/// (what every run did before the count was carried on).
fn forgot_count(path: &Path, from: u64) -> usize {
    let bytes = std::fs::read(path).unwrap();
    let text = kept_text(&bytes[usize::try_from(from).unwrap()..]);
    let session = parse_session_text(&text).unwrap();
    crate::forgot::at_risk::at_risk(&session, 1).total
}

/// Where the tail starts, as the status line's index says.
fn tail_start(path: &Path) -> u64 {
    let scanned = scan(path, TranscriptIndex::default(), u64::MAX).unwrap();
    scanned.index.last_compaction.map_or(0, |c| c.offset)
}

fn memory_entry(data: &Path, path: &Path) -> Option<Entry> {
    load(data)
        .entries
        .get(path.to_string_lossy().as_ref())
        .cloned()
}

/// A run on an unchanged file answers from the memory (here made to say 999, which no
/// count of this file is); once the file grows, it is counted again.
#[test]
fn an_unchanged_file_is_answered_from_the_memory_and_a_changed_one_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::copy(fixture("tests/fixtures/forgot/eval_claude.jsonl"), &path).unwrap();
    let data = dir.path().join("data");
    let counted = at_risk_count(&path, 0, Some(&data)).unwrap();
    assert!(counted.0 > 0, "{counted:?}");
    assert_eq!(counted, (forgot_count(&path, 0), false));
    let mut entry = memory_entry(&data, &path).unwrap();
    assert_eq!(entry.stamp, Stamp::of(&path, 0).unwrap());
    assert_eq!(entry.count, counted.0);
    entry.count = 999;
    save(
        &data,
        load(&data),
        path.to_string_lossy().into_owned(),
        entry,
    )
    .unwrap();
    assert_eq!(at_risk_count(&path, 0, Some(&data)), Some((999, false)));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"progress\"}\n").unwrap();
    drop(f);
    assert_eq!(
        at_risk_count(&path, 0, Some(&data)),
        Some((forgot_count(&path, 0), false))
    );
    // A memory written by another version, or not ours, is empty.
    std::fs::write(data.join(MEMORY_FILE), b"not json").unwrap();
    assert!(memory_entry(&data, &path).is_none());
}

/// The lines of a fixture, each line's `parentUuid` set to the `uuid` of the line before
/// that had one, as Claude Code writes them (the fixtures were trimmed of lines, which
/// broke their chains); a compaction's boundary keeps its null parent.
fn chained_again(text: &str) -> Vec<String> {
    let mut last: Option<String> = None;
    text.lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(uuid) = v.get("uuid").and_then(|u| u.as_str()).map(str::to_string) else {
                return line.to_string();
            };
            if !v.get("parentUuid").is_some_and(serde_json::Value::is_null) {
                v["parentUuid"] = last.clone().map_or(serde_json::Value::Null, Into::into);
            }
            last = Some(uuid);
            v.to_string()
        })
        .collect()
}

/// What the status line's count does, step by step over a file written `step` lines at a
/// time: the count carried on from the previous run equals the count of the whole tail
/// (and `forgot::at_risk`'s), and so does what it remembers for the next run. Returns how
/// many runs carried on.
fn carry_on_through(lines: &[String], step: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut known: Option<(u64, resume::Resume)> = None;
    let mut carried = 0;
    let mut n = 0;
    while n < lines.len() {
        n = (n + step).min(lines.len());
        std::fs::write(&path, lines[..n].join("\n") + "\n").unwrap();
        let from = tail_start(&path);
        let mut file = std::fs::File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        let (count, cut, whole) = count_tail(&mut file, len, from).unwrap();
        assert!(!cut);
        assert_eq!(count, forgot_count(&path, from), "line {n}");
        if let Some((was_from, r)) = &known
            && *was_from == from
            && let Some((resumed, state)) = resume::go_on(&mut file, len, r)
        {
            assert_eq!(resumed, count, "line {n}");
            assert_eq!(Some(&state), whole.as_ref(), "line {n}");
            carried += 1;
        }
        known = whole.map(|r| (from, r));
    }
    carried
}

/// On the sessions the real Claude Code wrote (2.1.332 as it wrote it; the planted-facts
/// and plan runs chained again), a line at a time and a few at a time: the carried count is
/// the whole tail's count at every step, through task documents read by a call whose result
/// comes a run later, plans replaced by newer ones, and compactions (a count afresh).
#[test]
fn the_count_carried_on_equals_the_whole_tails_count_at_every_line() {
    let (mut runs, mut total) = (0, 0);
    for (name, rechain) in [
        ("tests/fixtures/sessions/claude_code_2_1_332.jsonl", false),
        ("tests/fixtures/forgot/eval_claude.jsonl", true),
        ("tests/fixtures/forgot/eval_claude_plan.jsonl", true),
        ("tests/fixtures/forgot/claude_planted.jsonl", true),
        ("tests/fixtures/forgot/claude_preserved.jsonl", true),
    ] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let lines = if rechain {
            chained_again(&text)
        } else {
            text.lines().map(str::to_string).collect()
        };
        for step in [1, 3] {
            let carried = carry_on_through(&lines, step);
            println!(
                "{name} step {step}: {carried} of {} carried on",
                lines.len() / step
            );
            runs += lines.len() / step;
            total += carried;
        }
    }
    // Most runs carry on (a compaction, and the runs before the first line of a chain,
    // count afresh).
    assert!(total * 3 >= runs * 2, "{total} of {runs}");
}

/// The facts are those of many lines: the memory lets a run that finds one line more count
/// that line only, and its count is the whole tail's.
#[test]
fn a_run_after_one_more_line_counts_on_from_the_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text =
        std::fs::read_to_string(fixture("tests/fixtures/forgot/eval_claude_plan.jsonl")).unwrap();
    let lines = chained_again(&text);
    let (head, rest) = lines.split_at(lines.len() - 4);
    std::fs::write(&path, head.join("\n") + "\n").unwrap();
    let data = dir.path().join("data");
    let from = tail_start(&path);
    at_risk_count(&path, from, Some(&data)).unwrap();
    for line in rest {
        let before = memory_entry(&data, &path).unwrap().resume.unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()).unwrap();
        drop(f);
        let counted = at_risk_count(&path, from, Some(&data)).unwrap();
        assert_eq!(counted, (forgot_count(&path, from), false));
        let after = memory_entry(&data, &path).unwrap().resume.unwrap();
        assert_eq!(after.upto, std::fs::metadata(&path).unwrap().len());
        assert!(after.upto > before.upto);
    }
}

/// Bytes counted before that changed (a file rewritten in place, same length or longer)
/// are not carried on from: the tail is counted whole.
#[test]
fn a_rewritten_file_is_counted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text = std::fs::read_to_string(fixture("tests/fixtures/forgot/eval_claude.jsonl")).unwrap();
    let lines = chained_again(&text);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let from = tail_start(&path);
    let mut file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (_, _, state) = count_tail(&mut file, len, from).unwrap();
    let state = state.unwrap();
    // The last line made another one of the same length.
    let mut again = lines.clone();
    let last = again.len() - 1;
    again[last] = again[last].replacen("assistant", "assistanT", 1);
    assert_ne!(again[last], lines[last]);
    std::fs::write(&path, again.join("\n") + "\n").unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    assert!(resume::go_on(&mut file, len, &state).is_none());
    // Unchanged, it is carried on from (with nothing new).
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    assert!(resume::go_on(&mut file, len, &state).is_some());
}

/// `line` (an assistant line with one TodoWrite call) as another call setting `todos`.
fn plan_line(line: &str, n: usize, todos: serde_json::Value) -> String {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["uuid"] = format!("plan-{n}").into();
    v["message"]["id"] = format!("msg_plan_{n}").into();
    v["message"]["content"][0]["id"] = format!("toolu_plan_{n}").into();
    v["message"]["content"][0]["input"]["todos"] = todos;
    v.to_string()
}

/// A plan set after the count was remembered supersedes the remembered one's pending items:
/// the carried count drops them, as a count of the whole tail does.
#[test]
fn a_newer_plan_replaces_the_remembered_pending_items() {
    let text =
        std::fs::read_to_string(fixture("tests/fixtures/forgot/eval_claude_plan.jsonl")).unwrap();
    let plan = text
        .lines()
        .find(|l| l.contains(r#""name":"TodoWrite","input""#))
        .unwrap();
    let item = |content: &str, status: &str| serde_json::json!({"content": content, "status": status, "activeForm": content});
    let mut lines = chained_again(&text);
    let first = plan_line(
        plan,
        1,
        serde_json::json!([
            item("Add the cache tests to make test", "in_progress"),
            item("Document the cache in README.md", "pending")
        ]),
    );
    let second = plan_line(
        plan,
        2,
        serde_json::json!([
            item("Add the cache tests to make test", "completed"),
            item("Write the changelog entry for the cache", "pending")
        ]),
    );
    lines.push(first);
    lines.push(second);
    let mut lines = chained_again(&lines.join("\n"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let second = lines.pop().unwrap();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let from = tail_start(&path);
    let mut file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (before, _, state) = count_tail(&mut file, len, from).unwrap();
    lines.push(second);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (carried, _) = resume::go_on(&mut file, len, &state.unwrap()).unwrap();
    assert_eq!(carried, forgot_count(&path, from));
    // Two pending items gave way to one.
    assert_eq!(carried + 1, before);
}

/// The status line after each line Claude Code appends, through calls, results and a
/// compaction, near the threshold: the line made from the memory (the count carried on) is
/// the line a first run makes (a fresh data dir: the whole tail counted).
#[test]
fn the_status_line_after_each_appended_line_is_a_first_runs_line() {
    use super::super::statusline::{StatusOptions, status_line};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text = std::fs::read_to_string(fixture("tests/fixtures/forgot/eval_claude.jsonl")).unwrap();
    let lines = chained_again(&text);
    let input = format!(
        r#"{{"transcript_path":{:?},"model":{{"id":"claude-sonnet-4-6","display_name":"Sonnet 4.6"}},"context_window":{{"context_window_size":200000,"current_usage":{{"input_tokens":150000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}}}}"#,
        path.to_string_lossy()
    );
    let data = dir.path().join("data");
    fn options(d: &Path) -> StatusOptions<'_> {
        StatusOptions {
            max_width: 200,
            data_dir: Some(d),
            ..StatusOptions::default()
        }
    }
    let mut shown = std::collections::BTreeSet::new();
    for n in 1..=lines.len() {
        std::fs::write(&path, lines[..n].join("\n") + "\n").unwrap();
        let carried = status_line(&input, &options(&data));
        let fresh = tempfile::tempdir().unwrap();
        assert_eq!(
            carried,
            status_line(&input, &options(fresh.path())),
            "line {n}"
        );
        shown.insert(carried);
    }
    // The count changed along the way, and the compaction was met.
    assert!(
        shown.iter().filter(|l| l.contains("at risk")).count() >= 3,
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|l| l.contains("1 compaction")),
        "{shown:#?}"
    );
    // The memory carried on at the end (the last lines came after the compaction).
    let entry = memory_entry(&data, &path).unwrap();
    assert_eq!(
        entry.resume.unwrap().upto,
        std::fs::metadata(&path).unwrap().len()
    );
}

/// A tail longer than the cap is counted from the first line within the cap's last bytes
/// ("N+"), and goes on from there: each carried count is the count of the bytes from that
/// line to the end, still cut.
#[test]
fn a_cut_tail_goes_on_from_where_its_count_started() {
    let text =
        std::fs::read_to_string(fixture("tests/fixtures/forgot/eval_claude_plan.jsonl")).unwrap();
    let original: Vec<&str> = text.lines().collect();
    let boundary = original
        .iter()
        .position(|l| l.contains("compact_boundary"))
        .unwrap();
    // Injected lines (passed over unparsed) after the compaction's summary, past the cap.
    let filler = |n: usize| {
        format!(
            r#"{{"type":"attachment","attachment":{{"type":"file","content":"{}"}},"uuid":"filler-{n}","parentUuid":"x"}}"#,
            "y".repeat(1 << 20)
        )
    };
    let mut lines: Vec<String> = original[..boundary + 2]
        .iter()
        .map(|l| l.to_string())
        .collect();
    lines.extend((0..(TAIL_CAP >> 20) as usize + 1).map(filler));
    lines.extend(original[boundary + 2..].iter().map(|l| l.to_string()));
    let lines = chained_again(&lines.join("\n"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let (head, rest) = lines.split_at(lines.len() - 6);
    std::fs::write(&path, head.join("\n") + "\n").unwrap();
    let from = tail_start(&path);
    let mut file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let (count, cut, state) = count_tail(&mut file, len, from).unwrap();
    let mut state = state.unwrap();
    assert!(cut && state.cut && state.start > from);
    assert_eq!(count, forgot_count(&path, state.start));
    let start = state.start;
    let mut counts = vec![count];
    for line in rest {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()).unwrap();
        drop(f);
        let mut file = std::fs::File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        let (n, next) = resume::go_on(&mut file, len, &state).unwrap();
        assert_eq!(n, forgot_count(&path, start));
        assert!(next.cut && next.start == start);
        counts.push(n);
        state = next;
    }
    assert!(counts.last() > counts.first(), "{counts:?}");
}
