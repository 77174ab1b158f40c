//! bash: output caps, stderr after stdout, exit codes.

use super::*;

#[tokio::test]
async fn huge_output_is_capped_exactly_and_quickly() {
    let f = fixture();
    let cap = ToolLimits::default().output_cap_chars;
    let start = Instant::now();
    let (content, is_error) = f.bash("seq 1 2000000").await;
    let elapsed = start.elapsed();
    assert!(!is_error);
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");

    let full: String = (1..=2_000_000).map(|i| format!("{i}\n")).collect();
    let kept: String = full.chars().take(cap).collect();
    let note = format!("\n[output truncated: {} chars cut]", full.len() - cap);
    assert_eq!(content.chars().count(), cap + note.chars().count());
    assert_eq!(content, format!("{kept}{note}"));
}

#[tokio::test]
async fn small_cap_counts_stdout_and_stderr() {
    let f = fixture();
    let limits = ToolLimits {
        output_cap_chars: 5,
        ..ToolLimits::default()
    };
    let (content, is_error) = f
        .bash_with("printf 'abcdefgh'; printf 'XYZ' >&2; exit 4", &limits)
        .await;
    assert!(is_error);
    // stdout (8) + separator newline (1) + stderr (3) = 12 chars, 5 kept.
    assert_eq!(
        content,
        "abcde\n[output truncated: 7 chars cut]\n[exit code: 4]"
    );
}

#[tokio::test]
async fn stderr_is_captured_after_stdout() {
    let f = fixture();
    assert_eq!(
        f.bash("echo out; echo err >&2").await,
        ("out\nerr\n".to_string(), false)
    );
    assert_eq!(
        f.bash("printf out; printf err >&2").await,
        ("out\nerr".to_string(), false)
    );
    assert_eq!(
        f.bash("echo only-err >&2").await,
        ("only-err\n".to_string(), false)
    );
}

#[tokio::test]
async fn nonzero_exit_code_is_reported() {
    let f = fixture();
    assert_eq!(
        f.bash("echo hi; exit 3").await,
        ("hi\n[exit code: 3]".to_string(), true)
    );
    assert_eq!(
        f.bash("printf hi; exit 1").await,
        ("hi\n[exit code: 1]".to_string(), true)
    );
    assert_eq!(f.bash("exit 2").await, ("[exit code: 2]".to_string(), true));
    assert_eq!(
        f.bash("kill -9 $$").await,
        ("[killed by signal 9]".to_string(), true)
    );
}

#[tokio::test]
async fn invalid_utf8_is_replaced() {
    let f = fixture();
    assert_eq!(
        f.bash(r"printf 'a\377b\303'").await,
        ("a\u{FFFD}b\u{FFFD}".to_string(), false)
    );
}
