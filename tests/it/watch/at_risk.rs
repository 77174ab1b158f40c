//! `ctxlab watch --json` near the threshold: on the real Claude Code session of the forgot
//! evaluation, one more call within `--at-risk-within` of the compaction threshold brings
//! an `at_risk` event with the facts since the compaction and a ready `/compact` focus; with
//! `--at-risk-within 0`, none.

use std::path::Path;
use std::time::Duration;

use super::follow_json::{Watch, event, is, line};

const FIXTURE: &str = "tests/fixtures/forgot/eval_claude.jsonl";

/// The fixture's first assistant line again, under a new uuid: one more call.
fn one_more_call() -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    text.lines()
        .find(|l| l.contains("\"type\":\"assistant\""))
        .unwrap()
        .replacen("\"uuid\":\"", "\"uuid\":\"x", 1)
}

fn follow(within: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &path).unwrap();
    let p = path.to_str().unwrap();
    let mut w = Watch::start(
        &["--json", "--poll-ms", "50", "--at-risk-within", within, p],
        dir.path(),
        &[],
    );
    w.until("the summary", is("summary"));
    line(&path, &one_more_call());
    w.until("the call", is("call"));
    w.drain(Duration::from_millis(500));
    w.interrupt()
}

#[test]
fn near_the_threshold_the_facts_at_risk_and_a_focus() {
    // The fixture compacted by hand, which says nothing of where Claude Code compacts by
    // itself (167,000 of its window): a distance that reaches from its calls to there.
    let seen = follow("200000");
    let risk = seen
        .iter()
        .find(|v| event(v) == "at_risk")
        .unwrap_or_else(|| panic!("no at_risk in {seen:#?}"));
    assert!(risk["total"].as_u64().unwrap() >= 1);
    let focus = risk["claude_compact"].as_str().unwrap();
    assert!(focus.starts_with("/compact Keep: "), "{focus}");
    assert!(focus.contains("E501"), "{focus}");
    assert_eq!(risk["facts"][0]["kind"], "constraint");
}

#[test]
fn at_risk_within_zero_says_nothing() {
    let seen = follow("0");
    assert!(!seen.iter().any(|v| event(v) == "at_risk"), "{seen:#?}");
}

/// The workbench's live view shows the list the follower read, in `watch --text`'s words
/// (`forgot::at_risk::risk_lines`), the focus text whole; a list from a follower that was
/// replaced is not shown.
#[test]
fn the_live_view_draws_the_list_watch_text_prints() {
    use super::live_view::{following, start};
    use crate::support::screen;
    use ctxlab::forgot::at_risk::{at_risk, risk_lines};
    use ctxlab::tui::Msg;
    use ctxlab::tui::live::LiveMsg;

    let session =
        ctxlab::session::load_session(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE))
            .unwrap();
    let risk = at_risk(&session, 5);
    let (mut a, id) = following(false);
    start(&mut a, id);
    a.update(Msg::Live(LiveMsg::AtRisk {
        id: id + 1,
        risk: Box::new(risk.clone()),
    }));
    assert!(!screen(&mut a, 120, 40).contains("AT RISK"));
    a.update(Msg::Live(LiveMsg::AtRisk {
        id,
        risk: Box::new(risk.clone()),
    }));
    let text = screen(&mut a, 120, 40);
    let said = risk_lines(&risk, None);
    let head = said[0].split(" (").next().unwrap();
    assert!(text.contains(head), "{head}\n{text}");
    assert!(text.contains("Claude Code: /compact Keep:"), "{text}");
    assert!(text.contains("E501"), "{text}");
}

