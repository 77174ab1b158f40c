//! bash: process groups, timeouts and cancellation.

use super::*;

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let f = fixture();
    let limits = bash_timeout_ms(300);
    let start = Instant::now();
    let (content, is_error) = f
        .bash_with("sleep 30 & echo $! > bg.pid; sleep 30", &limits)
        .await;
    assert!(is_error);
    assert_eq!(
        content,
        "Command timed out after 300 ms and was killed (with its whole process group)"
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let bg = read_pid(&f.root().join("bg.pid"));
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn timeout_kills_pipeline_members() {
    let f = fixture();
    let limits = bash_timeout_ms(300);
    let start = Instant::now();
    let (content, is_error) = f
        .bash_with("(echo $BASHPID > left.pid; exec sleep 1000) | cat", &limits)
        .await;
    assert!(is_error, "{content}");
    assert!(content.starts_with("Command timed out"), "{content}");
    assert!(start.elapsed() < Duration::from_secs(3));
    let left = read_pid(&f.root().join("left.pid"));
    assert!(
        wait_until_dead(left).await,
        "pipeline sleep {left} survived"
    );
}

#[tokio::test]
async fn cancel_kills_the_group_and_returns_quickly() {
    let f = fixture();
    let ws = f.ws.clone();
    let cancel = CancellationToken::new();
    let task = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            run_tool(
                &ws,
                "bash",
                &json!({"command": "sleep 30 & echo $! > bg.pid; sleep 30"}),
                &ToolLimits::default(),
                &cancel,
            )
            .await
        })
    };
    let pid_file = f.root().join("bg.pid");
    wait_for_file(&pid_file).await;
    let bg = read_pid(&pid_file);
    let start = Instant::now();
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("run_tool did not return promptly after cancel")
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(
        outcome,
        ToolOutcome::Output {
            content: "Cancelled by user".into(),
            is_error: true
        }
    );
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn cancelled_before_start_runs_nothing() {
    let f = fixture();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = run_tool(
        &f.ws,
        "bash",
        &json!({"command": "touch ran"}),
        &ToolLimits::default(),
        &cancel,
    )
    .await;
    assert_eq!(
        outcome,
        ToolOutcome::Output {
            content: "Cancelled by user".into(),
            is_error: true
        }
    );
    assert!(!f.root().join("ran").exists());
}

#[tokio::test]
async fn background_jobs_are_killed_when_the_command_finishes() {
    let f = fixture();
    let start = Instant::now();
    let r = f.bash("sleep 30 & echo $! > bg.pid; echo done").await;
    assert_eq!(r, ("done\n".to_string(), false));
    // Without the group kill, the background sleep would hold stdout open until the timeout.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let bg = read_pid(&f.root().join("bg.pid"));
    assert!(wait_until_dead(bg).await, "background sleep {bg} survived");
}

#[tokio::test]
async fn bash_runs_in_the_workspace_root_with_empty_stdin() {
    let f = fixture();
    let r = f.bash("pwd").await;
    assert_eq!(r.0.trim_end(), f.root().to_str().unwrap());
    // `cat` would block forever on an inherited stdin.
    let r = f.bash("cat").await;
    assert_eq!(r, ("(no output)".to_string(), false));
}
