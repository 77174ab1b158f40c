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
