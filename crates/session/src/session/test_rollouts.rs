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