/// Where a follower of `path` puts the last compaction and how far it has read, after
/// reading the lines already there, or only up to the line that starts at `stop_at`.
fn seen_until(path: &Path, stop_at: Option<u64>) -> ctxlab::session::watch::since::LastCompaction {
    use ctxlab::session::watch::{Chosen, FollowOptions, WatchEvent, follow};
    use std::sync::atomic::AtomicBool;

    let mut last = ctxlab::session::watch::since::LastCompaction::default();
    let chosen = Chosen {
        path: path.to_path_buf(),
        why: "named".into(),
        scope: None,
    };
    let stop = AtomicBool::new(false);
    follow(chosen, &FollowOptions::default(), &stop, &mut |e| {
        last.see(&e);
        match (&e, stop_at) {
            (WatchEvent::Item { offset, .. }, Some(at)) => *offset < at,
            (WatchEvent::CaughtUp { .. }, _) => false,
            _ => true,
        }
    })
    .unwrap();
    last
}

/// The warning reads the file from the last compaction's line (`session::watch::since`),
/// not whole, so a follower's memory does not grow with the file (issue 39, item 5): the
/// follower's events say where that line starts, and the facts are those a whole read
/// finds, their messages numbered as it numbers them.
#[test]
fn the_warning_reads_from_the_last_compaction_and_finds_what_a_whole_read_finds() {
    use ctxlab::forgot::at_risk::{AtRisk, at_risk};

    for (fixture, marks) in [
        (FIXTURE, "\"subtype\":\"compact_boundary\""),
        (
            "tests/fixtures/forgot/eval_codex.jsonl",
            "\"type\":\"compacted\"",
        ),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut start = 0;
        let mut boundary = None;
        for l in text.split_inclusive('\n') {
            if l.contains(marks) {
                boundary = Some(start as u64);
            }
            start += l.len();
        }
        let boundary = boundary.unwrap();
        assert!(boundary > 0, "{fixture}");

        let last = seen_until(&path, None);
        assert_eq!(last.from(), boundary, "{fixture}");

        let since = last.read(&path).unwrap();
        assert!(!since.cut);
        let part = AtRisk::of_part(&since.session, 5, since.cut, since.first_index);
        let whole = at_risk(&ctxlab::session::load_session(&path).unwrap(), 5);
        assert!(whole.total > 0, "{fixture}");
        assert!(whole.top.iter().any(|f| f.message.is_some_and(|m| m > 0)));
        assert_eq!(part, whole, "{fixture}");
    }
}

/// A follower behind the file's end (a burst of lines it is still reading) warns about the
/// session as far as it has read, not as far as the file goes: the read stops at the end
/// of the line of the newest event (issue 39, item 5: a file that grew by 1 GB made every
/// warning read up to 64 MiB ahead of the follower, 246 MB and 45 s of CPU for 100 MB).
#[test]
fn the_warning_reads_no_further_than_the_follower_has_read() {
    use ctxlab::forgot::at_risk::AtRisk;

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(&path).unwrap();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|i| *i < text.len())
        .collect();
    let boundary = text.find("\"subtype\":\"compact_boundary\"").unwrap();
    // A line well after the compaction, with lines after it that hold more messages.
    let after: Vec<usize> = starts.iter().copied().filter(|s| *s > boundary).collect();
    let stop_at = after[after.len() / 2];
    let end = starts.iter().copied().find(|s| *s > stop_at).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("prefix.jsonl");
    std::fs::write(&prefix, &text[..end]).unwrap();

    let behind = seen_until(&path, Some(stop_at as u64)).read(&path).unwrap();
    let there = seen_until(&prefix, None).read(&prefix).unwrap();
    let whole = seen_until(&path, None).read(&path).unwrap();
    assert!(
        whole.session.messages.len() > there.session.messages.len(),
        "the test needs lines after the stop"
    );
    assert_eq!(
        behind.session.messages.len(),
        there.session.messages.len(),
        "read past the follower"
    );
    let risk = |s: &ctxlab::session::watch::since::Since| {
        AtRisk::of_part(&s.session, 5, s.cut, s.first_index)
    };
    assert_eq!(risk(&behind), risk(&there));
}
